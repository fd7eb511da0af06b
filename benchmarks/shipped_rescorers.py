"""The re-scorers errorseq ships (sites.transfer: builtin:<name>), checked and measured.

    # every shipped re-scorer loaded with every file checked, and its card's numbers
    python -m benchmarks.shipped_rescorers
    # reproduce a card: the target run its card names, then compare its site_metrics.json
    snakemake results/sites/site_metrics.json --cores all --directory runs/aaren_osai \\
        --configfile config/aarenosa_chr2.yaml config/base_models/openspliceai_arabidopsis.yaml \\
        --config 'sites={transfer: builtin:atha-openspliceai-arabidopsis, model: true}' 'train={epochs: 3}'
    python -m benchmarks.shipped_rescorers compare atha-openspliceai-arabidopsis runs/aaren_osai/results/sites/site_metrics.json
    # write a card's numbers from the runs that measured them (benchmarks/rescorer_cards.py)
    python -m benchmarks.shipped_rescorers record NAME SOURCE_METRICS TARGET_METRICS --genome ... \
        --base-model ... --config ... [--orthologs REPORT]
    # add the whole-region figures of a scan (calling.regions with start annotation, docs/sites.md)
    python -m benchmarks.shipped_rescorers whole-region NAME SCAN_METRICS --genome ... --config ...

`compare` exits 1 when a transferred predictor's F1, precision or recall, or a difference's estimate
or interval, is off the card's `<name>.measured.json` by more than TOLERANCE (the run is seeded:
the same inputs give the same numbers).
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks.rescorer_cards import card_numbers, read_report, whole_region_numbers
from benchmarks.tables import print_table
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.config.types import parse_typed_config
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json
from workflow_scripts.rescorers import FOLDER, MEASURED, available
from workflow_scripts.sites.rescorer_files import load_rescorer
from workflow_scripts.sites.settings import SiteSettings

TOLERANCE = 0.0005


def measured(name: str) -> dict:
    return json.loads((FOLDER / MEASURED.format(name=name)).read_text())


def default_settings() -> SiteSettings:
    sections = {name: section_defaults(name) for name in ("calling", "sites")}
    typed = parse_typed_config(json.dumps(sections), required=("calling", "sites"))
    return SiteSettings.from_config(typed["calling"], typed["sites"])


def show(name: str) -> None:
    rescorer = load_rescorer(str(FOLDER / name), default_settings())
    card = measured(name)
    size = sum(path.stat().st_size for path in (FOLDER / name).iterdir())
    models = len(rescorer.deep.states) if rescorer.deep is not None else 0
    print(f"\nbuiltin:{name}: every file checked; {size / 1e6:.2f} MB, a tree and {models} deep models")
    target = card["target"]
    rows = [
        [row["predictor"], f"{row['f1']:.3f}", f"{row['precision']:.3f}", f"{row['recall']:.3f}"]
        for row in card["transfer"]
    ]
    print_table(
        f"{name} on {target['genome']} ({target['genes']} genes, {target['sites']:,} sites)",
        ["predictor", "F1", "precision", "recall"],
        rows,
    )
    diffs = [
        [d["pair"], f"{d['estimate']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]"] for d in card["differences"]
    ]
    print_table(f"{name}: differences, 95% gene-cluster intervals", ["pair", "F1"], diffs)
    show_whole_region(name, card)
    held_out = card.get("ortholog_held_out")
    if held_out is not None:
        changes = ", ".join(
            f"{key} {value:+.3f}" for key, value in held_out["shipped_minus_held_out_f1"].items()
        )
        print(f"ortholog-held-out: {held_out['note']}; F1 as shipped minus held out: {changes}")


def compare(name: str, metrics_path: str) -> bool:
    report = read_report(metrics_path, "site_metrics.json")
    card, rows, same = measured(name), [], True
    for row in card["transfer"]:
        now = report.get("calls", {}).get(row["predictor"], {}).get("overall")
        if now is None:
            raise InputError(
                metrics_path,
                f"calls.{row['predictor']}",
                f"missing: run it with sites.transfer builtin:{name}",
            )
        for metric in ("f1", "precision", "recall"):
            ok = abs(now[metric] - row[metric]) <= TOLERANCE
            same &= ok
            rows.append(
                [row["predictor"], metric, f"{row[metric]:.4f}", f"{now[metric]:.4f}", "yes" if ok else "NO"]
            )
    for difference in card["differences"]:
        now = report["differences"][difference["pair"]]["overall"]["f1"]
        for part in ("estimate", "low", "high"):
            ok = abs(now[part] - difference[part]) <= TOLERANCE
            same &= ok
            rows.append(
                [
                    difference["pair"],
                    part,
                    f"{difference[part]:+.4f}",
                    f"{now[part]:+.4f}",
                    "yes" if ok else "NO",
                ]
            )
    print_table(
        f"{name}: the card against {metrics_path}",
        ["predictor or pair", "value", "card", "now", "same"],
        rows,
    )
    return same


def transfer_report(target: dict, args: argparse.Namespace) -> dict:
    """A site_metrics.json as it is; benchmarks.whole_region_transfer's --out: its report of this
    re-scorer (its replicates are the bootstrap's)."""
    if "reports" not in target:
        return target
    names = (args.name, f"builtin:{args.name}")
    chosen = [report for report in target["reports"] if report["rescorer"] in names]
    if not chosen:
        raise InputError(args.target_metrics, "reports", f"none for builtin:{args.name}")
    return {**chosen[0], "bootstrap": chosen[0]["whole_region"]["bootstrap"]}


def write_record(args: argparse.Namespace) -> None:
    described = {"genome": args.genome, "base_model": args.base_model, "config": args.config}
    orthologs = read_report(args.orthologs, "orthologs report") if args.orthologs else None
    source = read_report(args.source_metrics, "site_metrics.json")
    target = transfer_report(read_report(args.target_metrics, "site_metrics.json"), args)
    path = FOLDER / MEASURED.format(name=args.name)
    write_json(path, card_numbers(args.name, source, target, described, orthologs))
    print(f"wrote {path}")


def write_whole_region(args: argparse.Namespace) -> None:
    """Add to a card's measured.json the whole-region figures of a target run that scanned whole
    regions with the re-scorer transferred (calling.regions with start annotation)."""
    target = transfer_report(read_report(args.target_metrics, "site_metrics.json"), args)
    whole = target.get("whole_region")
    if not whole or whole.get("scored") != "regions":
        raise InputError(
            args.target_metrics,
            "whole_region.scored",
            "not a whole-region scan: run site_calls with calling.regions (docs/sites.md)",
        )
    if not any(row["predictor"].startswith("transfer_") for row in whole_region_numbers(whole)["calls"]):
        raise InputError(
            args.target_metrics, "calls", f"no transferred predictor: run it with builtin:{args.name}"
        )
    path = FOLDER / MEASURED.format(name=args.name)
    card = measured(args.name)
    described = {"genome": args.genome, "config": args.config, "sites": target["counts"]["sites"]}
    card["whole_region"] = {"target": described, **whole_region_numbers(whole)}
    write_json(path, card)
    print(f"wrote {path}")


def show_whole_region(name: str, card: dict) -> None:
    whole = card.get("whole_region")
    if whole is None:
        print(f"{name}: no whole-region figures measured")
        return
    rows = [
        [
            row["predictor"],
            f"{row['f1']:.3f}",
            f"{row['calls']:,}",
            *(f"{row['fp'][where]:,}" for where in ("gene", "antisense", "intergenic")),
        ]
        for row in whole["calls"]
    ]
    print_table(
        f"{name} over the whole region of {whole['target']['genome']}",
        ["predictor", "F1", "calls", "FP in genes", "FP antisense", "FP intergenic"],
        rows,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.shipped_rescorers", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command")
    again = sub.add_parser("compare", help="a target run's site_metrics.json against a card")
    again.add_argument("name", choices=available())
    again.add_argument("site_metrics")
    record = sub.add_parser("record", help="write <name>.measured.json from a source and a target run")
    record.add_argument("name", choices=available())
    record.add_argument("source_metrics", help="the source run's site_metrics.json (out of fold)")
    record.add_argument("target_metrics", help="the target run's site_metrics.json (sites.transfer)")
    for words in ("genome", "base-model", "config"):
        record.add_argument(f"--{words}", required=True, help=f"the target's {words}, in words")
    record.add_argument("--orthologs", help="benchmarks.cross_species_orthologs' --out report")
    whole = sub.add_parser("whole-region", help="add a whole-region scan's figures to <name>.measured.json")
    whole.add_argument("name", choices=available())
    whole.add_argument("target_metrics", help="the scan's site_metrics.json (sites.transfer builtin:<name>)")
    for words in ("genome", "config"):
        whole.add_argument(f"--{words}", required=True, help=f"the scan's {words}, in words")
    args = parser.parse_args(argv)
    if args.command == "record":
        write_record(args)
        return
    if args.command == "whole-region":
        write_whole_region(args)
        return
    if args.command == "compare":
        if not compare(args.name, args.site_metrics):
            sys.exit(1)
        return
    for name in available():
        show(name)


if __name__ == "__main__":
    run_cli(main)
