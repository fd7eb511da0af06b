"""Made-up base-model scores for the site_calls tests: one chromosome, every gene position
scored, peaks planted where a test wants them."""

from __future__ import annotations

import numpy as np
import polars as pl

from workflow_scripts.calling.scores import Scores, encode, genome_groups
from workflow_scripts.data.genome import Genome
from workflow_scripts.sites.settings import SiteSettings

CHROM = "chr1"
BACKGROUND = 1e-4
GROUPS = genome_groups([CHROM])


def settings(**changed) -> SiteSettings:
    values = {
        "threshold": 0.5,
        "consensus_window": 2,
        "floor": 0.005,
        "peak_radius": 2,
        "folds": 5,
        "flank": 25,
        "bootstrap_replicates": 200,
        "seed": 0,
        "tree": {
            "max_iter": 30,
            "learning_rate": 0.1,
            "max_leaf_nodes": 15,
            "min_samples_leaf": 5,
            "l2_regularization": 0.0,
        },
    }
    return SiteSettings.from_completed({**values, "model": False, **changed})


def scores_of(frame: pl.DataFrame) -> Scores:
    """Scores from rows chrom, strand, position, donor, acceptor (one row per position)."""
    keys = encode(frame, GROUPS)
    order = np.argsort(keys)
    return Scores(
        keys[order],
        frame["donor"].to_numpy()[order].astype(np.float32),
        frame["acceptor"].to_numpy()[order].astype(np.float32),
        GROUPS,
    )


def gene_rows(gene_id: str, start: int, end: int, strand: str) -> pl.DataFrame:
    positions = np.arange(start, end + 1)
    return pl.DataFrame(
        {
            "chrom": CHROM,
            "strand": strand,
            "position": positions,
            "donor": np.full(len(positions), BACKGROUND),
            "acceptor": np.full(len(positions), BACKGROUND),
        }
    )


def set_scores(frame: pl.DataFrame, splice_type: str, values: dict[int, float]) -> pl.DataFrame:
    """`frame` with `splice_type` scores set at {position: value}."""
    column = frame[splice_type].to_numpy().copy()
    positions = frame["position"].to_numpy()
    for position, value in values.items():
        column[positions == position] = value
    return frame.with_columns(pl.Series(splice_type, column))


def site_table(rows: list[tuple[str, int, str, str]]) -> pl.DataFrame:
    """Annotated sites from (gene_id, position, strand, splice_type)."""
    return pl.DataFrame(
        {
            "gene_id": [r[0] for r in rows],
            "transcript_id": [f"{r[0]}.1" for r in rows],
            "chrom": CHROM,
            "position": [r[1] for r in rows],
            "strand": [r[2] for r in rows],
            "splice_type": [r[3] for r in rows],
        },
        schema={
            "gene_id": pl.String,
            "transcript_id": pl.String,
            "chrom": pl.String,
            "position": pl.Int64,
            "strand": pl.String,
            "splice_type": pl.String,
        },
    )


def gene_table(rows: list[tuple[str, int, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "gene_id": [r[0] for r in rows],
            "chrom": CHROM,
            "start": [r[1] for r in rows],
            "end": [r[2] for r in rows],
            "strand": [r[3] for r in rows],
        }
    )


def profile_genome(
    n_genes: int = 40, peaks: int = 6, seed: int = 0, mirrored: bool = False, profile_signal: bool = True
):
    """Genes alternating + and - strand, each with `peaks` donor peaks of random score (0.05-0.95).
    Half the peaks are annotated donors: those have an acceptor bump (0.004, below the floor, so no
    candidate) 10 nt downstream in the transcript's direction; the others have it 10 nt upstream.
    The donor score says nothing about the truth; the acceptor profile says everything (`mirrored`:
    the other way round, upstream marks the annotated donors; not `profile_signal`: no bumps, so
    no score says anything).
    Returns (Scores, sites, genes, clusters): genes 2i and 2i+1 form one gene cluster."""
    rng = np.random.default_rng(seed)
    frames, sites, genes = [], [], []
    for index in range(n_genes):
        gene_id, strand, start = f"g{index:03d}", "+-"[index % 2], 1000 * index + 1
        sign = 1 if strand == "+" else -1
        frame = gene_rows(gene_id, start, start + 499, strand)
        donors, bumps = {}, {}
        for peak in range(start + 60, start + 60 + 60 * peaks, 60):
            true = bool(rng.random() < 0.5)
            donors[peak] = float(rng.uniform(0.05, 0.95))
            if profile_signal:
                bumps[peak + sign * (10 if true != mirrored else -10)] = 0.004
            if true:
                sites.append((gene_id, peak, strand, "donor"))
        frames.append(set_scores(set_scores(frame, "donor", donors), "acceptor", bumps))
        genes.append((gene_id, start, start + 499, strand))
    clusters = pl.DataFrame(
        {"gene_id": [g[0] for g in genes], "gene_cluster": [f"c{i // 2:03d}" for i in range(n_genes)]}
    )
    return scores_of(pl.concat(frames)), site_table(sites), gene_table(genes), clusters


COMPLEMENT = str.maketrans("ACGT", "TGCA")


def motif_genome(sites: pl.DataFrame, length: int, motif: str | None, seed: int = 0) -> Genome:
    """One random chromosome of `length` nt; `motif` (None: none, up to 10 nt) written right after
    every annotated site in the transcript's direction (reverse-complemented on the minus strand),
    so a window of 50 nt each side of a site holds it and the windows of candidates 60 nt away
    hold at most one of its bases."""
    bases = bytearray(np.random.default_rng(seed).choice(list(b"ACGT"), length).astype(np.uint8).tobytes())
    planted = zip(sites["position"].to_list(), sites["strand"].to_list()) if motif else ()
    for position, strand in planted:
        if strand == "+":
            start, text = position + 1, motif  # 1-based: the motif's first base
        else:
            start, text = position - len(motif), motif.translate(COMPLEMENT)[::-1]
        bases[start - 1 : start - 1 + len(motif)] = text.encode("ascii")
    return Genome([CHROM], np.array([length]), np.frombuffer(bytes(bases), dtype=np.uint8))
