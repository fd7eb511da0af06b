"""The train and evaluate programs' arguments for tests and benchmarks, derived as the rules
derive theirs (workflow_scripts/command_line.py) from the same input and output names.

`inputs` holds the paths make_training_inputs returns: "windows", "manifest", "summary".
"""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.command_line import path_flags


def train_path_args(
    inputs: dict[str, Path], out: Path, experiment: str, model_name: str = "model"
) -> list[str]:
    """The train rule's input and output paths (outputs under `out`) and its experiment."""
    rule_inputs = {
        "windows": inputs["windows"],
        "manifest": inputs["manifest"],
        "bucket_summary": inputs["summary"],
    }
    outputs = {
        "weights": out / f"{model_name}.pt",
        "config": out / f"{model_name}.json",
        "steps": out / "steps.jsonl",
    }
    return [
        *path_flags(rule_inputs, outputs),
        "--checkpoint-dir",
        str(out / "checkpoints"),
        "--experiment",
        experiment,
    ]


def evaluate_args(
    inputs: dict[str, Path],
    model: Path,
    model_config: Path,
    experiment: str,
    predictions: Path,
    metrics: Path,
) -> list[str]:
    """`-m workflow_scripts.rules.evaluate` and its paths and experiment: what follows the interpreter."""
    rule_inputs = {
        "windows": inputs["windows"],
        "manifest": inputs["manifest"],
        "model": model,
        "model_config": model_config,
    }
    outputs = {"predictions": predictions, "metrics": metrics}
    paths = path_flags(rule_inputs, outputs)
    return ["-m", "workflow_scripts.rules.evaluate", *paths, "--experiment", experiment]
