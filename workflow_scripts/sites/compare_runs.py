"""Site F1 of two site_calls runs over the same scan, paired by genomic block.

site_calls compares its predictors on one base model's candidates; two base models (a start and its
fine-tune) are two runs, each with its own candidates. This counts each run's calls of one predictor
(its corrected_calls.parquet: every candidate and every annotated site) per genomic block
of sites/items.py's BLOCK_NT, both strands of a block together as site_calls' `whole_region` does,
and draws the same blocks for both runs, so `second - first` is a paired difference with a 95%
percentile interval (the same replicates as site_calls' own whole-region intervals when both runs'
blocks are the same). Each run's totals are checked against its own site_metrics.json, and the two
runs must count the same annotated sites of each type (the same regions and annotation).

    python -m workflow_scripts.sites.compare_runs runs/start:base_threshold runs/tuned:base_threshold \\
        --out start_vs_tuned.json

(a run is the --directory that site_calls ran in).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.evaluation.bootstrap import estimate, interval_shortfall
from workflow_scripts.io_utils import write_json
from workflow_scripts.layout import SITE_CORRECTED_CALLS, SITE_METRICS
from workflow_scripts.sites.intervals import METRICS, paired, rates, replicate_rates
from workflow_scripts.sites.items import BLOCK_NT
from workflow_scripts.sites.predictors import BASE_THRESHOLD, CALL_COLUMNS
from workflow_scripts.sites.site_metrics import GROUPS, group_type

TP, FP, FN = range(3)


@dataclass(frozen=True)
class Run:
    folder: Path  # the --directory site_calls ran in
    predictor: str  # e.g. base_threshold, base_tuned, tree

    @property
    def label(self) -> str:
        return f"{self.folder}:{self.predictor}"


def parse_run(text: str) -> Run:
    folder, _, predictor = text.rpartition(":")
    if not folder or not predictor:
        raise InputError(
            "command line",
            text,
            f"expected RUN:PREDICTOR, a run's directory and a predictor such as {BASE_THRESHOLD}",
        )
    return Run(Path(folder), predictor)


def existing(path: Path) -> Path:
    if not path.is_file():  # polars' error names no file
        raise InputError(
            path, "file", "not found: is this the directory site_calls ran in, and has it finished?"
        )
    return path


def read_calls(run: Run) -> pl.DataFrame:
    """Every row of the run's calls: its block (chrom:position // BLOCK_NT, as sites/items.py
    labels it), splice_type, is_true_site and `called`."""
    path = existing(run.folder / SITE_CORRECTED_CALLS)
    table = pl.read_parquet(path)
    column = CALL_COLUMNS.get(run.predictor)
    if column not in table.columns:
        known = sorted(name for name, called in CALL_COLUMNS.items() if called in table.columns)
        raise InputError(
            path,
            column or run.predictor,
            f"no predictor {run.predictor!r} in this run; it has {', '.join(known)}",
        )
    return table.select(
        (pl.col("chrom") + ":" + (pl.col("position") // BLOCK_NT).cast(pl.String)).alias("block"),
        "splice_type",
        "is_true_site",
        pl.col(column).alias("called"),
    )


def block_counts(table: pl.DataFrame, blocks: np.ndarray) -> np.ndarray:
    """(blocks, groups, 3): TP, FP, FN of each block, overall and per splice type."""
    row_block = np.searchsorted(blocks, table["block"].to_numpy())
    called, true = table["called"].to_numpy(), table["is_true_site"].to_numpy()
    splice_type = table["splice_type"].to_numpy()
    counts = np.zeros((len(blocks), len(GROUPS), 3))
    for g, group in enumerate(GROUPS):
        of_type = np.ones(len(table), bool) if group_type(group) is None else splice_type == group
        for kind, hit in ((TP, called & true), (FP, called & ~true), (FN, ~called & true)):
            counts[:, g, kind] = np.bincount(row_block, weights=hit & of_type, minlength=len(blocks))
    return counts


def recorded_counts(run: Run) -> tuple[str, list[int]]:
    """What the run's site_metrics.json says it scored, and its overall TP, FP, FN of the predictor."""
    path = existing(run.folder / SITE_METRICS)
    metrics = json.loads(path.read_text())
    section = metrics.get("whole_region") or {"scored": "gene spans", "calls": metrics["calls"]}
    if run.predictor not in section["calls"]:
        raise InputError(path, f"calls.{run.predictor}", "not in this run's site metrics")
    overall = section["calls"][run.predictor]["overall"]
    return section["scored"], [overall["tp"], overall["fp"], overall["fn"]]


def checked_counts(runs: list[Run]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(blocks, runs, groups, 3) counts, the blocks, and what each run scored."""
    tables = [read_calls(run) for run in runs]
    blocks = np.unique(np.concatenate([table["block"].to_numpy() for table in tables]))  # site_calls' order
    counts = np.stack([block_counts(table, blocks) for table in tables], axis=1)
    scored = []
    for r, run in enumerate(runs):
        what, recorded = recorded_counts(run)
        totals = counts[:, r, 0].sum(axis=0).astype(int).tolist()
        if totals != recorded:
            raise InputError(
                run.folder / SITE_CORRECTED_CALLS,
                CALL_COLUMNS[run.predictor],
                f"TP/FP/FN {totals} counted by row but {Path(SITE_METRICS).name} says {recorded}: files of different "
                "runs (or a site with two candidates within the consensus window, which rows cannot count)",
            )
        scored.append(what)
    sites = (counts[..., TP] + counts[..., FN]).sum(axis=0)  # (runs, groups): annotated sites
    if not np.array_equal(sites[0], sites[1]) or scored[0] != scored[1]:
        raise InputError(
            runs[1].folder / SITE_CORRECTED_CALLS,
            "is_true_site",
            f"{int(sites[1, 0]):,} annotated sites ({scored[1]}) against {int(sites[0, 0]):,} ({scored[0]}) "
            f"in {runs[0].folder}: not the same regions and annotation",
        )
    return counts, blocks, scored


def compare(runs: list[Run], replicates: int, seed: int) -> dict:
    counts, blocks, scored = checked_counts(runs)
    point = rates(counts.sum(axis=0))
    drawn = replicate_rates(counts, replicates, seed)
    valid = np.isfinite(drawn)
    per_run = {}
    for r, run in enumerate(runs):
        tp, fp, fn = counts[:, r, 0].sum(axis=0).astype(int).tolist()
        ok = valid[:, r, 0, 0]
        f1 = estimate(
            float(point[r, 0, 0]), drawn[:, r, 0, 0], ok, interval_shortfall(int(ok.sum()), replicates)
        )
        per_run[run.label] = {"scored": scored[r], "tp": tp, "fp": fp, "fn": fn, "f1": f1} | {
            metric: float(point[r, 0, m]) for m, metric in enumerate(METRICS) if metric != "f1"
        }
    difference = {
        group: {
            metric: paired(point[1, g, m] - point[0, g, m], drawn[:, 1, g, m] - drawn[:, 0, g, m])
            for m, metric in enumerate(METRICS)
        }
        for g, group in enumerate(GROUPS)
    }
    return {
        "runs": per_run,
        "difference": {"pair": f"{runs[1].label} - {runs[0].label}", **difference},
        "bootstrap": {
            "replicates": replicates,
            "seed": seed,
            "resampled_unit": f"{BLOCK_NT // 1000}-kb genomic block, both strands",
            "blocks": len(blocks),
        },
    }


def interval(value: dict, sign: str = "") -> str:
    if value["low"] is None:
        return f"{value['estimate']:{sign}.3f} (no interval: {value['reason']})"
    return f"{value['estimate']:{sign}.3f} [{value['low']:{sign}.3f}, {value['high']:{sign}.3f}]"


def summary_lines(result: dict) -> list[str]:
    lines = [
        f"{label}: F1 {interval(run['f1'])} P {run['precision']:.3f} R {run['recall']:.3f} "
        f"TP {run['tp']:,} FP {run['fp']:,} FN {run['fn']:,}"
        for label, run in result["runs"].items()
    ]
    difference = result["difference"]
    types = ", ".join(f"{group} {interval(difference[group]['f1'], '+')}" for group in GROUPS[1:])
    lines.append(f"difference {interval(difference['overall']['f1'], '+')} ({types})")
    lines.append(
        f"over {result['bootstrap']['blocks']} blocks, {result['bootstrap']['replicates']} replicates"
    )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m workflow_scripts.sites.compare_runs",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "first", type=parse_run, help="RUN:PREDICTOR, the reference (the --directory site_calls ran in)"
    )
    parser.add_argument("second", type=parse_run, help="RUN:PREDICTOR, compared with the first")
    parser.add_argument("--replicates", type=int, default=2000, help="block-bootstrap replicates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="the comparison as JSON")
    args = parser.parse_args(argv)
    result = compare([args.first, args.second], args.replicates, args.seed)
    print("\n".join(summary_lines(result)))
    if args.out:
        write_json(args.out, result)


if __name__ == "__main__":
    run_cli(main)
