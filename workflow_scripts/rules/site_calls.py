"""The `site_calls` rule: base-model scores + annotated sites -> site-level re-scored calls.

Candidates (the base model's local score maxima at or above sites.floor) are called out of fold
over gene clusters by four predictors: the base model at calling.threshold, the base model with
a threshold per splice type tuned on the training folds, a gradient-boosted tree on the donor
and acceptor score profiles, and the k-mer baseline, a logistic regression on the sequence around
the candidate (window.flank nt each side, 1..evaluate.kmer_max_k-mers: sites/kmer.py). Writes the
corrected-calls table, BED tracks of the tree's and the base model's calls, and site_metrics.json
(metrics per predictor and splice type, bootstrap intervals of the differences, the answer in a
sentence). `--config` holds the `calling` section (threshold, consensus_window:
calling/contract.SITE_CALLS_KEYS), the `sites` section, window.flank and evaluate's kmer_max_k
(with sites.model also its batch_size). With sites.model, `--fold-windows`, `--fold-manifest`,
`--fold-weights`, `--fold-model-config` and `--fold-predictions` name the files of the runs
site_candidates_fold1..k, one per fold in fold order (layout.FoldRunFiles), whose deep model
is one more predictor, `errorseq` (sites/errorseq.py), with its BED track `--out-errorseq-bed`
(without sites.model, a track line that says so). `--out-corrected-bed` and
`--out-corrected-gff3`: the calls of the predictor site_metrics.json recommends, as BED and GFF3.
Always writes the folder `--out-rescorer`, the tree and thresholds fitted on all of this genome
(and with sites.model the runs' models) as plain data, with where they came from (the run's
provenance: the base model and its files' sha256) and what they reached here; with
sites.transfer, `--transfer` names another genome's, checked whole before any other work and
applied unchanged (sites/rescorer.py, sites/rescorer_files.py, sites/deep_transfer.py), its base
model first compared with this run's: the weights the score shards' records name, or with
calling.start scores `--made-by`, the weights that made the scores table (sites/base_match.py).
docs/sites.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import PurePath

import polars as pl

from workflow_scripts.config.stages.site_calls import STAGE
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.evaluation.provenance import DeclaredInputs, base_model, errorseq_source
from workflow_scripts.evaluation.provenance import provenance as run_provenance
from workflow_scripts.io_utils import atomic_path, write_json, write_text
from workflow_scripts.layout import FoldRunFiles
from workflow_scripts.progress import Console, announce, duration
from workflow_scripts.sites.base_match import check_same_base, named_only
from workflow_scripts.sites.deep_transfer import read_deep_models, trained_models, transferred_probability
from workflow_scripts.sites.diagnostics import fp_vs_tp_line
from workflow_scripts.sites.inputs import folded_candidates, read_site_inputs
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.kmer import kmer_baseline
from workflow_scripts.sites.outputs import bed_text, call_tracks, corrected_calls
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    ERRORSEQ,
    SCORE_COLUMNS,
    TREE,
    OutOfFold,
    predict_out_of_fold,
)
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import Rescorer, fit_rescorer, with_transfer
from workflow_scripts.sites.rescorer_files import load_rescorer, save_rescorer
from workflow_scripts.sites.settings import SiteSettings

MODEL_OFF = "sites.model is off: no errorseq calls"
PROVENANCE_KEY = "errorseq_provenance"  # the corrected calls' parquet metadata


def fold_run_inputs(args: argparse.Namespace) -> list[FoldRunFiles]:
    """sites.model's runs from the `--fold-*` inputs (one path per fold each); [] when off."""
    columns = [getattr(args, f"fold_{field.name}") or [] for field in dataclasses.fields(FoldRunFiles)[1:]]
    if len({len(paths) for paths in columns}) > 1:
        raise InputError("command line", "--fold-*", "one path per fold run for each of them")
    return [FoldRunFiles(os.path.dirname(files[0]), *files) for files in zip(*columns, strict=True)]


def log(line: str) -> None:
    print(f"site_calls: {line}", file=sys.stderr, flush=True)


def write_outputs(args: argparse.Namespace, table: pl.DataFrame, report: dict, threshold: float) -> None:
    with atomic_path(args.out_calls) as tmp:
        table.write_parquet(tmp, metadata={PROVENANCE_KEY: json.dumps(report["provenance"])})
    tree_track = "errorseq gradient-boosted tree on the base model's score profiles, out of fold"
    write_text(args.out_tree_bed, bed_text(table, TREE, SCORE_COLUMNS[TREE], tree_track))
    base_track = f"the base model's calls at {threshold} (local maxima)"
    write_text(args.out_base_bed, bed_text(table, BASE_THRESHOLD, SCORE_COLUMNS[BASE_THRESHOLD], base_track))
    if args.fold_weights:  # sites.model
        track = "errorseq's deep model on the sequence and the score profiles, out of fold"
        write_text(args.out_errorseq_bed, bed_text(table, ERRORSEQ, SCORE_COLUMNS[ERRORSEQ], track))
    else:
        write_text(args.out_errorseq_bed, f'track name="{ERRORSEQ}" description="{MODEL_OFF}"\n')
    write_json(args.out_metrics, report)


def write_corrected_tracks(
    args: argparse.Namespace, table: pl.DataFrame, predictor: str, chrom_lengths: dict[str, int]
) -> None:
    """The calls of the predictor site_metrics.json recommends (sites/recommend.py) as BED and
    GFF3 (sites/outputs.call_tracks), each where its flag is given."""
    description = f"{predictor}: the calls site_metrics.json recommends on this genome"
    bed, gff3, outside = call_tracks(table, predictor, chrom_lengths, description)
    if args.out_corrected_bed:
        write_text(args.out_corrected_bed, bed)
    if args.out_corrected_gff3:
        write_text(args.out_corrected_gff3, gff3)
    if outside:
        log(
            f"{outside} {predictor} calls at a chromosome end, with no room for an intron, left out of the GFF3"
        )


@dataclass(frozen=True)
class Transfer:
    """sites.transfer: another genome's re-scorer, checked, with its deep models built."""

    path: str
    rescorer: Rescorer
    models: list  # inference/predict_calls.TrainedModel of each fold ([]: the source ran no sites.model)


def read_transfer(path: str, settings: SiteSettings, batch_size: int, given: DeclaredInputs) -> Transfer:
    """Every part of the re-scorer checked before any other work (sites/rescorer_files.py), and
    its base model against this run's (sites/base_match.py)."""
    rescorer = load_rescorer(path, settings)
    here = base_model(given)  # the weights the score shards record, or those that made the scores
    if not check_same_base(rescorer.source.get("base_model"), here, path):
        log("transfer: the source's or this run's base-model weights are not known: not compared")
    models = trained_models(rescorer.deep, batch_size, path) if rescorer.deep is not None else []
    log(f"transfer: the re-scorer of {rescorer.source['source']} ({path}) checked, {len(models)} deep models")
    return Transfer(path, rescorer, models)


def transferred(transfer: Transfer, found, inputs, predictions: OutOfFold):
    """sites.transfer: the predictions with the other genome's predictors, and what to report."""
    rescorer = transfer.rescorer
    facts = {"file": transfer.path, **rescorer.source, "source_thresholds": rescorer.thresholds}
    deep = None
    if rescorer.deep is not None:
        began = time.perf_counter()
        deep = transferred_probability(
            transfer.models,
            rescorer.deep.flank,
            found,
            inputs,
            transfer.path,
            "site_calls: transfer: deep models",
        )
        facts["source_models"] = len(transfer.models)
        log(
            f"transfer: {len(transfer.models)} deep models on {len(deep):,} candidates "
            f"in {time.perf_counter() - began:.1f} s"
        )
    return with_transfer(predictions, found, rescorer, deep), facts


def source_facts(found, inputs) -> dict:
    """What the re-scorer says of the genome it was fitted on."""
    chromosomes = sorted(set(found.sites["chrom"].to_list()))
    shown = ", ".join(chromosomes[:3]) + (f" and {len(chromosomes) - 3} more" if len(chromosomes) > 3 else "")
    return {
        "source": shown,
        "source_sites": found.sites.height,
        "source_candidates": found.table.height,
        "source_scores": [PurePath(path).name for path in inputs.scores],  # names: no machine path
    }


def results_summary(report: dict) -> dict:
    """What the re-scorer's predictors reached on their own genome (site_metrics.json)."""
    whole = report["whole_region"]
    return {
        "answer": report["answer"],
        "counts": report["counts"],
        "calls": {name: metrics["overall"] for name, metrics in report["calls"].items()},
        "whole_region": {
            "scored": whole["scored"],
            "calls": {name: metrics["overall"] for name, metrics in whole["calls"].items()},
            "false_positives_by_location": whole["false_positives_by_location"],
        },
        "recommended": report["recommended"],
    }


def with_provenance(rescorer: Rescorer, provenance: dict | None) -> Rescorer:
    """The source facts with the run's base model (provenance.json's base_model: its source,
    files by name with sha256 and what they tell of it, no machine path; null in a job run by hand)."""
    base = provenance.get("base_model") if provenance else None
    return replace(rescorer, source={**rescorer.source, "base_model": named_only(base)})


def rescorer_packages() -> dict:
    """errorseq's version and commit and the versions of what reads and writes a re-scorer."""
    versions: dict[str, object] = {"errorseq": errorseq_source(), "python": platform.python_version()}
    for package in ("numpy", "scikit-learn", "torch", "safetensors"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def errorseq_predictions(
    fold_runs: list[FoldRunFiles], batch_size: int, found, items: Items, predictions: OutOfFold
):
    """sites.model: the errorseq predictor from the runs' models (sites/errorseq.py)."""
    from workflow_scripts.sites.errorseq import read_fold_predictions, with_errorseq

    began = time.perf_counter()
    runs = [read_fold_predictions(files, batch_size) for files in fold_runs]
    merged = with_errorseq(predictions, found, items, runs)
    log(f"errorseq: {len(runs)} runs' test and val predictions in {time.perf_counter() - began:.1f} s")
    return merged


def note(console: Console, line: str) -> None:
    """A stage's line (a chromosome's candidates, a fold's trees with the time they have left, a
    fold's k-mer fit): to the log, and to the console where a line is due."""
    log(line)
    console.progress(lambda: f"site_calls: {line}")


def main(argv: list[str] | None = None) -> None:
    args, cfg = STAGE.parse(argv)
    settings = SiteSettings.from_config(cfg.calling, cfg.sites)
    batch_size: int = cfg.evaluate.batch_size  # the deep models' (sites.model, sites.transfer)
    given = DeclaredInputs(  # where the data came from: the records of the declared inputs
        genome_record=args.genome_record,
        annotation_summary=args.annotation_summary,
        shard_records=args.score_records or (),
        scores=() if args.score_records else args.scores,
        made_by=args.made_by or (),  # calling.start scores: the weights that made them
    )
    transfer = read_transfer(args.transfer, settings, batch_size, given) if args.transfer else None
    console = Console(args.console_fd)
    announce(
        console, "site_calls", f"re-scoring the base model's calls out of fold over {settings.folds} folds"
    )
    began = time.perf_counter()
    inputs = read_site_inputs(
        args.scores, args.sites, args.genes, args.gene_clusters, args.genome, args.regions
    )
    found = folded_candidates(inputs, settings, progress=lambda line: note(console, line))
    items = Items.from_candidates(found)
    log(
        f"{found.table.height:,} candidates, {found.sites.height:,} scored sites ({int(found.missed.sum()):,} missed)"
    )
    predictions = predict_out_of_fold(found, items, settings, progress=lambda line: note(console, line))
    predictions, kmer = kmer_baseline(
        predictions,
        found,
        items,
        inputs.genome,
        cfg.window,
        cfg.evaluate,
        progress=lambda line: note(console, line),
    )
    fold_runs = fold_run_inputs(args)  # sites.model's runs
    if fold_runs:
        predictions = errorseq_predictions(fold_runs, batch_size, found, items, predictions)
    deep = read_deep_models(fold_runs) if fold_runs else None
    rescorer = fit_rescorer(found, items, predictions, settings, source_facts(found, inputs), deep)
    moved = None
    if transfer is not None:
        predictions, moved = transferred(transfer, found, inputs, predictions)
    unscored = inputs.sites.height - found.sites.height
    report = site_report(
        found, items, predictions, settings, unscored, moved, kmer, scored_regions=inputs.regions is not None
    )
    report["provenance"] = run_provenance(given, cfg.given())
    table = corrected_calls(found, predictions)
    write_outputs(args, table, report, settings.threshold)
    write_corrected_tracks(args, table, report["recommended"]["predictor"], inputs.genome.chrom_lengths())
    rescorer = with_provenance(rescorer, report.get("provenance"))
    save_rescorer(rescorer, args.out_rescorer, rescorer_packages(), results_summary(report))
    log(fp_vs_tp_line(report["diagnostics"]["fp_vs_tp"]))
    print(f"{report['answer']}; {time.perf_counter() - began:.1f} s", file=sys.stderr)
    console.say(
        f"site_calls: done in {duration(time.perf_counter() - began)}: {args.out_metrics} "
        "(its table and answer close the run)"
    )


if __name__ == "__main__":
    run_cli(main)
