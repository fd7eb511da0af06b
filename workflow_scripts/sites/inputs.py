"""What site_calls and site_windows read, and the candidates with their folds that both derive
from it: the same inputs, settings and code, so both see the same candidates in the same folds
(site_calls checks this against site_windows' runs: sites/errorseq.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from workflow_scripts.calling.contract import GENE_CLUSTER, GENE_COLUMNS, SITE_COLUMNS
from workflow_scripts.calling.genome_checks import check_chromosomes
from workflow_scripts.calling.score_profiles import with_score_profiles
from workflow_scripts.calling.scores import ScoreTables
from workflow_scripts.data.fasta import open_genome
from workflow_scripts.data.genome import Genome
from workflow_scripts.data.tables import read_table
from workflow_scripts.sites.candidate_windows import candidate_windows
from workflow_scripts.sites.candidates import Candidates, find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.settings import SiteSettings


@dataclass
class SiteInputs:
    genome: Genome
    sites: pl.DataFrame
    genes: pl.DataFrame
    clusters: pl.DataFrame
    scores: list[str]
    regions: pl.DataFrame | None = None  # a whole-region scan's scored regions (calling.regions)

    @property
    def scored_spans(self) -> pl.DataFrame:
        """What was scored: the regions of a whole-region scan, else the genes' spans."""
        return self.genes if self.regions is None else self.regions

    def score_tables(self) -> ScoreTables:
        return ScoreTables(self.scores, self.scored_spans, self.genome.chrom_lengths())


def read_site_inputs(
    scores: list[str], sites: str, genes: str, gene_clusters: str, genome: str, regions: str | None = None
) -> SiteInputs:
    opened = open_genome(genome)
    site_table = read_table(sites, required=SITE_COLUMNS).with_columns(pl.col("position").cast(pl.Int64))
    gene_table = read_table(genes, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
    check_chromosomes(gene_table, opened, genes, "column 'chrom'")
    check_chromosomes(site_table, opened, sites, "column 'chrom'")
    clusters = read_table(
        gene_clusters, required=("gene_id", GENE_CLUSTER), columns=("gene_id", GENE_CLUSTER)
    )
    spans = None
    if regions:  # calling.regions with start annotation: the candidates of the whole regions
        spans = read_table(regions, required=GENE_COLUMNS).with_columns(pl.col("start", "end").cast(pl.Int64))
        check_chromosomes(spans, opened, regions, "column 'chrom'")
    return SiteInputs(opened, site_table, gene_table, clusters, list(scores), spans)


def folded_candidates(
    inputs: SiteInputs, settings: SiteSettings, progress: Callable[[str], None] = lambda line: None
) -> Candidates:
    """Every candidate and scored site with its gene_cluster and fold (sites/folds.py)."""
    tables = inputs.score_tables()
    found = find_candidates(tables.by_chromosome(), inputs.sites, inputs.genes, settings, progress=progress)
    tables.report()
    return assign_folds(found, inputs.clusters, settings.folds, settings.seed, inputs.genes)


def profiled_windows(found: Candidates, inputs: SiteInputs, flank: int) -> tuple[pl.DataFrame, dict]:
    """Every candidate as a window of `flank` nt each side with the base model's score profiles
    along it (sites/candidate_windows.py, calling/score_profiles.py), in the candidates' order, and
    the profiles' report (bases, scored bases)."""
    windows = candidate_windows(found.table, inputs.genome, flank)
    parts = inputs.score_tables().by_chromosome(set(windows["chrom"].unique().to_list()))
    return with_score_profiles(windows, parts, inputs.genome.chrom_lengths(), flank)
