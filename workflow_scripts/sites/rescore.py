"""Corrected calls on a genome without an annotation (calling.start regions, the rescore_sites rule).

The base model's scores over the target regions (calling/target_regions.py) give candidates as
site_calls finds them (sites/candidates.py: local maxima at or above sites.floor, features
along ±sites.flank), with no annotated site to match: none is true or missed, and each lies in
its region (`region`, the regions table's gene_id). Another genome's re-scorer (sites.transfer,
sites/rescorer_files.py) calls them unchanged, as site_calls' transferred predictors do:

    transfer_base_tuned   the base score at the source's per-type thresholds
    transfer_tree         the source's tree on the score profiles, at its thresholds
    transfer_errorseq     the source's deep models' mean probability (when it carries them)

beside `base_threshold`, the base model's own call (score >= calling.threshold). The corrected
calls are the predictor the re-scorer recommends (corrected_predictor: site_calls' out-of-fold
choice on its source genome) where that choice was made over whole regions (every call counted,
sites/whole_region.py); a re-scorer without that evidence, or no re-scorer (sites.transfer unset:
none is fitted with this base model), gives the base model's own calls. Without an annotation
nothing here can say whether they are right, so the report has no metrics and says so.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER, GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.scores import POSITION_BITS, SPLICE_TYPES
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.sites.candidates import Candidates, find_candidates
from workflow_scripts.sites.inputs import SiteInputs
from workflow_scripts.sites.predictors import (
    BASE_THRESHOLD,
    BASE_TUNED,
    CALL_COLUMNS,
    ERRORSEQ,
    SCORE_COLUMNS,
    THRESHOLD_COLUMNS,
    TRANSFER_BASE_TUNED,
    TRANSFER_ERRORSEQ,
    TRANSFER_TREE,
    TREE,
)
from workflow_scripts.sites.settings import SiteSettings

SOURCE_OF = {TRANSFER_BASE_TUNED: BASE_TUNED, TRANSFER_TREE: TREE, TRANSFER_ERRORSEQ: ERRORSEQ}
NO_METRICS = (
    "calling.start regions: the genome has no annotation here, so nothing tells a right call from "
    "a wrong one: no precision, recall, F1 or intervals. What the re-scorer reached on annotated "
    "genes is in its own folder (rescorer.json: results) and docs/sites.md"
)


def region_inputs(scores: list[str], regions: str, genome: str) -> SiteInputs:
    """SiteInputs whose genes are the target regions and that hold no annotated site."""
    opened = open_genome(genome)
    spans = read_table(regions, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    no_sites = pl.DataFrame(
        schema={name: pl.Int64 if name == "position" else pl.String for name in SITE_COLUMNS}
    )
    no_clusters = pl.DataFrame(schema={"gene_id": pl.String, GENE_CLUSTER: pl.String})
    return SiteInputs(opened, no_sites, spans, no_clusters, list(scores))


def region_candidates(
    inputs: SiteInputs, settings: SiteSettings, progress: Callable[[str], None] = lambda line: None
) -> tuple[Candidates, dict]:
    """Every candidate of the regions' scores, and the scores' report (ScoreTables.report). The
    columns site_calls' folds add are constant here (no fold; a region is its own cluster), so
    the deep models' windows are cut by site_calls' own code (sites/candidate_windows.py)."""
    tables = inputs.score_tables()
    found = find_candidates(tables.by_chromosome(), inputs.sites, inputs.genes, settings, progress=progress)
    found.table = found.table.with_columns(
        pl.col("gene_id").alias(GENE_CLUSTER), fold=pl.lit(0, dtype=pl.Int64)
    )
    return found, tables.report()


TRANSFERRED = {ERRORSEQ: TRANSFER_ERRORSEQ, TREE: TRANSFER_TREE, BASE_TUNED: TRANSFER_BASE_TUNED}
NO_WHOLE_REGION_EVIDENCE = (
    "the re-scorer carries no whole-region evidence (its source's site_calls did not scan whole "
    "regions, so nothing shows its calls beat the base's where every call counts): the base "
    "model's own calls at calling.threshold"
)


NO_RESCORER = (
    "no re-scorer given (sites.transfer unset; a re-scorer corrects only the base model it was fitted "
    "with, and none may be fitted with this one): the base model's own calls at calling.threshold"
)


def whole_region_evidence(results: dict) -> bool:
    """Whether the re-scorer's recommendation was made over whole regions: its source's site_calls
    scanned whole regions (calling.regions with start annotation) and recommended by them."""
    scanned = (results.get("whole_region") or {}).get("scored") == "regions"
    return scanned and (results.get("recommended") or {}).get("basis") == "whole region"


def corrected_predictor(
    has_deep_models: bool, recommended: str | None = None, whole_region: bool = False
) -> str:
    """The predictor the re-scorer's own evidence recommends (its manifest's results.recommended:
    site_calls' out-of-fold choice on the source genome, sites/recommend.py), applied unchanged
    here, only where that choice was made over whole regions (`whole_region`); else, or where it
    chose the base at its threshold, the base model's own calls (base_threshold). Where no
    re-scorer beat the base's re-tuned threshold there but re-tuning did, the calls are the base
    model's at the source's thresholds."""
    chosen = TRANSFERRED.get(recommended or "")
    if not whole_region or chosen is None or (chosen == TRANSFER_ERRORSEQ and not has_deep_models):
        return BASE_THRESHOLD
    return chosen


def corrected_choice(has_deep_models: bool, results: dict) -> tuple[str, str]:
    """(predictor, why) from the re-scorer manifest's results."""
    recommended = (results.get("recommended") or {}).get("predictor")
    evidence = whole_region_evidence(results)
    predictor = corrected_predictor(has_deep_models, recommended, evidence)
    if not evidence:
        return predictor, NO_WHOLE_REGION_EVIDENCE
    return predictor, (
        f"the re-scorer's own out-of-fold evidence over whole regions of its source genome recommends {recommended}"
    )


def rescored_calls(
    found: Candidates,
    threshold: float,
    thresholds: dict[str, dict[str, float]],
    tree_probability: np.ndarray | None,
    deep_probability: np.ndarray | None,
) -> pl.DataFrame:
    """One row per candidate in genome order: where, its region, the base score, each predictor's
    probability, threshold and call. `thresholds`: the re-scorer's, source predictor -> type ->
    threshold (sites/rescorer.py). No re-scorer (`tree_probability` None): the base's call alone."""
    table = found.table
    types = table["splice_type"].to_numpy()
    base = table["base_score"].to_numpy().astype(float)
    values = {} if tree_probability is None else {TRANSFER_BASE_TUNED: base, TRANSFER_TREE: tree_probability}
    if deep_probability is not None:
        values[TRANSFER_ERRORSEQ] = deep_probability
    columns = [pl.Series(CALL_COLUMNS[BASE_THRESHOLD], base >= threshold)]
    if tree_probability is not None:
        columns.insert(0, pl.Series(SCORE_COLUMNS[TRANSFER_TREE], tree_probability, dtype=pl.Float32))
    if deep_probability is not None:
        columns.append(pl.Series(SCORE_COLUMNS[TRANSFER_ERRORSEQ], deep_probability, dtype=pl.Float32))
    for name, value in values.items():
        by_type = thresholds[SOURCE_OF[name]]
        cut = np.array([by_type[t] for t in types], dtype=float) if len(types) else np.empty(0)
        columns += [pl.Series(CALL_COLUMNS[name], value >= cut), pl.Series(THRESHOLD_COLUMNS[name], cut)]
    chrom_order = (pl.col("key") // (1 << (POSITION_BITS + 1))).alias("chrom_order")
    rows = table.with_columns(*columns).rename({"gene_id": "region"})
    ordered = rows.sort(chrom_order, "position", "strand", "splice_type")
    leading = ["chrom", "position", "strand", "splice_type", "region", "base_score"]
    return ordered.select(leading + [column.name for column in columns])


def call_counts(table: pl.DataFrame) -> dict:
    """Calls per predictor and splice type."""
    counts = {}
    for name, column in CALL_COLUMNS.items():
        if column in table.columns:
            called = table.filter(pl.col(column))
            by_type = {t: int((called["splice_type"] == t).sum()) for t in SPLICE_TYPES}
            counts[name] = {"calls": called.height, **by_type}
    return counts


def answer(predictor: str, table: pl.DataFrame, regions: int, region_nt: int, rescorer: bool = True) -> str:
    counts = call_counts(table)
    chosen, base = counts[predictor], counts[BASE_THRESHOLD]
    reached = "the report says what the re-scorer reached where it was" if rescorer else "no re-scorer"
    return (
        f"{chosen['calls']:,} corrected calls ({chosen['donor']:,} donors, "
        f"{chosen['acceptor']:,} acceptors) by {predictor} among {table.height:,} candidates in "
        f"{regions:,} regions ({region_nt:,} nt, each strand counted); the base model alone calls {base['calls']:,} at its "
        f"threshold. No annotation: these are not measured here ({reached})"
    )
