"""A finished site_calls work directory read back, its candidates rebuilt with site_calls' own code
(sites/inputs.py) under the settings it ran with, for measurements across two runs
(benchmarks/cross_species_orthologs.py).

What the folder holds (the workflow's layout):
    results/annotation/{sites,genes,exons,gene_clusters}.parquet
    results/genome/                   the genome index (index_genome)
    results/base_model/shards/<i>-of-<n>.parquet   the scores (calling.start annotation); a
                                      calling.start scores run names its table instead (`scores`)
    results/sites/site_metrics.json   the settings site_calls ran with, its thresholds
    results/sites/corrected_calls.parquet          its per-candidate columns
    results/site_candidates_fold<i>/  with sites.model: the fold runs (windows, model)
The rebuilt candidates must be site_calls' own, in the same folds; a folder whose
corrected_calls.parquet says otherwise (other inputs, other settings) is refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts import layout
from workflow_scripts.calling.contract import EXON_COLUMNS
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidate_windows import candidate_ids
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.inputs import SiteInputs, folded_candidates, read_site_inputs
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.settings import SiteSettings

SHARD_NAME = re.compile(r"(\d+)-of-(\d+)\.parquet")


@dataclass
class SiteRun:
    root: Path
    settings: SiteSettings
    metrics: dict  # site_metrics.json
    inputs: SiteInputs
    exons: pl.DataFrame
    found: Candidates
    items: Items
    calls: pl.DataFrame  # corrected_calls.parquet's candidate rows, in found.table's order

    def fold_runs(self) -> list[layout.FoldRunFiles]:
        """The files of sites.model's runs, results/site_candidates_fold1..k."""
        folds = range(1, self.settings.folds + 1)
        return [
            layout.fold_run_files(str(self.root / layout.run_dir(layout.site_fold_run(fold))))
            for fold in folds
        ]


def existing(path: Path, field: str) -> Path:
    if not path.exists():
        raise InputError(path, field, "not found: is this a finished site_calls work directory?")
    return path


def shard_tables(root: Path) -> list[str]:
    """score_base_model's shards 1..n of one n."""
    folder = root / layout.SHARDS_DIR
    found = (
        [(SHARD_NAME.fullmatch(p.name), p) for p in sorted(folder.glob("*.parquet"))]
        if folder.is_dir()
        else []
    )
    counts = {int(match[2]) for match, _ in found if match}
    if len(counts) != 1:
        why = "no shards" if not counts else f"shards of several counts ({sorted(counts)})"
        raise InputError(
            folder, "scores", f"{why}: name the scores tables (a calling.start scores run: its table)"
        )
    shards = counts.pop()
    by_index = {int(match[1]): path for match, path in found if match}
    if sorted(by_index) != list(range(1, shards + 1)):
        raise InputError(folder, "scores", f"shards {sorted(by_index)} of {shards}: some are missing")
    return [str(by_index[i]) for i in range(1, shards + 1)]


def run_settings(metrics: dict, path: Path) -> SiteSettings:
    """The settings site_calls ran with (site_metrics.json `settings`)."""
    saved = metrics.get("settings") if isinstance(metrics, dict) else None
    if not isinstance(saved, dict):
        raise InputError(path, "settings", "missing: not a site_calls site_metrics.json")
    lacking = [name for name in SiteSettings.summarised_fields() if name not in saved]
    if lacking:
        raise InputError(
            path, f"settings.{lacking[0]}", "missing: written by another errorseq; rerun site_calls"
        )
    return SiteSettings.from_summary(saved)


def aligned_calls(found: Candidates, calls_path: Path) -> pl.DataFrame:
    """corrected_calls.parquet's candidate rows in the rebuilt candidates' order; refused unless
    they are the same candidates in the same folds."""
    calls = pl.read_parquet(calls_path).filter(pl.col("is_candidate"))
    calls = calls.with_columns(candidate_ids(calls))
    rebuilt = found.table.select(candidate_ids(found.table), pl.col("fold").alias("rebuilt_fold"))
    joined = rebuilt.join(calls, on="id", how="left", maintain_order="left")
    same_folds = (joined["fold"] == joined["rebuilt_fold"]).fill_null(False)
    if calls.height != found.table.height or not bool(same_folds.all()):
        differ = int((~same_folds).sum())
        raise InputError(
            calls_path,
            "candidates",
            f"site_calls wrote {calls.height:,} candidates, rebuilt here {found.table.height:,} "
            f"({differ:,} absent or in another fold): the run's inputs or settings changed since",
        )
    return joined.drop("rebuilt_fold")


def regions_of(root: Path, metrics: dict) -> str | None:
    """A whole-region scan's regions table (site_metrics.json's whole_region.scored), else None."""
    if (metrics.get("whole_region") or {}).get("scored") != "regions":
        return None
    return str(existing(root / layout.REGIONS_TABLE, "regions"))


def read_site_run(
    root: str | Path, scores: list[str] | None = None, progress: Callable[[str], None] = lambda line: None
) -> SiteRun:
    """The run folder `root` (module docstring); `scores`: its scores tables when not the shards."""
    root = Path(root)
    metrics_path = existing(root / layout.SITE_METRICS, "site_metrics")
    metrics = json.loads(metrics_path.read_text())
    settings = run_settings(metrics, metrics_path)
    annotation = {
        name: existing(root / layout.annotation_table(name), name) for name in layout.ANNOTATION_TABLES
    }
    genome = existing(root / layout.GENOME_DIR, "genome")
    inputs = read_site_inputs(
        scores or shard_tables(root),
        str(annotation["sites"]),
        str(annotation["genes"]),
        str(annotation["gene_clusters"]),
        str(genome),
        regions_of(root, metrics),
    )
    exons = read_table(annotation["exons"], required=EXON_COLUMNS, columns=EXON_COLUMNS).with_columns(
        pl.col("start", "end").cast(pl.Int64)
    )
    found = folded_candidates(inputs, settings, progress=progress)
    calls = aligned_calls(found, existing(root / layout.SITE_CORRECTED_CALLS, "corrected_calls"))
    return SiteRun(root, settings, metrics, inputs, exons, found, Items.from_candidates(found), calls)


def column_or_none(run: SiteRun, name: str) -> np.ndarray | None:
    """A per-candidate column of corrected_calls.parquet as floats (NaN where null), or None."""
    if name not in run.calls.columns:
        return None
    return run.calls[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
