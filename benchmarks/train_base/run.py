"""errorseq's train_base on a base_data folder, timed: what another benchmark calls to put
errorseq's trainer beside a peer on the same genes.

    timing = time_train_base(data, work, context=10000, init=mane_pt, epochs=2, procs=1, threads=2)

One run of the rule's entry point (`python -m workflow_scripts.rules.train_base`, torchrun with
`procs` CPU ranks, gloo, OMP threads = threads / procs) under the peak-memory probe. Per epoch the
trainer itself records the training steps' labelled nt, input nt, CPU seconds of every rank's
process and wall seconds (steps.jsonl, kind epoch; validation and checkpoints not counted), and
writes the weights after the epoch in OpenSpliceAI's format (run/epochs/), which a peer's held-out
scoring can load like its own checkpoints. A stopped run resumes (the rule's checkpoints) when
called again with the same arguments.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from benchmarks.runner import PYTHON, run_logged
from workflow_scripts.command_line import path_flags
from workflow_scripts.training.base.blocks import BaseDataFiles
from workflow_scripts.training.base.run_files import BaseRun, model_name


@dataclass(frozen=True)
class EpochTiming:
    epoch: int  # 1-based
    labelled_nt: int
    input_nt: int
    cpu_s: float  # every rank's process, every thread, of the training steps
    wall_s: float
    peak_rss_mib: float  # summed over the ranks
    step: int  # optimizer steps done by the epoch's end

    @property
    def labelled_per_cpu_s(self) -> float:
        return self.labelled_nt / max(self.cpu_s, 1e-9)


@dataclass
class TrainBaseTiming:
    epochs: list[EpochTiming]
    checkpoints: list[Path]  # after each epoch, OpenSpliceAI state dicts
    model: Path
    job_wall_s: float  # the whole job: torchrun start, data, validation, export
    log: Path
    describe: str = ""  # the trainer's own line (blocks, batches, padding, strategy)
    notes: list[str] = field(default_factory=list)


def with_gene_split(data: BaseDataFiles, split_of: dict[str, str], folder: Path) -> tuple[BaseDataFiles, int]:
    """base_data's blocks re-split by a peer's gene split (gene id → train | validation | test):
    a new blocks.parquet in `folder` beside the same arrays and manifest; a block whose genes are
    in no split or in several is left out. (the files, blocks left out)"""
    blocks = pl.read_parquet(data.blocks)
    chosen = [{split_of.get(gene) for gene in genes} for genes in blocks["genes"].to_list()]
    splits = [next(iter(found)) if len(found) == 1 and None not in found else None for found in chosen]
    kept = blocks.with_columns(pl.Series("split", splits, dtype=pl.String)).filter(
        pl.col("split").is_not_null()
    )
    folder.mkdir(parents=True, exist_ok=True)
    kept.write_parquet(folder / "blocks.parquet")
    return BaseDataFiles(
        str(folder / "blocks.parquet"), data.sequence, data.labels, data.manifest
    ), blocks.height - kept.height


def train_base_command(
    data: BaseDataFiles, work: Path, seed: int, init: Path | None, settings: dict, procs: int, threads: int
) -> list[str]:
    context = settings["context"]
    models = work / "models"
    inputs = {"blocks": data.blocks, "bases": data.sequence, "labels": data.labels}
    inputs |= {"data_manifest": data.manifest, "init_weights": str(init) if init else None}
    name = model_name(context, seed)
    outputs = {
        "model": str(models / name),
        "provenance": str(models / name.replace(".pt", ".provenance.json")),
        "card": str(models / name.replace(".pt", ".card.md")),
    }
    return [
        PYTHON,
        *("-m", "workflow_scripts.rules.train_base"),
        *path_flags(inputs, outputs),
        *("--config", json.dumps({"train_base": settings})),
        *("--run-dir", str(work / "run"), "--seed", str(seed)),
        *("--cpu-procs", str(procs), "--threads", str(threads)),
    ]


def time_train_base(
    data: BaseDataFiles,
    work: Path,
    *,
    context: int,
    init: Path | None,
    epochs: int,
    seed: int = 10,
    procs: int = 1,
    threads: int = 2,
    settings: dict | None = None,
) -> TrainBaseTiming:
    """train_base from `init` (an OpenSpliceAI .pt or SpliceAI .h5; None: scratch) for `epochs`
    epochs; `settings`: any other train_base keys (lr, token_budget, trainable_units, max_steps...)."""
    work.mkdir(parents=True, exist_ok=True)
    chosen = {"context": context, "epochs": epochs, "tensorboard": False, **(settings or {})}
    command = train_base_command(data, work, seed, init, chosen, procs, threads)
    log = work / "train_base.log"
    began = time.monotonic()
    rc, _ = run_logged(command, log)
    if rc:
        raise SystemExit(f"train_base failed (rc {rc}), see {log}:\n{log.read_text()[-3000:]}")
    run = BaseRun(seed, data, None, "", "", "", str(work / "run"))
    records = [json.loads(line) for line in run.steps.read_text().splitlines() if line.strip()]
    timed = [
        EpochTiming(
            int(r["epoch"]),
            int(r["labelled_nt"]),
            int(r["input_nt"]),
            float(r["cpu_s"]),
            float(r["wall_s"]),
            float(r["peak_rss_mib"]),
            int(r["step"]),
        )
        for r in records
        if r["kind"] == "epoch"
    ]
    text = log.read_text()
    described = next((line for line in text.splitlines() if " parameters, flank " in line), "")
    return TrainBaseTiming(
        epochs=timed,
        checkpoints=[run.epoch_model(context, e.epoch) for e in timed],
        model=work / "models" / model_name(context, seed),
        job_wall_s=time.monotonic() - began,
        log=log,
        describe=described,
        notes=[line.removeprefix("note: ") for line in text.splitlines() if line.startswith("note: ")],
    )
