import gzip
import json

import polars as pl
import pytest

from workflow_scripts.command_line import path_flags
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.data.calls import CALL_COLUMNS, OPTIONAL_CALL_COLUMNS
from workflow_scripts.data.demo import (
    ELEMENT_MARGIN,
    ELEMENT_SPACING,
    MOTIF,
    generate_demo,
    reverse_complement,
)
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.errors import InputError
from workflow_scripts.rules.demo_data import main as demo_data_main
from workflow_scripts.rules.extract import main as extract_main

TINY = {"seed": 7, "n_genes": 400, "calls_per_gene": 3}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    demo_data_main(
        [
            *path_flags({}, {"genome": folder / "g.fa.gz", "calls": folder / "calls.tsv"}),
            "--config",
            json.dumps({"demo": {"n_genes": 400}}),
        ]
    )
    return folder


def test_same_seed_gives_identical_bytes(demo, tmp_path):
    assert section_defaults("demo") == {**TINY, "n_genes": 2000}  # the rule filled seed and calls_per_gene
    generate_demo(tmp_path / "g.fa.gz", tmp_path / "calls.tsv", **TINY)
    for name in ("g.fa.gz", "calls.tsv"):
        assert (tmp_path / name).read_bytes() == (demo / name).read_bytes()


def test_other_seed_differs(demo, tmp_path):
    generate_demo(tmp_path / "g.fa.gz", tmp_path / "calls.tsv", **{**TINY, "seed": 8})
    assert (tmp_path / "calls.tsv").read_bytes() != (demo / "calls.tsv").read_bytes()


def test_more_calls_per_gene(demo, tmp_path):
    generate_demo(tmp_path / "g.fa.gz", tmp_path / "calls.tsv", **{**TINY, "calls_per_gene": 9})
    calls = pl.read_csv(tmp_path / "calls.tsv", separator="\t")
    assert 7 < calls.height / calls["gene_id"].n_unique() < 11


def test_bad_demo_config_is_named(tmp_path):
    with pytest.raises(InputError, match="config: demo.n_genes: 2 is less than the minimum of 3"):
        demo_data_main(
            [
                *path_flags({}, {"genome": tmp_path / "g.fa", "calls": tmp_path / "c.tsv"}),
                "--config",
                json.dumps({"demo": {"n_genes": 2}}),
            ]
        )
    assert not list(tmp_path.iterdir())


def test_calls_schema_and_class_balance(demo):
    calls = pl.read_csv(demo / "calls.tsv", separator="\t")
    assert calls.columns == [*CALL_COLUMNS, *OPTIONAL_CALL_COLUMNS]  # every column a calls table has
    shares = calls["pred_type"].value_counts(normalize=True)
    share = dict(zip(shares["pred_type"], shares["proportion"]))
    assert set(share) == {"TP", "TN", "FP", "FN"}
    assert all(0.12 < value < 0.45 for value in share.values())
    assert set(calls["strand"]) == {"+", "-"}
    assert ((calls["gene_start"] <= calls["position"]) & (calls["position"] <= calls["gene_end"])).all()


def test_genome_has_soft_masking_and_n(demo):
    raw = load_fasta(demo / "g.fa.gz")
    assert raw.names == ["chr1", "chr2", "chr3"]
    text = gzip.decompress((demo / "g.fa.gz").read_bytes())
    assert any(c in text for c in b"acgt") and b"N" in text


@pytest.mark.parametrize("error_label", ["FP", "FN"])
def test_motif_enriched_in_error_windows_of_one_length(demo, tmp_path, error_label):
    out = tmp_path / "w.parquet"
    experiment = {"name": "x", "error_label": error_label, "correct_label": "TP"}
    extract_main(
        [
            "--genome",
            str(demo / "g.fa.gz"),
            *path_flags({"calls": demo / "calls.tsv"}, {"windows": out}),
            "--config",
            json.dumps({"experiment": experiment}),
        ]
    )
    windows = pl.read_parquet(out)
    rate = (
        windows.group_by("label").agg(pl.col("sequence").str.contains(MOTIF).mean()).sort("label")["sequence"]
    )
    assert rate[0] < 0.2 and rate[1] > 0.7
    flank = section_defaults("window")["flank"]
    assert set(windows["length"]) == {2 * flank + 1} and set(windows["site_offset"]) == {flank}
    outside_gene = (windows["position"] - windows["gene_start"] < flank) | (
        windows["gene_end"] - windows["position"] < flank
    )
    assert outside_gene.any()  # windows near a gene end take their flank from beyond it


def test_motif_recurs_in_gene_free_dna_only(demo):
    """Intergenic copies (both orientations, ~1 per ELEMENT_SPACING nt farther than ELEMENT_MARGIN
    from genes) for unlabeled pretraining; inside genes and near them only the copies planted near
    sites."""
    genome = load_fasta(demo / "g.fa.gz")
    calls = pl.read_csv(demo / "calls.tsv", separator="\t")
    genes = calls.unique("gene_id").sort("chrom", "gene_start")
    inside = near = outside = free_length = 0
    for name in genome.names:
        text = genome.chromosome(name)
        spans = genes.filter(pl.col("chrom") == name).select("gene_start", "gene_end").rows()
        covered, margin = bytearray(len(text)), bytearray(len(text))
        for start, end in spans:
            covered[start - 1 : end] = b"\x01" * (end - start + 1)
            low, high = max(start - 1 - ELEMENT_MARGIN, 0), min(end + ELEMENT_MARGIN, len(text))
            margin[low:high] = b"\x01" * (high - low)
        free_length += len(text) - sum(margin)
        for motif in (MOTIF, reverse_complement(MOTIF)):
            at = text.find(motif)
            while at >= 0:
                inside += any(covered[at : at + len(MOTIF)])
                near += any(margin[at : at + len(MOTIF)]) and not any(covered[at : at + len(MOTIF)])
                outside += not any(margin[at : at + len(MOTIF)])
                at = text.find(motif, at + 1)
    assert 0.7 < outside * ELEMENT_SPACING / free_length < 1.3
    assert inside < 0.5 * calls.height and near < 0.01 * outside
