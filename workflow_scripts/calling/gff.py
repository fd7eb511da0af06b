"""Read a GTF or GFF3 file (plain or gzip) into exons, transcripts and genes.

The format is told from the attribute column of the first feature line (`key "value";` is GTF,
`key=value` is GFF3), so the file name does not matter. Only the features that define splice
sites are kept: exons, the transcripts they belong to, their genes, and which transcripts have a
CDS (a gene without a biotype attribute is protein_coding when one of its transcripts has a CDS).

GTF: every exon names its `gene_id` and `transcript_id`; a gene's span and biotype
(`gene_biotype` or `gene_type`) come from its `gene` line, else from its exons' attributes. A
canonical `tag` counts on the transcript line or on any of its exon lines (GENCODE and Ensembl
write tags on every line, other files on the transcript line only).
GFF3: features are linked by `ID` and `Parent` only: exons point at their transcript, transcripts
at their gene. Names are labels: a gene goes by its `gene_id` attribute and a transcript by its
`transcript_id` where present (Ensembl and GENCODE write both on transcript lines), else by `ID`;
where two IDs carry one name, both go by their IDs. An exon whose parent is itself a gene is used
only for genes that have no transcript with exons (NCBI files list such exons next to the
mRNA's). Every Parent must be defined in the file.

Text is UTF-8, decoded strictly (ids decoded with replacement could fuse two genes). Every problem
is an InputError naming the file and the line or attribute at fault; calling/geometry.py checks
where the exons lie.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from workflow_scripts.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
GTF_ATTRIBUTE = re.compile(r'\s*([^\s;"]+)\s+(?:"([^"]*)"|([^;\s]*))\s*;?')
BIOTYPE_KEYS = ("gene_biotype", "gene_type", "biotype")
CANONICAL_TAGS = ("Ensembl_canonical", "MANE_Select", "MANE Select", "RefSeq Select", "canonical")
TRANSCRIPT_KINDS = ("transcript", "mRNA")


@dataclass
class Annotation:
    """What the sites are made of; rows are tuples so a whole-genome file stays cheap."""

    path: str
    kind: str  # "GTF" or "GFF3"
    exons: list[tuple] = field(default_factory=list)  # (chrom, start, end, strand, transcript_id, line)
    transcripts: dict[str, dict] = field(default_factory=dict)  # id -> gene_id, order, canonical
    genes: dict[str, dict] = field(default_factory=dict)  # id -> chrom, start, end, strand, biotype, line
    coding: set[str] = field(default_factory=set)  # transcript ids with a CDS
    transcript_spans: dict[str, tuple] = field(default_factory=dict)  # id -> chrom, start, end, line


def open_binary(path: str | Path):
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "annotation", "file not found")
    with open(path, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
    return gzip.open(path, "rb") if compressed else open(path, "rb")


def decoded(path, number: int, raw: bytes) -> str:
    """One line as UTF-8, strictly: a Latin-1 id decoded with replacement could collide with another."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            path,
            f"line {number}",
            f"not UTF-8 text (byte {raw[error.start]:#04x} at column {error.start + 1})",
        ) from None


def unquoted(path, number: int, key: str, value: str) -> str:
    """A GFF3 attribute value with its %XX escapes decoded, strictly."""
    try:
        return unquote(value, errors="strict")
    except UnicodeDecodeError:
        raise InputError(path, f"line {number} {key}", f"{value!r} does not decode as UTF-8") from None


def feature_lines(path: str | Path):
    """(line number, the nine columns) of every feature line; a line with fewer columns is an error."""
    try:
        with open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                line = decoded(path, number, raw)
                if line.startswith("##FASTA"):
                    return
                if not line.strip() or line.startswith("#"):
                    continue
                columns = line.rstrip("\r\n").split("\t")
                if len(columns) < 9:
                    raise InputError(
                        path, f"line {number}", f"expected 9 tab-separated columns, found {len(columns)}"
                    )
                yield number, columns
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(path, "annotation", f"cannot be read ({error})") from None


def parse_gtf_attributes(text: str) -> dict[str, str]:
    """GTF attributes; a repeated key (tag "a"; tag "b";) keeps its values joined by ','."""
    found: dict[str, str] = {}
    for match in GTF_ATTRIBUTE.finditer(text):
        key, value = match.group(1), match.group(2) if match.group(2) is not None else match.group(3)
        found[key] = f"{found[key]},{value}" if key in found else value
    return found


def parse_gff3_attributes(text: str) -> dict[str, str]:
    found = {}
    for item in text.strip().strip(";").split(";"):
        key, sep, value = item.strip().partition("=")
        if sep:
            found[key] = value
    return found


def sniff_kind(path: str | Path) -> str:
    for number, columns in feature_lines(path):
        attributes = columns[8].strip()
        if re.match(r'^[^\s=;]+\s+"', attributes) or re.match(r"^[^\s=;]+\s+[^=]*;", attributes):
            return "GTF"
        if "=" in attributes:
            return "GFF3"
        raise InputError(path, f"line {number} attributes", 'neither GTF (key "value";) nor GFF3 (key=value)')
    raise InputError(path, "annotation", "no feature lines (is this a GTF or GFF3 file?)")


def coordinates(path, number: int, columns: list[str]) -> tuple[int, int, str]:
    try:
        start, end = int(columns[3]), int(columns[4])
    except ValueError:
        raise InputError(
            path, f"line {number} start/end", f"not integers ({columns[3]!r}, {columns[4]!r})"
        ) from None
    if start < 1 or end < start:
        raise InputError(path, f"line {number} start/end", f"need 1 <= start <= end (got {start}, {end})")
    strand = columns[6]
    return start, end, strand


def is_canonical(attributes: dict[str, str]) -> bool:
    """A whole tag among the feature's comma-separated tags: `non_canonical_U12` is not `canonical`."""
    tags = {unquote(tag).strip() for tag in attributes.get("tag", "").split(",")}
    return not tags.isdisjoint(CANONICAL_TAGS)


def biotype_of(attributes: dict[str, str]) -> str | None:
    return next((attributes[key] for key in BIOTYPE_KEYS if attributes.get(key)), None)


def read_annotation(path: str | Path) -> Annotation:
    kind = sniff_kind(path)
    annotation = read_gtf(path) if kind == "GTF" else read_gff3(path)
    if not annotation.exons:
        raise InputError(
            path, "feature 'exon'", f"no exon lines in this {kind} file; splice sites need exons"
        )
    return annotation


def read_gtf(path: str | Path) -> Annotation:
    annotation = Annotation(str(path), "GTF")
    tagged: set[str] = set()  # transcripts whose transcript line carries a canonical tag
    for number, columns in feature_lines(path):
        feature = columns[2]
        if feature not in ("exon", "gene", "CDS", "transcript"):
            continue
        attributes = parse_gtf_attributes(columns[8])
        start, end, strand = coordinates(path, number, columns)
        gene_id = attributes.get("gene_id")
        if not gene_id:
            raise InputError(path, f"line {number} gene_id", f"{feature} line without a gene_id attribute")
        if feature == "gene":
            known = annotation.genes.get(gene_id, {}).get("biotype")
            biotype = biotype_of(attributes) or known
            annotation.genes[gene_id] = gene_record(columns[0], start, end, strand, biotype, number)
            continue
        transcript_id = attributes.get("transcript_id")
        if not transcript_id:
            raise InputError(
                path, f"line {number} transcript_id", f"{feature} line without a transcript_id attribute"
            )
        if feature == "CDS":
            annotation.coding.add(transcript_id)
            continue
        if feature == "transcript":
            annotation.transcript_spans[transcript_id] = (columns[0], start, end, number)
            if is_canonical(attributes):
                tagged.add(transcript_id)
            continue
        add_transcript(annotation, transcript_id, gene_id, is_canonical(attributes))
        annotation.exons.append((columns[0], start, end, strand, transcript_id, number))
        note_exon_biotype(annotation, gene_id, columns[0], strand, biotype_of(attributes), number)
    for transcript_id in tagged & annotation.transcripts.keys():
        annotation.transcripts[transcript_id]["canonical"] = True
    return annotation


def note_exon_biotype(annotation: Annotation, gene_id: str, chrom, strand, biotype, line) -> None:
    """GTFs without gene lines (or whose gene lines lack a biotype) carry it on the exons."""
    if not biotype:
        return
    gene = annotation.genes.get(gene_id)
    if gene is None:
        annotation.genes[gene_id] = gene_record(chrom, None, None, strand, biotype, line)
    elif gene["biotype"] is None:
        gene["biotype"] = biotype


def gene_record(chrom, start, end, strand, biotype, line) -> dict:
    return {"chrom": chrom, "start": start, "end": end, "strand": strand, "biotype": biotype, "line": line}


def add_transcript(annotation: Annotation, transcript_id: str, gene_id: str, canonical: bool) -> None:
    record = annotation.transcripts.get(transcript_id)
    if record is None:
        annotation.transcripts[transcript_id] = {
            "gene_id": gene_id,
            "order": len(annotation.transcripts),
            "canonical": canonical,
        }
    elif record["gene_id"] != gene_id:
        raise InputError(
            annotation.path,
            f"transcript_id '{transcript_id}'",
            f"belongs to two genes ({record['gene_id']!r} and {gene_id!r})",
        )
    else:
        record["canonical"] |= canonical


def read_gff3(path: str | Path) -> Annotation:
    """Resolve Parent links after the whole file is read (GFF3 allows forward references)."""
    parents_of: dict[str, dict] = {}  # ID -> the feature's own record (not exons, not CDS)
    exons: list[tuple] = []  # (chrom, start, end, strand, parents, line)
    coding_parents: list[tuple] = []  # (parents, line)
    for number, columns in feature_lines(path):
        attributes = parse_gff3_attributes(columns[8])
        parents = tuple(attributes["Parent"].split(",")) if attributes.get("Parent") else ()
        feature = columns[2]
        if feature == "exon":
            start, end, strand = coordinates(path, number, columns)
            exons.append((columns[0], start, end, strand, parents, number))
        elif feature == "CDS":
            coding_parents.append((parents, number))
        elif "ID" in attributes:
            start, end, strand = coordinates(path, number, columns)
            parents_of[attributes["ID"]] = {
                "feature": feature,
                "parents": parents,
                "line": number,
                "chrom": columns[0],
                "start": start,
                "end": end,
                "strand": strand,
                "biotype": biotype_of(attributes),
                "name": unquoted(path, number, "attributes", feature_name(attributes, parents)),
                "canonical": is_canonical(attributes),
            }
    return assemble_gff3(path, name_by_id_where_shared(parents_of), exons, coding_parents)


def feature_name(attributes: dict[str, str], parents: tuple[str, ...]) -> str:
    """The name a feature goes by, from its role: a gene (no Parent) by its `gene_id`, a transcript
    by its `transcript_id` (Ensembl and GENCODE write both on transcript lines), else by its ID."""
    role_key = "transcript_id" if parents else "gene_id"
    return attributes.get(role_key) or attributes["ID"]


def name_by_id_where_shared(features: dict[str, dict]) -> dict[str, dict]:
    """Features are told apart by ID (the format's key): where two IDs of one role carry the same
    transcript_id or gene_id (RefSeq's X/Y copies of one transcript), each goes by its ID instead."""
    ids_of: dict[tuple[bool, str], list[str]] = {}
    for identifier, record in features.items():
        ids_of.setdefault((bool(record["parents"]), record["name"]), []).append(identifier)
    for identifiers in ids_of.values():
        if len(identifiers) > 1:
            for identifier in identifiers:
                features[identifier]["name"] = identifier
    return features


def defined_parent(path, features: dict, parent: str, line: int) -> dict:
    if parent not in features:
        raise InputError(path, f"line {line} Parent", f"feature '{parent}' is not defined in the file")
    return features[parent]


def top_ancestor(path, features: dict, identifier: str) -> str:
    """The gene: follow the first Parent up to a feature without one."""
    seen = {identifier}
    record = features[identifier]
    while record["parents"]:
        parent = record["parents"][0]
        defined_parent(path, features, parent, record["line"])
        if parent in seen:
            raise InputError(path, f"line {record['line']} Parent", f"Parent cycle through '{parent}'")
        seen.add(parent)
        identifier, record = parent, features[parent]
    return identifier


def assemble_gff3(path, features: dict, exons: list[tuple], coding_parents: list[tuple]) -> Annotation:
    annotation = Annotation(str(path), "GFF3")
    via_transcript: list[tuple] = []
    direct: list[tuple] = []
    for chrom, start, end, strand, parents, line in exons:
        if not parents:
            raise InputError(path, f"line {line} Parent", "exon without a Parent attribute")
        for parent in parents:
            defined_parent(path, features, parent, line)
            gene = top_ancestor(path, features, parent)
            target = direct if gene == parent else via_transcript
            target.append((chrom, start, end, strand, parent, gene, line))
    genes_with_transcripts = {row[5] for row in via_transcript}
    kept = via_transcript + [row for row in direct if row[5] not in genes_with_transcripts]
    kept.sort(key=lambda row: row[6])
    for chrom, start, end, strand, parent, gene, line in kept:
        record, gene_record_ = features[parent], features[gene]
        gene_name = gene_record_["name"]
        transcript = record["name"] if parent != gene else gene_name
        add_transcript(annotation, transcript, gene_name, record["canonical"])
        annotation.exons.append((chrom, start, end, strand, transcript, line))
        if parent != gene:
            annotation.transcript_spans[transcript] = (
                record["chrom"],
                record["start"],
                record["end"],
                record["line"],
            )
        annotation.genes.setdefault(
            gene_name,
            gene_record(
                gene_record_["chrom"],
                gene_record_["start"],
                gene_record_["end"],
                gene_record_["strand"],
                gene_record_["biotype"],
                gene_record_["line"],
            ),
        )
    for parents, line in coding_parents:
        for parent in parents:
            annotation.coding.add(defined_parent(path, features, parent, line)["name"])
    return annotation
