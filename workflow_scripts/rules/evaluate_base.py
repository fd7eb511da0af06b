"""The `evaluate_base` rule: base models (folders of OpenSpliceAI .pt state dicts, e.g. the start
weights and train_base's output) on base_data's held-out test blocks -> results/base_eval/
metrics.json and metrics.png: OpenSpliceAI's metrics per model (base_training/metrics.py) and each
model's difference from the first with gene-cluster bootstrap intervals (base_training/evaluate.py);
site F1 also at each model's own threshold, picked on the first `validation_blocks` validation blocks.
The models' files are the declared input `weights`; `--config` holds no path.
"""

from __future__ import annotations

import json
import sys
import time

import torch

from workflow_scripts.base_training.dataset import open_base_data
from workflow_scripts.base_training.evaluate import (
    SiteCalls,
    evaluate,
    load_models,
    pick_thresholds,
    score_test_blocks,
)
from workflow_scripts.base_training.evaluate_plot import save_metrics_figure
from workflow_scripts.config.stages.evaluate_base import STAGE
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.io_utils import write_json
from workflow_scripts.progress import Console, announce


def device_of(name: str) -> torch.device:
    if name == "cuda" and not torch.cuda.is_available():
        raise InputError("config", "evaluate_base.device", "cuda, but torch sees no CUDA device here")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    settings = cfg.evaluate_base
    began = time.perf_counter()
    console = Console(paths.console_fd)
    announce(console, "evaluate_base", "base models on base_data's test blocks")
    with open(paths.manifest) as handle:
        half_context = int(json.load(handle)["half_context"])
    data = open_base_data(paths.blocks, paths.bases, paths.labels)
    device = device_of(settings.device)
    models = load_models(paths.weights, device)
    scored = score_test_blocks(data, half_context, models, device, settings.max_blocks, sys.stderr)
    calls = SiteCalls(settings.threshold, settings.window, settings.peak_radius)
    picked = {}
    if settings.validation_blocks:
        validation = score_test_blocks(
            data, half_context, models, device, settings.validation_blocks, sys.stderr, split="validation"
        )
        picked = pick_thresholds(validation, calls)
    report = evaluate(scored, models, calls, settings.bootstrap_replicates, settings.seed, picked)
    write_json(paths.out_metrics, report)
    save_metrics_figure(report, paths.out_plot)
    for name, values in report["models"].items():
        line = (
            f"evaluate_base: {name}: acceptor top-1 {values['acceptor']['top_k']['1.0']:.3f} AUPRC "
            f"{values['acceptor']['auprc']:.3f}, donor top-1 {values['donor']['top_k']['1.0']:.3f} AUPRC "
            f"{values['donor']['auprc']:.3f}, site F1 {values['site_f1']['f1']:.3f} at {settings.threshold}"
            + (
                f", {values['site_f1_picked']['f1']:.3f} at {values['site_f1_picked']['threshold']:g} (validation's)"
                if "site_f1_picked" in values
                else ""
            )
            + f" on {report['positions']:,} test nt"
        )
        print(line, file=sys.stderr)
        console.say(line)
    print(f"evaluate_base: {time.perf_counter() - began:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
