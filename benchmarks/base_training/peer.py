"""OpenSpliceAI's own pipeline on a gene split: `create-data` per split, then `transfer
--unfreeze-all`, each in a process of its own (osai_worker.py: its command line, measured).

Work folder (each stage is skipped when its record exists, so a stopped run resumes):
  genome.fa               the chromosomes of the chosen genes, plain FASTA (OpenSpliceAI reads no gzip)
  gff/{split}.gff3        the split's genes, RefSeq-style (genes.py: OpenSpliceAI's issue #7)
  data/{split}/           `create-data --chr-split test --split-ratio 0`: every gene of the GFF into
                          its "test" set (its own split is by whole chromosome: one chromosome would
                          put every gene in test); data/dataset_{split}.h5 and datafile_{split}.h5
  data/{split}.json       wall s, CPU s, peak RSS of that create-data
  transfer/out/           `transfer`'s experiment folder (checkpoints, LOG/)
  transfer/epochs.jsonl   the worker's line per training epoch; transfer/run.json when done
  logs/                   every process's console
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
from pathlib import Path

from benchmarks.base_training.genes import SPLITS, write_split_annotations
from benchmarks.base_training.osai_logs import checkpoint, experiment_folder, read_epochs_log
from benchmarks.base_training.sides import EpochCost, Setup, SideRun
from benchmarks.runner import PEAK_MEMORY_PROBE, PYTHON, ROOT, run_logged
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.io_utils import atomic_path, write_json

WORKER = "benchmarks.base_training.osai_worker"
SCHEDULERS = {"cosine": "CosineAnnealingWarmRestarts", "multistep": "MultiStepLR"}  # transfer --scheduler
PROJECT = "peer"
KIB_PER_MIB = 1024


def say(text: str) -> None:
    print(f"base-training: {text}", file=sys.stderr, flush=True)


def run_measured(args: list[str], log: Path, threads: int) -> dict:
    """The worker in a process of its own under the peak-memory probe: wall s, CPU s (user + system
    of the process and its threads), peak RSS MiB. A failure stops with the log's last lines."""
    env = {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, wall = run_logged([PYTHON, "-c", PEAK_MEMORY_PROBE, WORKER, "0", *args], log, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = log.read_text(errors="replace")
    if rc:
        tail = "\n".join(text.splitlines()[-15:])
        raise RuntimeError(f"OpenSpliceAI failed (exit {rc}); the end of {log}:\n{tail}")
    peak = json.loads(text.rsplit("PEAK ", 1)[1].splitlines()[0])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "peak_rss_mib": peak["VmHWM"] / KIB_PER_MIB}


def write_genome(setup: Setup, folder: Path) -> Path:
    """The chromosomes that hold the split's genes, plain FASTA, IUPAC codes as N."""
    path = folder / "genome.fa"
    if path.exists():
        return path
    wanted = set(setup.split.train + setup.split.validation + setup.split.test)
    annotation = read_annotation(setup.annotation)
    chroms = {annotation.genes[gene]["chrom"] for gene in wanted if gene in annotation.genes}
    genome, _ = read_fasta(setup.genome, iupac="to_n")
    with atomic_path(path) as tmp, tmp.open("w") as handle:
        for name in genome.names:
            if chroms and name not in chroms:
                continue
            handle.write(f">{name}\n")
            sequence = genome.chromosome(name)
            for first in range(0, len(sequence), 80):
                handle.write(sequence[first : first + 80] + "\n")
    return path


def create_data(setup: Setup, folder: Path, genome: Path, gffs: dict[str, Path]) -> dict[str, dict]:
    """`create-data` per split (skipped where its record exists): {split: wall, CPU, peak}."""
    records = {}
    for split in SPLITS:
        record = folder / "data" / f"{split}.json"
        if record.exists():
            records[split] = json.loads(record.read_text())
            continue
        out = folder / "data" / split
        shutil.rmtree(out, ignore_errors=True)
        Path(f"{gffs[split]}_db").unlink(missing_ok=True)  # gffutils' database beside the GFF
        say(f"create-data {split}: {len(setup.split.of(split))} genes")
        measured = run_measured(
            [
                "--seed", str(setup.seed), "--",
                "create-data", "--annotation-gff", str(gffs[split]), "--genome-fasta", str(genome),
                "--output-dir", str(out), "--chr-split", "test", "--split-ratio", "0",
                "--flanking-size", str(setup.flank),
            ],
            folder / "logs" / f"create_data_{split}.log",
            setup.threads,
        )  # fmt: skip
        for kind in ("dataset", "datafile"):
            os.replace(out / f"{kind}_test.h5", folder / "data" / f"{kind}_{split}.h5")
        write_json(record, measured)
        records[split] = measured
    return records


def transfer(setup: Setup, folder: Path) -> dict:
    """`transfer --unfreeze-all` (rerun whole unless its record exists): wall, CPU, peak."""
    record = folder / "transfer" / "run.json"
    if record.exists():
        return json.loads(record.read_text())
    shutil.rmtree(folder / "transfer", ignore_errors=True)
    data = folder / "data"
    say(
        f"transfer --unfreeze-all: {setup.epochs} epochs, flank {setup.flank}, {setup.schedule}, log {folder / 'logs' / 'transfer.log'}"
    )
    measured = run_measured(
        [
            "--epochs-log", str(folder / "transfer" / "epochs.jsonl"), "--threads", str(setup.threads),
            "--seed", str(setup.seed), "--",
            "transfer", "--train-dataset", str(data / "dataset_train.h5"),
            "--test-dataset", str(data / "dataset_test.h5"), "--pretrained-model", str(setup.weights),
            "--flanking-size", str(setup.flank), "--epochs", str(setup.epochs), "--unfreeze-all",
            "--output-dir", str(folder / "transfer" / "out"), "--project-name", PROJECT,
            "--exp-num", "0", "--random-seed", str(setup.seed), "--scheduler", SCHEDULERS[setup.schedule],
        ],
        folder / "logs" / "transfer.log",
        setup.threads,
    )  # fmt: skip
    write_json(record, measured)
    return measured


def transfer_folder(setup: Setup, folder: Path) -> Path:
    return experiment_folder(folder / "transfer" / "out", PROJECT, setup.flank, 0, setup.seed)


def prepare(setup: Setup, work: Path) -> dict[str, dict]:
    """The genome, the split's GFFs and create-data's datasets in `work` (resumable)."""
    work.mkdir(parents=True, exist_ok=True)
    genome = write_genome(setup, work)
    gffs = write_split_annotations(setup.annotation, setup.split, work / "gff")
    return create_data(setup, work, genome, gffs)


def openspliceai_side(setup: Setup, work: Path) -> SideRun:
    """OpenSpliceAI's create-data and transfer in `work` (resumable), as a SideRun."""
    prepared = prepare(setup, work)
    run = transfer(setup, work)
    epochs = read_epochs_log(work / "transfer" / "epochs.jsonl")
    costs = [
        EpochCost(r["epoch"], r["labelled_nt"], r["input_nt"], r["steps_cpu_s"], r["wall_s"]) for r in epochs
    ]
    folder = transfer_folder(setup, work)
    metrics_cpu = sum(r["metrics_cpu_s"] for r in epochs)
    notes = [
        f"OpenSpliceAI: training CPU-s are its train_epoch's less its end-of-epoch metrics over the "
        f"training predictions ({metrics_cpu:.0f} CPU-s in all, not counted); labelled nt are the "
        "positions with a label in the batches it trained (drop_last: a shard's last incomplete batch is never seen)",
        f"OpenSpliceAI: create-data {sum(r['cpu_s'] for r in prepared.values()):.0f} CPU-s over the three "
        f"splits (peak {max(r['peak_rss_mib'] for r in prepared.values()):.0f} MiB); the whole transfer "
        f"process {run['cpu_s']:.0f} CPU-s, {run['wall_s']:.0f} s (with its validation and test passes)",
    ]
    return SideRun(
        "OpenSpliceAI transfer --unfreeze-all",
        costs,
        run["peak_rss_mib"],
        [checkpoint(folder, epoch) for epoch in range(1, len(costs) + 1)],
        notes,
    )
