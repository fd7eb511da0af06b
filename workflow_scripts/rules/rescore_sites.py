"""The `rescore_sites` rule (calling.start regions): the base model's scores over regions of a genome
without an annotation + another genome's re-scorer -> corrected calls (sites/rescore.py).

Reads the scores tables (every score_base_model shard), the regions table (target_regions), the
genome index and `--transfer`, sites.transfer's re-scorer folder, checked whole before any other
work (sites/rescorer_files.py). Writes the calls of every candidate (`--out-calls`, parquet), the
corrected calls as BED (`--out-bed`) and GFF3 (`--out-gff3`; sites/gff3.py) and `--out-report`,
a JSON that says there are no metrics here and where the calls came from. `--config` holds the
sections calling (threshold, consensus_window), sites (floor, peak_radius, flank: the re-scorer's
features) and evaluate (batch_size: its deep models). docs/sites.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from workflow_scripts.config.stage import StageConfig
from workflow_scripts.config.stages.rescore_sites import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.evaluation.provenance import DeclaredInputs, base_model, errorseq_source
from workflow_scripts.evaluation.provenance import provenance as run_provenance
from workflow_scripts.io_utils import atomic_path, sha256_file, write_json, write_text
from workflow_scripts.progress import Console, announce
from workflow_scripts.sites.base_match import check_same_base
from workflow_scripts.sites.deep_transfer import trained_models, transferred_probability
from workflow_scripts.sites.outputs import call_tracks
from workflow_scripts.sites.predictors import BASE_THRESHOLD
from workflow_scripts.sites.rescore import (
    NO_METRICS,
    NO_RESCORER,
    answer,
    call_counts,
    corrected_choice,
    region_candidates,
    region_inputs,
    rescored_calls,
)
from workflow_scripts.sites.rescore_report import calls_by_region, names_only, report_html, source_evidence
from workflow_scripts.sites.rescorer import Rescorer
from workflow_scripts.sites.rescorer_files import MANIFEST, load_rescorer
from workflow_scripts.sites.settings import SiteSettings

PROVENANCE_KEY = "errorseq_provenance"  # the calls' parquet metadata, as site_calls writes it


def log(line: str, console: Console | None = None) -> None:
    """A line in the log, and on the console where one is due."""
    print(f"rescore_sites: {line}", file=sys.stderr, flush=True)
    if console is not None:
        console.progress(lambda: f"rescore_sites: {line}")


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    settings = SiteSettings.from_config(cfg.calling, cfg.sites)
    began = time.perf_counter()
    console = Console(paths.console_fd)
    given = DeclaredInputs(  # where the data came from: the records of the declared inputs
        genome_record=paths.genome_record,
        shard_records=paths.score_records or (),
        scores=() if paths.score_records else paths.scores,
    )
    if not paths.transfer:
        write_outputs(paths, cfg, settings, given, None, console, began)
        return
    announce(console, "rescore_sites", f"calling the scored regions' sites with {paths.transfer}")
    rescorer = load_rescorer(paths.transfer, settings)
    if not check_same_base(rescorer.source.get("base_model"), base_model(given), paths.transfer):
        log("the re-scorer's or this run's base-model weights are not known: not compared")
    write_outputs(paths, cfg, settings, given, rescorer, console, began)


def write_outputs(
    paths: argparse.Namespace,
    cfg: StageConfig,
    settings: SiteSettings,
    given: DeclaredInputs,
    rescorer: Rescorer | None,
    console: Console,
    began: float,
) -> None:
    """Score the regions' candidates, call them with `rescorer` (None: the base alone), write every output."""
    if rescorer is None:
        announce(console, "rescore_sites", "calling the scored regions' sites with the base model alone")
        log(NO_RESCORER)
    models = (
        trained_models(rescorer.deep, cfg.evaluate.batch_size, paths.transfer)
        if rescorer and rescorer.deep
        else []
    )
    if rescorer is not None:
        log(
            f"the re-scorer of {rescorer.source.get('source')} ({paths.transfer}) checked, {len(models)} deep models"
        )
    inputs = region_inputs(paths.scores, paths.regions, paths.genome)
    found, scores_report = region_candidates(inputs, settings, progress=lambda line: log(line, console))
    tree = rescorer.probability(found.features) if rescorer is not None else None
    deep = None
    if rescorer is not None and rescorer.deep is not None:
        deep = transferred_probability(
            models, rescorer.deep.flank, found, inputs, paths.transfer, "rescore_sites: deep models", console
        )
    table = rescored_calls(found, settings.threshold, rescorer.thresholds if rescorer else {}, tree, deep)
    results: dict = {}
    predictor, why = BASE_THRESHOLD, NO_RESCORER
    if rescorer is not None:
        # checked by load_rescorer
        results = json.loads((Path(paths.transfer) / MANIFEST).read_text())["results"]
        predictor, why = corrected_choice(deep is not None, results)
    log(f"corrected calls: {predictor}: {why}")
    name = Path(paths.transfer).name if rescorer else None  # names, not this machine's paths
    description = f"{predictor}: " + (f"re-scorer {name} applied unchanged" if name else "no re-scorer")
    description += ", no annotation"
    bed, gff3, outside = call_tracks(table, predictor, inputs.genome.chrom_lengths(), description)
    region_nt = int((inputs.genes["end"] - inputs.genes["start"] + 1).sum())
    report = {
        "metrics": None,
        "why_no_metrics": NO_METRICS,
        "corrected_calls": {
            "predictor": predictor,
            "why": why,
            **call_counts(table)[predictor],
            "left_out_of_gff3": outside,
        },
        "calls": call_counts(table),
        "calls_by_region": calls_by_region(table, predictor),
        "recommendation": {"predictor": predictor, "why": why, "evidence": source_evidence(results)},
        "counts": {"regions": inputs.genes.height, "region_nt": region_nt, "candidates": table.height},
        "scores": scores_report,
        "rescorer": None
        if rescorer is None
        else {
            "name": name,
            "manifest_sha256": sha256_file(f"{paths.transfer}/{MANIFEST}"),
            "source": rescorer.source,
            "thresholds": {  # inf (no site of a type to tune on at the source): null
                kind: {t: None if math.isinf(v) else v for t, v in by_type.items()}
                for kind, by_type in rescorer.thresholds.items()
            },
            "deep_models": len(models),
        },
        "settings": settings.summary(),
        "errorseq": errorseq_source(),
        "provenance": run_provenance(given, cfg.given()),
    }
    report = names_only(report)
    report["answer"] = answer(predictor, table, inputs.genes.height, region_nt, rescorer is not None)
    with atomic_path(paths.out_calls) as tmp:
        table.write_parquet(tmp, metadata={PROVENANCE_KEY: json.dumps(report["provenance"])})
    write_text(paths.out_bed, bed)
    write_text(paths.out_gff3, gff3)
    write_json(paths.out_report, report)
    write_text(paths.out_html, report_html(report))
    print(f"rescore_sites: {report['answer']}; {time.perf_counter() - began:.1f} s", file=sys.stderr)
    console.say(f"rescore_sites: {report['answer']}")


if __name__ == "__main__":
    run_cli(main)
