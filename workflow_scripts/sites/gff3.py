"""Called splice sites as GFF3: one feature per called candidate.

Column 3 is the Sequence Ontology term of the site: `five_prime_cis_splice_site` (SO:0000163,
"splice donor site") for a donor, `three_prime_cis_splice_site` (SO:0000164, "splice acceptor
site") for an acceptor. SO defines each as the intron's 2 bp bordering the exon, so a feature
spans those two bases (the GT of a donor, the AG of an acceptor, on the site's strand), not the
exon base errorseq's position names (docs/calling.md: a donor is the last exon base before the
intron, an acceptor the first exon base after it):

    + donor at p: p+1..p+2     - donor at p: p-2..p-1
    + acceptor at p: p-2..p-1  - acceptor at p: p+1..p+2

The attribute `position` keeps errorseq's own position, the one in the calls table and the BED
track (0-based start position-1). A call whose two intron bases would lie past its chromosome's
ends (a candidate at the first or last two bases, where no intron fits) has no feature: a comment
line counts them. Column 6 is the predictor's probability; the attributes are ID
(chrom:position:strand:splice_type, as site_windows names a candidate's window), Name (the splice
type), predictor, probability, annotated (yes / no: an annotated site within
calling.consensus_window; absent where there is no annotation) and position. The header has
`##gff-version 3` and a `##sequence-region` per chromosome of the genome index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

SO_TYPES = {"donor": "five_prime_cis_splice_site", "acceptor": "three_prime_cis_splice_site"}
SOURCE = "errorseq"
SEQID_SAFE = re.compile(r"[^a-zA-Z0-9.:^*$@!+_?|-]")  # GFF3: escape anything else in column 1
ATTRIBUTE_UNSAFE = re.compile(r"[;=&,%\t\n\r\x00-\x1f\x7f]")  # and these in attribute values


def percent_escaped(text: str, unsafe: re.Pattern) -> str:
    return unsafe.sub(lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode()), text)


def seqid(chrom: str) -> str:
    return percent_escaped(chrom, SEQID_SAFE)


def attribute_value(text: str) -> str:
    return percent_escaped(text, ATTRIBUTE_UNSAFE)


def intron_side(splice_type: str, strand: str) -> int:
    """+1 when the intron lies above the site's position (+ donor, - acceptor), -1 below."""
    return 1 if (splice_type == "donor") == (strand == "+") else -1


def feature_span(position: int, splice_type: str, strand: str) -> tuple[int, int]:
    """The 1-based inclusive span of the site's two intron bases (SO's splice site)."""
    if intron_side(splice_type, strand) > 0:
        return position + 1, position + 2
    return position - 2, position - 1


def site_position(start: int, splice_type: str, strand: str) -> int:
    """errorseq's position back from a feature's start (the inverse of feature_span)."""
    return start - 1 if intron_side(splice_type, strand) > 0 else start + 2


def header(chrom_lengths: dict[str, int]) -> list[str]:
    regions = (f"##sequence-region {seqid(name)} 1 {length}" for name, length in chrom_lengths.items())
    return ["##gff-version 3", *regions]


def feature_lines(
    rows: Iterable[dict], predictor: str, chrom_lengths: dict[str, int]
) -> tuple[list[str], int]:
    """One line per row that fits its chromosome, and how many did not."""
    lines, outside = [], 0
    for row in rows:
        chrom, position, strand, splice_type = (
            row["chrom"],
            row["position"],
            row["strand"],
            row["splice_type"],
        )
        start, end = feature_span(position, splice_type, strand)
        if start < 1 or end > chrom_lengths[chrom]:
            outside += 1
            continue
        probability = float(row["probability"])
        attributes = [
            ("ID", f"{chrom}:{position}:{strand}:{splice_type}"),
            ("Name", splice_type),
            ("predictor", predictor),
            ("probability", f"{probability:.4f}"),
        ]
        if row.get("annotated") is not None:
            attributes.append(("annotated", "yes" if row["annotated"] else "no"))
        attributes.append(("position", str(position)))
        column9 = ";".join(f"{key}={attribute_value(value)}" for key, value in attributes)
        columns = (seqid(chrom), SOURCE, SO_TYPES[splice_type], start, end, f"{probability:.4f}", strand, ".")
        lines.append("\t".join(map(str, columns)) + "\t" + column9)
    return lines, outside


def gff3_text(
    calls: pl.DataFrame, predictor: str, chrom_lengths: dict[str, int], annotated: str | None = "is_true_site"
) -> tuple[str, int]:
    """GFF3 of `calls` (chrom, position, strand, splice_type, probability, and the `annotated`
    column when given; in genome order), and the number of calls left out at chromosome ends."""
    columns = ["chrom", "position", "strand", "splice_type", "probability"]
    rows = calls.select(columns + ([pl.col(annotated).alias("annotated")] if annotated else []))
    lines, outside = feature_lines(rows.iter_rows(named=True), predictor, chrom_lengths)
    if outside:
        lines.append(
            f"# {outside} calls at a chromosome end, where their two intron bases do not fit, have no feature"
        )
    return "\n".join(header(chrom_lengths) + lines) + "\n", outside
