"""Deterministic synthetic genome + splice-site calls with a learnable error signal.

Error calls (FP/FN) get MOTIF planted within +-30 nt of the site with
probability 0.93, correct calls (TP/TN) with probability 0.04, written in the
site's strand orientation (reverse-complemented on the genome for '-' genes).
Sites are spaced >= MIN_SPACING nt apart inside a gene, so with flank 200 a
window only ever holds its own site's motif. Genes are short at the edges
(first/last site 30-260 nt from the gene boundary), so with the default flank
about half of the windows reach past their gene into intergenic DNA (extraction
takes the flank from the genome there). Calls per gene are geometric around the
mean (with 20 calls per gene only ~10% of the windows reach outside, since only
edge sites do). A few short N runs lie 150 nt before some genes, so some windows
hold N, in both classes alike.

Intergenic DNA also carries the motif as a genomic element (both orientations,
about one copy per ELEMENT_SPACING nt), the way regulatory elements and repeats
recur in real genomes, but only farther than ELEMENT_MARGIN nt from any gene:
windows (flank up to ELEMENT_MARGIN + 30) never reach an element, so the labelled
data hold only the planted signal; unlabeled genome windows (`pretrain.source:
genome`) show the element often, which is what masked-LM pretraining can learn.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.io_utils import atomic_path

# Two copies of an 8-mer: with every window 401 nt long, the default model of the tiny demo
# (n_genes 400, 3 epochs) learnt one 8-mer too slowly (test ROC-AUC 0.70), the 16-mer at once (1.0, seeds 0-2).
MOTIF = "TACGGATC" * 2
MOTIF_REACH = 30
PRED_TYPES = np.array(["TP", "TN", "FP", "FN"])
PRED_PROBABILITIES = (0.35, 0.25, 0.20, 0.20)
PLANT_PROBABILITY = {"error": 0.93, "correct": 0.04}  # best possible ROC-AUC ≈ 0.945
ELEMENT_SPACING = 60  # mean nt of intergenic DNA per motif copy
ELEMENT_MARGIN = 300  # nt next to a gene kept free of elements
INTERGENIC = (900, 1600)  # least and most nt between two genes
LINE_WIDTH = 60
N_CHROMOSOMES = 3
MIN_SPACING = 250  # least nt between two sites of a gene
_COMPLEMENT = str.maketrans("ACGT", "TGCA")


def reverse_complement(text: str) -> str:
    return text.translate(_COMPLEMENT)[::-1]


def layout_genes(
    rng, n_genes: int, calls_per_gene: float, n_chromosomes: int, min_spacing: int
) -> pl.DataFrame:
    """One row per call: chromosome, gene span and 0-based site offset (no sequence yet)."""
    counts = rng.geometric(1.0 / calls_per_gene, n_genes)
    gene_of_call = np.repeat(np.arange(n_genes), counts)
    gaps = rng.integers(min_spacing, min_spacing + 200, len(gene_of_call))
    first_of_gene = np.concatenate([[0], np.cumsum(counts)[:-1]])
    gaps[first_of_gene] = rng.integers(30, 260, n_genes)  # left edge: site offset from gene start
    offsets = np.cumsum(gaps)
    offsets -= np.repeat(offsets[first_of_gene] - gaps[first_of_gene], counts)
    last_offset = offsets[first_of_gene + counts - 1]
    gene_length = last_offset + rng.integers(30, 260, n_genes) + 1
    intergenic = rng.integers(*INTERGENIC, n_genes)
    chrom = np.sort(rng.integers(0, n_chromosomes, n_genes))
    chrom[:n_chromosomes] = np.arange(min(n_chromosomes, n_genes))  # every chromosome gets a gene
    chrom = np.sort(chrom)
    span = gene_length + intergenic
    gene_start0 = np.cumsum(span) - span + intergenic  # 0-based, before per-chromosome reset
    chrom_first = np.searchsorted(chrom, chrom, side="left")
    gene_start0 -= (np.cumsum(span) - span)[chrom_first]
    return pl.DataFrame(
        {
            "gene": gene_of_call,
            "chrom_index": chrom[gene_of_call],
            "gene_start0": gene_start0[gene_of_call],
            "gene_length": gene_length[gene_of_call],
            "site0": gene_start0[gene_of_call] + offsets,
            "minus": (rng.random(n_genes) < 0.5)[gene_of_call],
        }
    )


def random_bases(rng, length: int) -> np.ndarray:
    return np.frombuffer(b"ACGT", dtype=np.uint8)[rng.integers(0, 4, length)]


def chromosome_lengths(layout: pl.DataFrame, n_chromosomes: int, tail: int) -> np.ndarray:
    ends = layout.group_by("chrom_index").agg(
        (pl.col("gene_start0") + pl.col("gene_length")).max().alias("end")
    )
    lengths = np.full(n_chromosomes, tail, dtype=np.int64)
    lengths[ends["chrom_index"].to_numpy()] += ends["end"].to_numpy()
    return lengths


def plant_motifs(rng, sequences: list[np.ndarray], layout: pl.DataFrame, is_error: np.ndarray) -> None:
    """Write MOTIF (oriented to the site's strand) near the chosen sites, in place."""
    chance = np.where(is_error, PLANT_PROBABILITY["error"], PLANT_PROBABILITY["correct"])
    chosen = rng.random(layout.height) < chance
    shift = rng.integers(-MOTIF_REACH, MOTIF_REACH - len(MOTIF) + 2, layout.height)
    forward = np.frombuffer(MOTIF.encode(), np.uint8)
    backward = np.frombuffer(reverse_complement(MOTIF).encode(), np.uint8)
    site, minus = layout["site0"].to_numpy(), layout["minus"].to_numpy()
    # Oriented offsets shift..shift+7 map to genome site-shift-7..site-shift on '-'.
    first = np.where(minus, site - shift - len(MOTIF) + 1, site + shift)
    for chrom_index, sequence in enumerate(sequences):
        rows = np.flatnonzero(chosen & (layout["chrom_index"].to_numpy() == chrom_index))
        index = first[rows, None] + np.arange(len(MOTIF))
        sequence[index] = np.where(minus[rows, None], backward, forward)


def gene_free_intervals(layout: pl.DataFrame, chrom_index: int, length: int, margin: int = 0) -> np.ndarray:
    """[start, end) 0-based intervals of one chromosome farther than `margin` nt from any gene."""
    genes = layout.filter(pl.col("chrom_index") == chrom_index).unique("gene").sort("gene_start0")
    starts = genes["gene_start0"].to_numpy() - margin
    ends = starts + genes["gene_length"].to_numpy() + 2 * margin
    free = np.column_stack([np.concatenate([[0], ends]), np.concatenate([starts, [length]])])
    return free[free[:, 0] < free[:, 1]]


def plant_elements(rng, sequence: np.ndarray, free: np.ndarray) -> None:
    """Non-overlapping copies of MOTIF, either orientation, one per ELEMENT_SPACING nt of
    gene-free DNA on average."""
    copies = np.stack(
        [np.frombuffer(MOTIF.encode(), np.uint8), np.frombuffer(reverse_complement(MOTIF).encode(), np.uint8)]
    )
    for start, end in free:
        gaps = rng.integers(len(MOTIF), 2 * ELEMENT_SPACING - len(MOTIF), (end - start) // len(MOTIF))
        firsts = start + np.cumsum(gaps) - len(MOTIF)
        firsts = firsts[firsts + len(MOTIF) <= end]
        index = firsts[:, None] + np.arange(len(MOTIF))
        sequence[index] = copies[rng.integers(2, size=len(firsts))]


def decorate(rng, sequence: np.ndarray, gene_free: np.ndarray) -> None:
    """Soft-mask some stretches (lower-case) and put a few N runs in intergenic DNA."""
    for _ in range(max(1, len(sequence) // 50_000)):
        start = int(rng.integers(0, len(sequence)))
        sequence[start : start + int(rng.integers(100, 2000))] |= 0x20
    for start in rng.choice(gene_free, size=min(3, len(gene_free)), replace=False):
        sequence[start : start + int(rng.integers(20, 120))] = ord("N")


def intergenic_starts(layout: pl.DataFrame, chrom_index: int) -> np.ndarray:
    """0-based positions 150 nt before each gene (always inside the intergenic gap)."""
    genes = layout.filter(pl.col("chrom_index") == chrom_index).unique("gene")
    return np.sort(genes["gene_start0"].to_numpy() - 150)


def build_genome(
    rng, layout: pl.DataFrame, n_chromosomes: int, is_error: np.ndarray, element_rng
) -> list[np.ndarray]:
    lengths = chromosome_lengths(layout, n_chromosomes, tail=int(rng.integers(500, 2000)))
    sequences = [random_bases(rng, int(length)) for length in lengths]
    plant_motifs(rng, sequences, layout, is_error)
    for chrom_index, sequence in enumerate(sequences):
        plant_elements(
            element_rng, sequence, gene_free_intervals(layout, chrom_index, len(sequence), ELEMENT_MARGIN)
        )
        decorate(rng, sequence, intergenic_starts(layout, chrom_index))
    return sequences


def fasta_bytes(sequences: list[np.ndarray]) -> bytes:
    parts = []
    for i, sequence in enumerate(sequences):
        raw = sequence.tobytes()
        lines = [raw[j : j + LINE_WIDTH] for j in range(0, len(raw), LINE_WIDTH)]
        parts.append(b">chr%d synthetic demo chromosome\n" % (i + 1) + b"\n".join(lines) + b"\n")
    return b"".join(parts)


def calls_table(rng, layout: pl.DataFrame, pred_types: np.ndarray) -> pl.DataFrame:
    predicted_positive = np.isin(pred_types, ["TP", "FP"])
    score = np.where(predicted_positive, rng.beta(5, 2, layout.height), rng.beta(2, 5, layout.height))
    return layout.select(
        pl.format("GENE{}", pl.col("gene").cast(pl.String).str.zfill(5)).alias("gene_id"),
        pl.format("chr{}", pl.col("chrom_index") + 1).alias("chrom"),
        (pl.col("site0") + 1).alias("position"),
        pl.when(pl.col("minus")).then(pl.lit("-")).otherwise(pl.lit("+")).alias("strand"),
        pl.Series("splice_type", np.where(rng.random(layout.height) < 0.5, "donor", "acceptor")),
        pl.Series("pred_type", pred_types),
        pl.Series("score", np.round(score, 4)),
        (pl.col("gene_start0") + 1).alias("gene_start"),
        (pl.col("gene_start0") + pl.col("gene_length")).alias("gene_end"),
    ).sort("chrom", "position")


def generate_demo(genome_path, calls_path, *, seed: int, n_genes: int, calls_per_gene: float) -> None:
    """Write the demo FASTA (gzip when the name ends in .gz, mtime 0) and calls TSV.

    seed, n_genes, calls_per_gene: the `demo:` config section (checked against the schema).
    """
    rng = np.random.default_rng(seed)
    layout = layout_genes(rng, n_genes, calls_per_gene, N_CHROMOSOMES, MIN_SPACING)
    pred_types = PRED_TYPES[rng.choice(len(PRED_TYPES), size=layout.height, p=PRED_PROBABILITIES)]
    # The elements draw from their own stream, so genes and calls are those of a genome without them.
    element_rng = np.random.default_rng([seed, 1])
    sequences = build_genome(rng, layout, N_CHROMOSOMES, np.isin(pred_types, ["FP", "FN"]), element_rng)
    fasta = fasta_bytes(sequences)
    if str(genome_path).endswith(".gz"):
        fasta = gzip.compress(fasta, compresslevel=6, mtime=0)
    with atomic_path(genome_path) as tmp:
        Path(tmp).write_bytes(fasta)
    with atomic_path(calls_path) as tmp:
        calls_table(rng, layout, pred_types).write_csv(tmp, separator="\t")
