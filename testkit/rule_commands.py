"""The train and evaluate entry points' path arguments, spelled once for tests and benchmarks.

`inputs` holds the paths make_training_inputs returns: "windows", "manifest", "summary".
"""

from __future__ import annotations

from pathlib import Path


def train_path_args(
    inputs: dict[str, Path], out: Path, experiment: str, model_name: str = "model"
) -> list[str]:
    """The train rule's input and output paths (outputs under `out`) and its experiment."""
    return [
        "--windows",
        str(inputs["windows"]),
        "--manifest",
        str(inputs["manifest"]),
        "--bucket-summary",
        str(inputs["summary"]),
        "--checkpoint-dir",
        str(out / "checkpoints"),
        "--out-weights",
        str(out / f"{model_name}.pt"),
        "--out-config",
        str(out / f"{model_name}.json"),
        "--out-steps",
        str(out / "steps.jsonl"),
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
    return [
        "-m",
        "workflow_scripts.rules.evaluate",
        "--windows",
        str(inputs["windows"]),
        "--manifest",
        str(inputs["manifest"]),
        "--model",
        str(model),
        "--model-config",
        str(model_config),
        "--experiment",
        experiment,
        "--out-predictions",
        str(predictions),
        "--out-metrics",
        str(metrics),
    ]
