"""A seeded synthetic genome at GENCODE's density, for the genome-scale benchmark (scale/genome_scale.py).

    python -m benchmarks.scale.synthetic_genome --mb 300 --out /tmp/errorseq-scale/300

Per 300 Mb: 20,000 multi-exon genes with 5 transcripts each (100,000, as GENCODE has per
~3 Gb of 60,000 genes but 1/10 of the sequence per gene), on both strands of `--chromosomes`
chromosomes of random sequence. Genes are log-normal in length (median 4 kb, so gene bodies cover
about 40% of the genome, as in human), each transcript draws its own 2-12 exons inside its gene
(alternative sites), and every intron carries GT...AG on its strand, so annotate_sites sees
canonical sites. Writes genome.fa (80 columns) and genes.gtf (gene, transcript, exon lines).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

GENES_PER_MB = 20_000 / 300
TRANSCRIPTS_PER_GENE = 5
MEDIAN_GENE_NT = 4_000
MIN_GENE_NT = 600
COMPLEMENT = bytes.maketrans(b"ACGT", b"TGCA")


def chromosome_lengths(total_nt: int, n: int, rng: np.random.Generator) -> np.ndarray:
    shares = rng.uniform(0.5, 1.5, n)
    return np.maximum((shares / shares.sum() * total_nt).astype(np.int64), 100_000)


def gene_spans(lengths: np.ndarray, n_genes: int, rng: np.random.Generator):
    """(chromosome index, start, end 1-based inclusive, strand) per gene."""
    chrom = rng.choice(lengths.size, n_genes, p=lengths / lengths.sum())
    size = np.clip(np.exp(rng.normal(np.log(MEDIAN_GENE_NT), 0.8, n_genes)), MIN_GENE_NT, 200_000).astype(
        np.int64
    )
    size = np.minimum(size, lengths[chrom] - 2)
    start = 1 + (rng.random(n_genes) * (lengths[chrom] - size - 1)).astype(np.int64)
    return chrom, start, start + size - 1, np.where(rng.random(n_genes) < 0.5, "+", "-")


def transcript_exons(start: int, end: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """2-12 exons inside [start, end]: sorted boundaries at least 5 nt apart (introns >= 4 nt, so
    an intron's GT and AG do not overlap)."""
    n_exons = int(rng.integers(2, 13))
    slots = np.arange(start, end + 1, 5)
    n_exons = min(n_exons, slots.size // 2)
    cuts = np.sort(rng.choice(slots, 2 * n_exons, replace=False))
    return [(int(cuts[2 * i]), int(cuts[2 * i + 1])) for i in range(n_exons)]


def plant_site_pairs(sequence: np.ndarray, exons: list[tuple[int, int]], strand: str) -> None:
    """GT after each donor and AG before each acceptor, on the transcript's strand (0-based array)."""
    for (_, left_end), (right_start, _) in zip(exons, exons[1:]):
        intron_first, intron_last = left_end + 1, right_start - 1  # 1-based
        if strand == "+":
            sequence[intron_first - 1 : intron_first + 1] = np.frombuffer(b"GT", np.uint8)
            sequence[intron_last - 2 : intron_last] = np.frombuffer(b"AG", np.uint8)
        else:  # GT and AG reverse-complemented: AC at the intron's right end, CT at its left
            sequence[intron_last - 2 : intron_last] = np.frombuffer(b"AC", np.uint8)
            sequence[intron_first - 1 : intron_first + 1] = np.frombuffer(b"CT", np.uint8)


def write_fasta(path: Path, names: list[str], sequences: list[np.ndarray]) -> None:
    with path.open("wb") as out:
        for name, sequence in zip(names, sequences):
            out.write(f">{name}\n".encode())
            whole = sequence.size // 80 * 80
            rows = sequence[:whole].reshape(-1, 80)
            out.write(np.hstack([rows, np.full((rows.shape[0], 1), ord("\n"), np.uint8)]).tobytes())
            if whole < sequence.size:
                out.write(sequence[whole:].tobytes() + b"\n")


def gtf_line(chrom, feature, start, end, strand, gene, transcript=None) -> str:
    ids = f'gene_id "{gene}";' + (f' transcript_id "{transcript}";' if transcript else "")
    return f'{chrom}\tsynthetic\t{feature}\t{start}\t{end}\t.\t{strand}\t.\t{ids} gene_biotype "protein_coding";\n'


def make_genome(mb: float, out: Path, chromosomes: int = 10, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    lengths = chromosome_lengths(int(mb * 1_000_000), chromosomes, rng)
    names = [f"chr{i + 1}" for i in range(chromosomes)]
    sequences = [rng.choice(np.frombuffer(b"ACGT", np.uint8), n) for n in lengths]
    n_genes = int(round(mb * GENES_PER_MB))
    chrom, starts, ends, strands = gene_spans(lengths, n_genes, rng)
    lines, n_exons = [], 0
    for g in np.argsort(chrom * (1 << 40) + starts, kind="stable"):
        gene, exons_of = f"G{g:06d}", []
        for t in range(TRANSCRIPTS_PER_GENE):
            exons = transcript_exons(int(starts[g]), int(ends[g]), rng)
            plant_site_pairs(sequences[chrom[g]], exons, strands[g])
            exons_of.append((f"{gene}.{t + 1}", exons))
        low, high = min(e[0][0] for _, e in exons_of), max(e[-1][1] for _, e in exons_of)
        lines.append(gtf_line(names[chrom[g]], "gene", low, high, strands[g], gene))
        for transcript, exons in exons_of:
            lines.append(
                gtf_line(
                    names[chrom[g]], "transcript", exons[0][0], exons[-1][1], strands[g], gene, transcript
                )
            )
            lines += [gtf_line(names[chrom[g]], "exon", s, e, strands[g], gene, transcript) for s, e in exons]
            n_exons += len(exons)
    write_fasta(out / "genome.fa", names, sequences)
    (out / "genes.gtf").write_text("".join(lines))
    return {
        "mb": mb,
        "chromosomes": chromosomes,
        "genome_nt": int(lengths.sum()),
        "genes": n_genes,
        "transcripts": n_genes * TRANSCRIPTS_PER_GENE,
        "exons": n_exons,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=30.0, help="genome size in Mb")
    parser.add_argument("--chromosomes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    print(make_genome(args.mb, args.out, args.chromosomes, args.seed))


if __name__ == "__main__":
    main()
