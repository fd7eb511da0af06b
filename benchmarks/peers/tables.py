"""The Markdown tables of benchmarks/peers/compare.py: results as ratios to errorseq, the time around the
steps, what was matched, the versions and the issue's targets."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
from pathlib import Path

from benchmarks.peers.batching import RECIPE_BATCH_SIZES, RECIPE_BOUNDS
from benchmarks.peers.runs import PeerResult
from benchmarks.tables import print_table

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"Trainer, group_by_length": 1.3, "MetaSpliceAI recipe": 3.0}  # errorseq's real tokens/s ×


def versions() -> str:
    sha = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    packages = ", ".join(
        f"{name} {importlib.metadata.version(name)}" for name in ("torch", "transformers", "accelerate")
    )
    return f"errorseq {sha or 'unknown'}, Python {platform.python_version()}, {packages}"


def ratio(value: float, base: float, digits: int = 0) -> str:
    shown = f"{value:,.{digits}f}"
    return f"{shown} ({value / base:.2f}×)" if base else shown


def rss(result: PeerResult) -> str:
    return " / ".join(f"{result.peak_rss_mb[r]:,.0f}" for r in sorted(result.peak_rss_mb))


def main_rows(name: str, results: list[tuple[PeerResult, str]]) -> list[list]:
    base = results[0][0]
    rows = []
    for result, load in results:
        wall = result.launched_to_export_s + result.extra.get("bucket_s", 0) * (result is base)
        base_wall = base.launched_to_export_s + base.extra.get("bucket_s", 0)
        rows.append(
            [
                name,
                f"**{result.tool}**" if result is base else result.tool,
                result.steps,
                ratio(wall, base_wall, 1),
                ratio(result.real_per_s, base.real_per_s),
                ratio(result.padded_per_s, base.padded_per_s),
                ratio(result.real_per_cpu_s, base.real_per_cpu_s),
                f"{rss(result)} ({max(result.peak_rss_mb.values()) / max(base.peak_rss_mb.values()):.2f}×)",
                ratio(result.test_roc_auc, base.test_roc_auc, 3),
                load,
            ]
        )
    return rows


def phase_rows(name: str, results: list[tuple[PeerResult, str]]) -> list[list]:
    rows = []
    for result, _ in results:
        accounted = (
            result.startup_s + result.train_s + result.validation_s + result.checkpoint_s + result.export_s
        )
        rows.append(
            [
                name,
                result.tool,
                f"{result.extra['bucket_s']:.1f}" if result.tool == "errorseq" else "(in start-up)",
                f"{result.startup_s:.1f}",
                f"{result.train_s:.1f}",
                f"{result.validation_s:.2f}",
                f"{result.checkpoint_s:.2f}",
                f"{result.export_s:.2f}",
                f"{result.launched_to_export_s - accounted:.2f}",
                f"{result.teardown_s:.1f}",
                f"{result.extra['test_s']:.1f}",
            ]
        )
    return rows


def batching(result: PeerResult) -> str:
    plan = result.extra["plan"]
    if result.tool == "errorseq":
        return f"token budget per rank → {plan['batch_sizes']} windows per bucket"
    if plan["batching"] == "group_by_length":
        return f"{plan['batch_size']} windows per rank, mega-batches sorted by length"
    sizes = "/".join(map(str, RECIPE_BATCH_SIZES))
    bounds = "/".join(map(str, RECIPE_BOUNDS))
    return f"{sizes} windows per rank ({bounds}), accumulation {plan['accumulation']}"


def matching_rows(name: str, results: list[tuple[PeerResult, str]]) -> list[list]:
    rows = []
    for result, _ in results:
        tokens = result.tokens
        rows.append(
            [
                name,
                result.tool,
                batching(result),
                result.steps,
                f"{tokens.windows / result.steps:.1f}",
                f"{tokens.real / result.steps:,.0f}",
                f"{tokens.padded / result.steps:,.0f}",
                f"{tokens.efficiency:.3f}",
                f"{tokens.windows / result.extra['n_train']:.2f}",
            ]
        )
    return rows


def check_rows(name: str, results: list[tuple[PeerResult, str]]) -> list[list]:
    """errorseq's real tokens per wall second and per CPU second over the peer's, and ROC-AUC
    (within 0.005 counts as equal)."""
    base = results[0][0]
    rows = []
    for result, _ in results[1:]:
        target = TARGETS[result.tool]
        wall = base.real_per_s / result.real_per_s
        cpu = base.real_per_cpu_s / result.real_per_cpu_s
        auc = "equal or better" if base.test_roc_auc >= result.test_roc_auc - 0.005 else "worse"
        verdict = "met" if min(wall, cpu) >= target else "**not met**"
        rows.append([name, result.tool, f"≥ {target}×", f"{wall:.2f}×", f"{cpu:.2f}×", verdict, auc])
    return rows


TABLES = [  # (title, header, rows of one data set) in the order they print
    (
        "Peers: the same BERT on the same windows, ratios to errorseq ({header})",
        "data|tool|steps|wall s to exported model|real tokens/s|padded tokens/s|real tokens per CPU s|"
        "peak RSS MiB per rank|test ROC-AUC|load before → after",
        main_rows,
    ),
    (
        "Time that is not training (seconds)",
        "data|tool|bucket rule|start-up to first step|steps|validation|checkpoint|export|other|teardown|"
        "test evaluation",
        phase_rows,
    ),
    (
        "What was matched",
        "data|tool|batching|steps|windows/step|real tokens/step|padded tokens/step|real/padded|epochs",
        matching_rows,
    ),
    (
        "Targets (issue 18): errorseq's real tokens/s over the peer's, at equal or better ROC-AUC",
        "data|peer|target|per wall s|per CPU s|speed|ROC-AUC",
        check_rows,
    ),
]


def print_all(results: dict[str, list[tuple[PeerResult, str]]], header: str) -> None:
    for title, columns, rows_of in TABLES:
        rows = [row for name, runs in results.items() for row in rows_of(name, runs)]
        print_table(title.format(header=header), columns.split("|"), rows)
    scorer = [
        f"{name} {result.tool}: {result.test_roc_auc:.4f} vs own {result.extra['own_test_roc_auc']:.4f}"
        for name, runs in results.items()
        for result, _ in runs
    ]
    print(
        "Test ROC-AUC, the shared scorer vs each tool's own (evaluate rule / trainer.predict): "
        + "; ".join(scorer)
    )


HOST_HEADER = ["data", "part", "ms per step"]
HOST_TITLE = (
    "Host time per step, ms (one process and thread, rank 0's batches of errorseq's first {steps} steps, "
    "best of {repeats}; % of a step = of this + the model's maths)"
)


def host_rows(name: str, times: dict) -> list[list]:
    """peers.host's times of one data set as (data, part, ms per step) rows."""
    trainer_step, errorseq_step = times["model_step_ms"], times["model_step_errorseq_ms"]

    def share(ms: float, step: float = errorseq_step) -> str:
        return f"{ms:.2f} ({100 * ms / (ms + step):.1f} % of a step)"

    every, reduce_ms = times["log_every_steps"], times["all_reduce_ms"]
    val = f"{times['val_budget_tokens']:,}-token batches now"
    parts = {
        "errorseq: BatchCollator, a batch cut from the tokenised split": share(times["errorseq_collate_ms"]),
        "errorseq: tokenising the split once (building the collator), per step of an epoch": (
            f"{times['errorseq_tokenise_once_ms_per_step']:.2f}"
        ),
        "errorseq before: tokenising each batch + filling row by row (encode_batch)": (
            share(times["errorseq_before_collate_ms"])
        ),
        f"errorseq: stop-signal all-reduce (gloo, 2 processes), once per {every} steps": share(
            reduce_ms / every
        ),
        "errorseq before: the same all-reduce every step": share(reduce_ms),
        "Trainer: DataCollatorWithPadding on pre-tokenised windows": share(
            times["trainer_collate_ms"], trainer_step
        ),
        "Trainer: tokenising all windows once, per step": f"{times['trainer_pretokenise_ms_per_step']:.2f}",
        "model forward + backward + AdamW, transformers' sdpa attention (the Trainer)": f"{trainer_step:.1f}",
        "model forward + backward + AdamW, errorseq's attention (models/hf_attention.py)": f"{errorseq_step:.1f}",
        f"validation, peak RSS growth of one rank (MiB): 256-window batches before → {val}": (
            f"{times['val_rss_before_mib']:.0f} → {times['val_rss_now_mib']:.0f}"
        ),
    }
    return [[name, part, value] for part, value in parts.items()]
