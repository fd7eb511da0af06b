"""Re-scorers transferred onto a whole-region scan, measured on genes and over the whole region,
without refitting the scan's own predictors (issue 49).

    # a finished site_calls work directory that scanned whole regions (calling.regions with
    # calling.start annotation, docs/sites.md), then any re-scorer folders or builtin:<name>
    python -m benchmarks.whole_region_transfer runs/aaren_scan builtin:atha-chr1-openspliceai-arabidopsis \\
        runs/atha_scan/results/sites/rescorer --out transfer.json

The scan's candidates, folds and out-of-fold calls are read back (benchmarks/site_transfer/run_folder.py: refused
unless they are the ones its site_calls wrote); each re-scorer is checked whole and applied as
site_calls' `sites.transfer` applies it (sites/rescorer.with_transfer; its deep models through
sites/deep_transfer.py), so its figures are those a site_calls run with it would give, minus the
time to refit the trees and the k-mer baseline. For each: F1, precision, recall and calls of
`base_threshold`, `base_tuned` and the transferred predictors on genes (gene-cluster bootstrap)
and over the whole region (FP by location, 100-kb block bootstrap, sites/whole_region.py), each
transferred predictor against the base at its own threshold and against the source's thresholds.
`--out` writes {"run", "reports": [one per re-scorer, shaped as site_metrics.json's calls,
differences and whole_region]}: `python -m benchmarks.shipped_rescorers whole-region NAME` reads it.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.site_transfer.run_folder import SiteRun, read_site_run
from benchmarks.tables import print_table
from workflow_scripts.config.package_paths import resolve_package_paths
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json
from workflow_scripts.sites.deep_transfer import trained_models, transferred_probability
from workflow_scripts.sites.intervals import pair_differences
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    CALL_COLUMNS,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    OutOfFold,
)
from workflow_scripts.sites.rescorer import with_transfer
from workflow_scripts.sites.rescorer_files import load_rescorer
from workflow_scripts.sites.site_metrics import predictor_calls
from workflow_scripts.sites.whole_region import BLOCK_NT, by_blocks, false_positives_by_location

SHOWN = (BASE_THRESHOLD, BASE_TUNED, TRANSFER_BASE_TUNED, TRANSFER_TREE, TRANSFER_ERRORSEQ)


def log(line: str) -> None:
    print(f"whole_region_transfer: {line}", file=sys.stderr, flush=True)


def own_predictions(run: SiteRun) -> OutOfFold:
    """The scan's own out-of-fold calls, as its site_calls wrote them."""
    calls = {
        name: run.calls[column].to_numpy().astype(bool)
        for name, column in CALL_COLUMNS.items()
        if column in run.calls.columns and not name.startswith("transfer_")
    }
    tree = run.calls["tree_probability"].cast(float).fill_null(np.nan).to_numpy()
    return OutOfFold(tree_probability=tree, thresholds={}, calls=calls)


def resolved(path: str) -> str:
    return resolve_package_paths({"sites": {"transfer": path}})["sites"]["transfer"]


def transfer_report(run: SiteRun, path: str, replicates: int) -> dict:
    """One re-scorer on the scan: calls on genes and over the whole region, and its differences."""
    folder = resolved(path)
    rescorer = load_rescorer(folder, run.settings)
    deep = None
    if rescorer.deep is not None:
        models = trained_models(rescorer.deep, section_defaults("evaluate")["batch_size"], folder)
        deep = transferred_probability(models, rescorer.deep.flank, run.found, run.inputs, folder)
    predictions = with_transfer(own_predictions(run), run.found, rescorer, deep)
    calls = {name: predictions.calls[name] for name in SHOWN if name in predictions.calls}
    moved = [name for name in (TRANSFER_TREE, TRANSFER_ERRORSEQ) if name in calls]
    pairs = tuple((name, reference) for name in moved for reference in (TRANSFER_BASE_TUNED, BASE_THRESHOLD))
    pairs += ((TRANSFER_BASE_TUNED, BASE_THRESHOLD), (BASE_TUNED, BASE_THRESHOLD))
    seed, in_genes = run.settings.seed, run.items.in_genes()
    blocks = len(set(run.items.block.tolist())) if run.items.block is not None else 0
    whole = {
        "scored": "regions",
        "calls": {name: predictor_calls(run.items, called) for name, called in calls.items()},
        "false_positives_by_location": false_positives_by_location(run.items, calls),
        "differences": pair_differences(by_blocks(run.items), calls, pairs, replicates, seed),
        "bootstrap": {
            "replicates": replicates,
            "seed": seed,
            "resampled_unit": f"{BLOCK_NT // 1000}-kb genomic block",
            "blocks": blocks,
        },
    }
    return {
        "rescorer": path,
        "source": rescorer.source.get("source"),
        "counts": run.metrics["counts"],
        "calls": {name: predictor_calls(in_genes, called) for name, called in calls.items()},
        "differences": pair_differences(in_genes, calls, pairs, replicates, seed),
        "whole_region": whole,
    }


def cell(difference: dict) -> str:
    f1 = difference["overall"]["f1"]
    if f1["estimate"] is None:
        return "–"
    if f1["low"] is None:
        return f"{f1['estimate']:+.3f}"
    return f"{f1['estimate']:+.3f} [{f1['low']:+.3f}, {f1['high']:+.3f}]"


def print_report(report: dict) -> None:
    whole = report["whole_region"]
    rows = []
    for name, by_group in report["calls"].items():
        genes, everywhere = by_group["overall"], whole["calls"][name]["overall"]
        fp = whole["false_positives_by_location"][name]
        rows.append(
            [
                name,
                f"{genes['f1']:.3f}",
                f"{genes['fp']:,}",
                f"{everywhere['f1']:.3f}",
                f"{everywhere['precision']:.3f}",
                f"{everywhere['recall']:.3f}",
                f"{everywhere['tp'] + everywhere['fp']:,}",
                f"{fp['antisense']:,}",
                f"{fp['intergenic']:,}",
            ]
        )
    header = [
        "predictor",
        "F1 genes",
        "FP genes",
        "F1 whole",
        "P",
        "R",
        "calls",
        "FP antisense",
        "FP intergenic",
    ]
    print_table(f"{report['rescorer']} (source {report['source']})", header, rows)
    differences = [
        [pair, cell(report["differences"][pair]), cell(whole["differences"][pair])]
        for pair in report["differences"]
    ]
    print_table(
        "F1 differences: on genes (gene-cluster bootstrap), whole region (100-kb block bootstrap)",
        ["pair", "on genes", "whole region"],
        differences,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.whole_region_transfer", description=__doc__.splitlines()[0]
    )
    parser.add_argument("run", help="a site_calls work directory that scanned whole regions")
    parser.add_argument("rescorers", nargs="+", help="re-scorer folders or builtin:<name>")
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--out", help="write the reports as JSON")
    args = parser.parse_args(argv)
    run = read_site_run(args.run, progress=log)
    if (run.metrics.get("whole_region") or {}).get("scored") != "regions":
        raise InputError(
            args.run, "whole_region.scored", "not a whole-region scan (calling.regions: docs/sites.md)"
        )
    reports = []
    with threadpool_limits(limits=1, user_api="openmp"):
        for path in args.rescorers:
            log(f"{path}: applying")
            reports.append(transfer_report(run, path, args.replicates))
            print_report(reports[-1])
    if args.out:
        write_json(args.out, {"run": args.run, "reports": reports})


if __name__ == "__main__":
    run_cli(main)
