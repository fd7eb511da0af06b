"""The train entry point's path arguments, spelled once for tests and benchmarks.

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
        "--out-model",
        str(out / f"{model_name}.pt"),
        "--out-config",
        str(out / f"{model_name}.json"),
        "--out-steps",
        str(out / "steps.jsonl"),
        "--experiment",
        experiment,
    ]
