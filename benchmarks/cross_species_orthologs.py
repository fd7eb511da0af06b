"""Cross-species transfer scored two ways (issue 36): as sites.transfer ships it, and with each
target gene scored only by source predictors that never saw its orthologs.

    python -m benchmarks.cross_species_orthologs SOURCE_RUN TARGET_RUN [--out report.json]
    python -m benchmarks run cross-species-orthologs -- SOURCE_RUN TARGET_RUN

SOURCE_RUN and TARGET_RUN are finished site_calls work directories of two genomes scored by the
same base model with the same candidate settings (benchmarks/site_transfer/run_folder.py lists
what each must hold); the target need not have run sites.transfer. Both genomes' candidates are
rebuilt with site_calls' own code and checked against their corrected_calls.parquet. Orthologs
are target and source genes sharing exonic 16-mers (benchmarks/site_transfer/orthologs.py: at least 20 of them and
--min-share of the smaller gene's). The source's tree and thresholds are refitted without the
source folds each target gene's orthologs lie in (benchmarks/site_transfer/held_out.py), and with sites.model on
the source its fold models score the target, model f for the genes whose orthologs lie in fold
f (benchmarks/site_transfer/held_out_deep.py). Prints the orthologs found, the transferred predictors' F1 as shipped
and held out on the same target items with 95% gene-cluster bootstrap intervals, an equal-size
control (trees without as many other folds: the training data's share of a drop) and checks
that the rebuilt predictors are site_calls' own. --out writes the whole report as JSON
(benchmarks/site_transfer/ortholog_transfer.py). Trees run on --threads OpenMP threads (1: a busy machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from benchmarks.site_transfer.held_out_deep import fold_model_probabilities
from benchmarks.site_transfer.ortholog_transfer import (
    CONTROL_BASE_TUNED,
    CONTROL_ERRORSEQ,
    CONTROL_TREE,
    HELD_OUT_BASE_TUNED,
    HELD_OUT_ERRORSEQ,
    HELD_OUT_TREE,
    ortholog_transfer,
)
from benchmarks.site_transfer.orthologs import DEFAULT_MIN_SHARE, exonic_kmer_pairs
from benchmarks.site_transfer.run_folder import SiteRun, read_site_run
from benchmarks.tables import print_table
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.evaluation.provenance import WEIGHTS
from workflow_scripts.io_utils import write_json
from workflow_scripts.sites.predictors import TRANSFER_BASE_TUNED, TRANSFER_ERRORSEQ, TRANSFER_TREE
from workflow_scripts.sites.rescorer import FEATURE_SETTINGS


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cross_species_orthologs", description=__doc__.splitlines()[0]
    )
    parser.add_argument("source", type=Path, help="the source genome's site_calls work directory")
    parser.add_argument("target", type=Path, help="the target genome's site_calls work directory")
    parser.add_argument("--min-share", type=float, default=DEFAULT_MIN_SHARE, help="ortholog share bar")
    parser.add_argument("--replicates", type=int, default=1000, help="gene-cluster bootstrap replicates")
    parser.add_argument("--source-scores", nargs="+", help="the source's scores tables (default: its shards)")
    parser.add_argument("--target-scores", nargs="+", help="the target's scores tables (default: its shards)")
    parser.add_argument(
        "--batch-size", type=int, help="the fold models' batch (default: evaluate.batch_size's)"
    )
    parser.add_argument("--no-deep", action="store_true", help="leave the source's fold models out")
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads of the trees")
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    args = parser.parse_args(argv)
    if not 0 < args.min_share <= 1:
        raise InputError("--min-share", "value", f"{args.min_share}: want a share in (0, 1]")
    if args.replicates != 0 and args.replicates < 40:
        raise InputError("--replicates", "value", f"{args.replicates}: want 0 (no intervals) or 40 or more")
    return args


def log(line: str) -> None:
    print(f"cross_species_orthologs: {line}", file=sys.stderr, flush=True)


def base_model_files(run: SiteRun) -> list[str] | None:
    """The sha256 of the base model's weight files (site_metrics.json's provenance), or None where
    it records none (an older run, or a scores table given)."""
    model = (run.metrics.get("provenance") or {}).get("base_model") or {}
    if model.get("source") != WEIGHTS:
        return None
    return sorted(str(entry.get("sha256")) for entry in model.get("files", []))


def check_same_base_model(source: SiteRun, target: SiteRun) -> None:
    """Scores of another base model would give the source's predictors other features."""
    mine, theirs = base_model_files(target), base_model_files(source)
    if mine is not None and theirs is not None and mine != theirs:
        named = {
            name: (run.metrics["provenance"]["base_model"].get("family") or "weights")
            for name, run in (("source", source), ("target", target))
        }
        raise InputError(
            target.root / "results/sites/site_metrics.json",
            "provenance.base_model",
            f"the target was scored by other base-model files ({named['target']}) than the source "
            f"({named['source']}, {source.root}): transfer needs the same base model",
        )


def check_same_features(source: SiteRun, target: SiteRun) -> None:
    """The tree reads features these settings shape: the two runs must agree on them."""
    for key in FEATURE_SETTINGS:
        mine, theirs = getattr(target.settings, key), getattr(source.settings, key)
        if mine != theirs:
            raise InputError(
                target.root / "results/sites/site_metrics.json",
                f"settings.{key}",
                f"{mine}, the source's {theirs}: the source's tree would read other features",
            )


def measure(args: argparse.Namespace) -> dict:
    began = time.perf_counter()
    source = read_site_run(args.source, args.source_scores, progress=log)
    target = read_site_run(args.target, args.target_scores, progress=log)
    check_same_features(source, target)
    check_same_base_model(source, target)
    pairs = exonic_kmer_pairs(target.exons, target.inputs.genome, source.exons, source.inputs.genome)
    log(f"{pairs.height:,} gene pairs share >= 20 exonic 16-mers ({time.perf_counter() - began:.1f} s)")
    fold_probability = None
    if source.settings.model and not args.no_deep:
        batch_size = args.batch_size or complete_typed_section("evaluate", {}).batch_size
        fold_probability = fold_model_probabilities(
            source.fold_runs(), target.found, target.inputs, batch_size, log
        )
    report = ortholog_transfer(source, target, pairs, args.min_share, args.replicates, fold_probability, log)
    log(f"done in {time.perf_counter() - began:.1f} s")
    return report


def f1(comparison: dict, name: str) -> str:
    value = comparison["calls"].get(name, {}).get("overall", {}).get("f1")
    return "–" if value is None else f"{value:.3f}"


def difference(comparison: dict, first: str, second: str) -> str:
    entry = comparison["differences"].get(f"{first} - {second}", {}).get("overall", {}).get("f1")
    if entry is None or entry["estimate"] is None:
        return "–"
    if entry["low"] is None:
        return f"{entry['estimate']:+.3f}"
    return f"{entry['estimate']:+.3f} [{entry['low']:+.3f}, {entry['high']:+.3f}]"


def side_by_side_rows(report: dict) -> list[list]:
    comparisons, rows = report["comparisons"], []
    shipped = comparisons["shipped"]
    families = [("tree", TRANSFER_TREE, HELD_OUT_TREE, "tree")]
    if "deep" in comparisons:
        families.append(("deep models", TRANSFER_ERRORSEQ, HELD_OUT_ERRORSEQ, "deep"))
    for label, as_shipped, held_out, key in families:
        rows.append(
            [
                f"{label}, every gene",
                shipped["genes"],
                shipped["sites"],
                f1(shipped, TRANSFER_BASE_TUNED),
                f1(shipped, as_shipped),
                difference(shipped, as_shipped, TRANSFER_BASE_TUNED),
                "–",
                "–",
                "–",
                "–",
            ]
        )
        for subset, which in (
            (key, "genes that can be held out"),
            (f"{key}_orthologous", "of them with orthologs"),
        ):
            rows.append(held_out_row(f"{label}, {which}", comparisons[subset], as_shipped, held_out))
    return rows


def held_out_row(label: str, held: dict, as_shipped: str, held_out: str) -> list:
    return [
        label,
        held["genes"],
        held["sites"],
        f1(held, TRANSFER_BASE_TUNED),
        f1(held, as_shipped),
        difference(held, as_shipped, TRANSFER_BASE_TUNED),
        f1(held, HELD_OUT_BASE_TUNED),
        f1(held, held_out),
        difference(held, held_out, HELD_OUT_BASE_TUNED),
        difference(held, held_out, as_shipped),
    ]


def control_rows(report: dict) -> list[list]:
    comparisons = report["comparisons"]
    control = comparisons["tree_control"]
    rows = [
        [
            "tree",
            control["genes"],
            f1(control, CONTROL_TREE),
            difference(control, CONTROL_TREE, CONTROL_BASE_TUNED),
            difference(control, HELD_OUT_TREE, CONTROL_TREE),
            difference(control, CONTROL_TREE, TRANSFER_TREE),
        ]
    ]
    if "deep" in comparisons:
        deep = comparisons["deep"]
        rows.append(
            [
                "deep models",
                deep["genes"],
                f1(deep, CONTROL_ERRORSEQ),
                "–",
                difference(deep, HELD_OUT_ERRORSEQ, CONTROL_ERRORSEQ),
                "–",
            ]
        )
    return rows


def print_report(report: dict) -> None:
    found = report["orthologs"]
    folds = found["genes_by_ortholog_folds"]
    shown = ", ".join(f"{n} in {k}" for k, n in folds.items())
    print_table(
        f"Orthologs of {report['target']}'s genes among {report['source']}'s (shared exonic 16-mers, "
        f"share >= {found['min_share']})",
        [
            "target genes",
            "with an ortholog",
            "genes by source folds holding their orthologs",
            "source orthologs",
            "median best share",
        ],
        [
            [
                found["target_genes"],
                found["with_ortholog"],
                shown,
                found["source_orthologs"],
                "–" if found["median_best_share"] is None else found["median_best_share"],
            ]
        ],
    )
    print_table(
        "Target genes with an ortholog at other share bars",
        ["share >=", "genes"],
        [[bar, n] for bar, n in found["genes_with_ortholog_at_share"].items()],
    )
    print_table(
        "Transferred as shipped and ortholog-held-out: site-level F1 on the same target items, "
        f"differences with 95% gene-cluster intervals ({report['bootstrap']['replicates']} replicates)",
        [
            "predictors",
            "genes",
            "sites",
            "thresholds",
            "shipped",
            "shipped − thresholds",
            "held-out thresholds",
            "held out",
            "held out − its thresholds",
            "held out − shipped",
        ],
        side_by_side_rows(report),
    )
    print_table(
        "Equal-size control: without as many other source folds (orthologs seen, as much data)",
        [
            "predictors",
            "genes",
            "control F1",
            "control − its thresholds",
            "held out − control (orthologs)",
            "control − shipped (data)",
        ],
        control_rows(report),
    )
    apart, checks = report["apart"], report["checks"]
    print_table(
        "Apart and checks",
        ["what", "value"],
        [
            [
                "target genes the tree cannot hold out (orthologs in all source folds but one or more)",
                apart["tree_genes_not_held_out"],
            ],
            [
                "target genes no fold model holds out (orthologs in several folds)",
                apart["deep_genes_not_held_out"],
            ],
            ["trees fitted (source folds left out)", len(report["fits"])],
            *([name.replace("_", " "), f"{value:.3g}"] for name, value in checks.items()),
        ],
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with threadpool_limits(limits=args.threads, user_api="openmp"):
        report = measure(args)
    print_report(report)
    if args.out:
        write_json(args.out, report)
        log(f"report: {args.out}")


if __name__ == "__main__":
    run_cli(main)
