"""Pre-flight checks of the input files (run while the workflow is parsed)."""

import gzip
import json
import os

import polars as pl
import pytest

from workflow_scripts.config.sections import complete_section, section_defaults
from workflow_scripts.data.calls import CALL_COLUMNS
from workflow_scripts.data.tables import read_table
from workflow_scripts.errors import InputError
from workflow_scripts.workflow.preflight import check_input_files

CALLS_HEADER = "gene_id\tchrom\tposition\tstrand\tsplice_type\tpred_type\n"


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "genome.fa").write_text(">chr1\nACGT\n")
    (tmp_path / "calls.tsv").write_text(CALLS_HEADER + "g1\tchr1\t2\t+\tdonor\tTP\n")
    return tmp_path


def check(**config):
    """The preflight on a config as the workflow validated it: the sections' defaults filled."""
    defaults = {name: section_defaults(name) for name in ("calling", "train")}
    check_input_files({**defaults, **config})


def test_good_inputs_and_the_demo_outputs_pass(inputs):
    check(genome="genome.fa", calls="calls.tsv")
    check(genome="results/demo/genome.fa.gz", calls="results/demo/calls.tsv")  # made by demo_data


@pytest.mark.parametrize(
    "name, content, key, message",
    [
        ("missing.fa", None, "genome", "file not found"),
        ("empty.fa", b"", "genome", "file is empty"),
        ("blank.fa", b"\n\n  \n", "genome", "file is empty"),
        ("calls.fa", CALLS_HEADER.encode(), "genome", "no '>' header"),
        ("garbage.fa.gz", b"\x1f\x8b" + b"\x00" * 40, "genome", "corrupt gzip"),
    ],
)
def test_unusable_genomes_are_named(inputs, name, content, key, message):
    if content is not None:
        (inputs / name).write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        check(genome=name, calls="calls.tsv")
    assert caught.value.source == name and caught.value.field == key


@pytest.mark.parametrize(
    "name, content, message", [("missing.tsv", None, "file not found"), ("empty.tsv", b"", "file is empty")]
)
def test_a_missing_or_empty_calls_table_is_named(inputs, name, content, message):
    if content is not None:
        (inputs / name).write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        check(genome="genome.fa", calls=name)
    assert caught.value.source == name and caught.value.field == "calls"


def test_a_gzipped_fasta_is_peeked_through(inputs):
    (inputs / "genome.fa.gz").write_bytes(gzip.compress(b">chr1\nACGT\n"))
    check(genome="genome.fa.gz", calls="calls.tsv")
    (inputs / "notfasta.fa.gz").write_bytes(gzip.compress(b"ACGT\n"))
    with pytest.raises(InputError, match="no '>' header"):
        check(genome="notfasta.fa.gz", calls="calls.tsv")


def test_a_directory_and_an_unreadable_file_are_refused(inputs):
    (inputs / "folder.tsv").mkdir()
    with pytest.raises(InputError, match="calls: not a regular file"):
        check(genome="genome.fa", calls="folder.tsv")
    if os.geteuid() != 0:  # root reads anything
        (inputs / "calls.tsv").chmod(0)
        with pytest.raises(InputError, match="not readable"):
            check(genome="genome.fa", calls="calls.tsv")


@pytest.mark.parametrize(
    "name, write",
    [
        ("calls.tsv", lambda p: p.write_text("gene_id\tchrom\tposition\tsplice_type\tpred_type\n")),
        ("calls.csv", lambda p: p.write_text("gene_id,chrom,position,splice_type,pred_type\n")),
        ("calls.tsv.gz", lambda p: p.write_bytes(gzip.compress(b"gene_id\tchrom\tposition\tsplice_type\n"))),
        ("calls.parquet", lambda p: pl.DataFrame({"gene_id": ["g"], "chrom": ["c"]}).write_parquet(p)),
    ],
)
def test_a_calls_table_without_a_required_column_is_named(inputs, name, write):
    write(inputs / name)
    with pytest.raises(InputError, match="required column missing") as caught:
        check(genome="genome.fa", calls=name)
    assert caught.value.source == name and caught.value.field in ("column 'strand'", "column 'position'")


def test_sequences_tables_need_sequence_and_label(inputs):
    (inputs / "seqs.tsv").write_text("sequence\tclass\nACGT\t1\n")
    with pytest.raises(InputError, match="seqs.tsv: column 'label': required column missing"):
        check(sequences="seqs.tsv")
    (inputs / "seqs.xlsx").write_text("x")
    with pytest.raises(InputError, match="seqs.xlsx: sequences: unknown table format"):
        check(sequences="seqs.xlsx")
    (inputs / "broken.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="broken.parquet: sequences: cannot be read as a parquet table"):
        check(sequences="broken.parquet")


def test_preflight_and_extract_read_the_same_header(inputs):
    """One reader (data.tables) and one column list (data.calls): what preflight lets through,
    extraction reads with the same columns, quoted CSV headers included."""
    (inputs / "calls.csv").write_text(
        '"gene_id","chrom","position","strand","splice_type","pred_type"\ng1,chr1,2,+,donor,TP\n'
    )
    check(genome="genome.fa", calls="calls.csv")
    frame = read_table(inputs / "calls.csv", required=CALL_COLUMNS)
    assert frame.columns == list(CALL_COLUMNS) and frame["position"].dtype == pl.String


def test_a_missing_deepspeed_json_is_named(inputs):
    with pytest.raises(InputError, match="ds.json: train.deepspeed_config: file not found"):
        check(
            genome="genome.fa",
            calls="calls.tsv",
            train=complete_section("train", {"deepspeed_config": "ds.json"}),
        )


# ---- no input inside this run's own outputs (results/ and logs/): Snakemake deletes them ----
def scores_config(**sites) -> dict:
    """A calling.start scores config whose inputs are all there (site_calls would run)."""
    calling = complete_section("calling", {"start": "scores", "annotation": "genes.gtf", "scores": "s.tsv"})
    return {"genome": "genome.fa", "calling": calling, "sites": {"transfer": None, **sites}}


@pytest.fixture
def scored(inputs):
    (inputs / "genes.gtf").write_text('chr1\tx\texon\t1\t4\t.\t+\t.\tgene_id "g"; transcript_id "t";\n')
    (inputs / "s.tsv").write_text("gene_id\tchrom\tstrand\tposition\tdonor\tacceptor\ng\tchr1\t+\t1\t0\t0\n")
    (inputs / "results/sites").mkdir(parents=True)
    (inputs / "results/sites/rescorer.pkl").write_bytes(b"the run's own output")
    return inputs


def test_a_transfer_file_that_is_the_runs_own_output_is_refused(scored):
    """sites.transfer naming site_calls' own rescorer made Snakemake delete all six outputs."""
    config = scores_config(transfer="results/sites/rescorer.pkl")
    with pytest.raises(InputError) as refused:
        check(**config)
    assert (refused.value.source, refused.value.field) == ("results/sites/rescorer.pkl", "sites.transfer")
    assert "inside this run's own outputs" in refused.value.message
    assert (scored / "results/sites/rescorer.pkl").read_bytes() == b"the run's own output"


@pytest.mark.parametrize(
    "key, path",
    [
        ("calling.scores", "results/base_model/shards/1-of-1.parquet"),
        ("calling.annotation", "./results/../results/annotation/genes.gtf"),
        ("genome", "logs/index_genome.log"),
        ("calling.scores", "results"),
    ],
)
def test_no_input_may_lie_inside_results_or_logs(scored, key, path):
    config = scores_config()
    section, _, name = key.partition(".")
    if name:
        config[section] = {**config[section], name: path}
    else:
        config[section] = path
    with pytest.raises(InputError, match="inside this run's own outputs") as refused:
        check(**config)
    assert refused.value.field == key


def test_an_absolute_path_or_a_link_into_results_is_refused_too(scored):
    config = scores_config(transfer=str(scored / "results/sites/rescorer.pkl"))
    with pytest.raises(InputError, match="sites.transfer: lies inside"):
        check(**config)
    (scored / "elsewhere").mkdir()
    (scored / "elsewhere/link.pkl").symlink_to(scored / "results/sites/rescorer.pkl")
    with pytest.raises(InputError, match="sites.transfer: lies inside"):
        check(**scores_config(transfer="elsewhere/link.pkl"))
    base_model = {**section_defaults("calling")["base_model"], "weights": ["m.h5", "results/m.h5"]}
    calling = complete_section("calling", {"start": "annotation", "annotation": "genes.gtf"})
    with pytest.raises(InputError, match="calling.base_model.weights: lies inside"):
        check(genome="genome.fa", calling={**calling, "base_model": base_model})


def a_rescorer_folder(folder) -> None:
    """The smallest re-scorer the preflight takes: a source of one class, no tree file
    (sites/rescorer_manifest.py), fitted with the default settings."""
    sites, calling = section_defaults("sites"), section_defaults("calling")
    settings = {key: sites[key] for key in ("flank", "floor", "peak_radius")}
    tree = {"file": None, "n_features": None, "trees": 0, "constant": 0.5}
    manifest = {
        "format": "errorseq-site-rescorer",
        "version": 3,
        "settings": {**settings, "consensus_window": calling["consensus_window"]},
        "thresholds": {
            "base_tuned": {"donor": 0.5, "acceptor": 0.5},
            "tree": {"donor": 0.5, "acceptor": 0.5},
        },
        "tree": tree,
        "deep_models": [],
        "source": {"source": "chr1", "source_sites": 1},
        "packages": {},
        "results": {},
        "files": {},
    }
    folder.mkdir(parents=True)
    (folder / "rescorer.json").write_text(json.dumps(manifest))


def test_another_runs_results_are_an_input_like_any_other(scored, tmp_path_factory):
    other = tmp_path_factory.mktemp("source_run")
    a_rescorer_folder(other / "results/sites/rescorer")
    check(**scores_config(transfer=str(other / "results/sites/rescorer")))


def test_a_missing_transfer_file_is_one_line_at_validation(scored):
    with pytest.raises(InputError) as refused:
        check(**scores_config(transfer="elsewhere/rescorer.pkl"))
    assert str(refused.value).startswith("elsewhere/rescorer.pkl: sites.transfer: not found")
