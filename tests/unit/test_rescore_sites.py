"""calling.start regions' last step (sites/rescore.py, the rescore_sites program): candidates of a
genome without an annotation, called by another genome's re-scorer exactly as site_calls'
transferred predictors call the same candidates where the annotation is known; the corrected
calls as parquet, BED and GFF3, and a report that says there are no metrics."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.rescore_fixtures import DEEP_FLANK, scores_frame, whole_region_results, write_rescorer
from tests.site_fixtures import CHROM, profile_genome, settings
from workflow_scripts.calling.target_regions import region_table
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import rescore_sites
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.deep_transfer import trained_models, transferred_probability
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.inputs import SiteInputs
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import TRANSFER_ERRORSEQ, TRANSFER_TREE, predict_out_of_fold
from workflow_scripts.sites.rescore import NO_METRICS
from workflow_scripts.sites.rescorer import with_transfer
from workflow_scripts.sites.rescorer_files import load_rescorer

LENGTH = 40_000  # profile_genome's 40 genes of 500 nt, 1,000 nt apart
TARGET_SEED = 1
KEY = ["chrom", "position", "strand", "splice_type"]


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.fixture(scope="module")
def deep_rescorer(tmp_path_factory) -> Path:
    """A re-scorer whose source scan recommends its deep models over the whole region."""
    folder = tmp_path_factory.mktemp("source") / "rescorer"
    return write_rescorer(folder, deep=True, results=whole_region_results("errorseq"))


@pytest.fixture(scope="module")
def tree_rescorer(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("source") / "rescorer"
    return write_rescorer(folder, deep=False, results=whole_region_results("tree"))


@pytest.fixture(scope="module")
def genes_only_rescorer(tmp_path_factory) -> Path:
    """A re-scorer whose recommendation (its tree) was made on genes only, as every shipped one before issue 49."""
    folder = tmp_path_factory.mktemp("source") / "rescorer"
    return write_rescorer(
        folder, deep=True, results={"answer": "made up", "recommended": {"predictor": "tree"}}
    )


@pytest.fixture(scope="module")
def target(tmp_path_factory) -> Path:
    """The target genome's FASTA, scores and regions (its genes' spans, as a BED of them gives)."""
    folder = tmp_path_factory.mktemp("target")
    rng = np.random.default_rng(5)
    (folder / "genome.fa").write_text(f">{CHROM}\n" + "".join(rng.choice(list("ACGT"), LENGTH)) + "\n")
    scores_frame(TARGET_SEED).write_parquet(folder / "scores.parquet")
    genes = profile_genome(seed=TARGET_SEED)[2]
    genome = genome_of()
    intervals = [
        (CHROM, start - 1, end, strand)
        for start, end, strand in genes.select("start", "end", "strand").iter_rows()
    ]
    region_table(intervals, genome).write_parquet(folder / "regions.parquet")
    return folder


OUTPUTS = ("calls", "bed", "gff3", "report", "html")


def genome_of() -> Genome:
    return Genome([CHROM], np.array([LENGTH]), np.zeros(LENGTH, dtype=np.uint8))


def config(**sites) -> str:
    sections = {name: section_defaults(name) for name in ("calling", "sites", "evaluate")}
    sections["evaluate"]["batch_size"] = 64
    sections["sites"].update(sites)
    return json.dumps(sections)


def run(target: Path, rescorer: Path | None, out: Path, **sites) -> None:
    argv = ["--scores", str(target / "scores.parquet"), "--regions", str(target / "regions.parquet")]
    argv += ["--genome", str(target / "genome.fa"), "--config", config(**sites)]
    argv += ["--transfer", str(rescorer)] if rescorer is not None else []
    for name in OUTPUTS:
        argv += [f"--out-{name}", str(out / f"out.{name}")]
    run_cli(rescore_sites.main, argv)


def annotated_transfer(target: Path, rescorer: Path) -> pl.DataFrame:
    """What site_calls' transferred predictors call on the same genome with its annotation."""
    scores, sites, genes, clusters = profile_genome(seed=TARGET_SEED)
    found = assign_folds(find_candidates([(CHROM, scores)], sites, genes, settings()), clusters, 5, seed=0)
    items = Items.from_candidates(found)
    loaded = load_rescorer(str(rescorer), settings())
    deep = None
    if loaded.deep is not None:
        from workflow_scripts.data.fasta import load_fasta

        inputs = SiteInputs(
            load_fasta(target / "genome.fa"), sites, genes, clusters, [str(target / "scores.parquet")]
        )
        models = trained_models(loaded.deep, 64, str(rescorer))
        deep = transferred_probability(models, DEEP_FLANK, found, inputs, str(rescorer))
    moved = with_transfer(predict_out_of_fold(found, items, settings()), found, loaded, deep)
    columns = {f"call_{name}": calls for name, calls in moved.calls.items() if name.startswith("transfer")}
    table = found.table.select(KEY).with_columns(
        transfer_probability=moved.transfer_probability, **{k: pl.Series(v) for k, v in columns.items()}
    )
    if deep is not None:
        table = table.with_columns(transfer_errorseq_probability=deep)
    return table


def test_without_an_annotation_the_calls_are_site_calls_transferred_calls(tmp_path, target, deep_rescorer):
    run(target, deep_rescorer, tmp_path)
    calls = pl.read_parquet(tmp_path / "out.calls")
    expected = annotated_transfer(target, deep_rescorer)
    assert calls.height == expected.height > 100
    joined = calls.join(expected, on=KEY, suffix="_annotated")
    assert joined.height == calls.height
    for column in ("call_transfer_base_tuned", "call_transfer_tree", "call_transfer_errorseq"):
        assert joined[column].equals(joined[f"{column}_annotated"]), column
    for column in ("transfer_probability", "transfer_errorseq_probability"):
        assert np.allclose(joined[column], joined[f"{column}_annotated"], atol=1e-6), column
    assert 0 < calls["call_transfer_errorseq"].sum() < calls.height
    assert calls["region"].str.starts_with(f"{CHROM}:").all() and "is_true_site" not in calls.columns


def test_the_corrected_calls_are_the_deep_models_as_bed_and_gff3(tmp_path, target, deep_rescorer):
    run(target, deep_rescorer, tmp_path)
    calls = pl.read_parquet(tmp_path / "out.calls")
    chosen = calls.filter("call_transfer_errorseq")
    bed = [line.split("\t") for line in (tmp_path / "out.bed").read_text().splitlines()[1:]]
    assert [(c, int(e), s, n) for c, _, e, n, _, s in bed] == list(
        chosen.select("chrom", "position", "strand", "splice_type").iter_rows()
    )
    gff3 = [line for line in (tmp_path / "out.gff3").read_text().splitlines() if not line.startswith("#")]
    assert len(gff3) == chosen.height
    assert all("predictor=transfer_errorseq;" in line and "annotated=" not in line for line in gff3)
    report = json.loads((tmp_path / "out.report").read_text())
    assert report["metrics"] is None and report["why_no_metrics"] == NO_METRICS
    assert report["corrected_calls"]["predictor"] == TRANSFER_ERRORSEQ
    assert report["corrected_calls"]["calls"] == chosen.height
    assert report["rescorer"]["deep_models"] == 2 and report["rescorer"]["name"] == deep_rescorer.name
    assert len(report["rescorer"]["manifest_sha256"]) == 64
    assert report["counts"]["regions"] == 40 and report["counts"]["candidates"] == calls.height
    assert "corrected calls" in report["answer"] and "not measured" in report["answer"]
    metadata = pl.read_parquet_metadata(tmp_path / "out.calls")
    provenance = json.loads(metadata["errorseq_provenance"])  # from the declared inputs only
    assert provenance["base_model"]["source"] == "scores table given"  # no shard records given
    assert provenance["inputs"]["genome"] is None  # no index_genome record given
    assert set(provenance["config"]["values"]) == {"calling", "sites", "evaluate"}


def test_the_report_holds_the_result_per_region_and_why_and_no_machine_path(tmp_path, target, deep_rescorer):
    """Issue 49: report.json and its page (rescored.html, for snakemake --report) carry the calls
    per type and per region, the recommendation and its evidence; files by name and sha256 only."""
    run(target, deep_rescorer, tmp_path)
    report = json.loads((tmp_path / "out.report").read_text())
    calls = pl.read_parquet(tmp_path / "out.calls")
    regions = report["calls_by_region"]
    assert len(regions) == report["counts"]["regions"] == calls["region"].n_unique()
    assert sum(r["corrected_calls"] for r in regions.values()) == report["corrected_calls"]["calls"]
    assert sum(r["candidates"] for r in regions.values()) == calls.height
    assert sum(r["base_calls"] for r in regions.values()) == report["calls"]["base_threshold"]["calls"]
    assert all(r["donor"] + r["acceptor"] == r["corrected_calls"] for r in regions.values())
    assert report["recommendation"]["predictor"] == TRANSFER_ERRORSEQ
    assert set(report["recommendation"]["evidence"]) == {"recommended", "f1_on_source", "source_answer"}
    assert not report["answer"].startswith("rescore_sites:")
    text = (tmp_path / "out.report").read_text() + (tmp_path / "out.bed").read_text()
    for path in (str(deep_rescorer), str(target), str(tmp_path)):
        assert path not in text
    assert f"re-scorer {deep_rescorer.name} applied" in (tmp_path / "out.bed").read_text().splitlines()[0]
    page = (tmp_path / "out.html").read_text()
    for heading in ("Calls per splice type", "Calls per region", "Why these calls", "Where this came from"):
        assert heading in page
    assert report["answer"].split(";")[0] in page and str(tmp_path) not in page


def test_absolute_paths_become_names():
    from workflow_scripts.sites.rescore_report import names_only

    value = {
        "a": "/home/someone/genome.fa",
        "b": ["results/x.parquet", {"path": "/m/w.pt", "n": 3}],
        "c": "x",
    }
    assert names_only(value) == {
        "a": "genome.fa",
        "b": ["results/x.parquet", {"path": "w.pt", "n": 3}],
        "c": "x",
    }


def test_a_rescorer_without_deep_models_corrects_with_its_tree(tmp_path, target, tree_rescorer):
    run(target, tree_rescorer, tmp_path)
    report = json.loads((tmp_path / "out.report").read_text())
    assert report["corrected_calls"]["predictor"] == TRANSFER_TREE
    calls = pl.read_parquet(tmp_path / "out.calls")
    assert "transfer_errorseq_probability" not in calls.columns
    assert len((tmp_path / "out.bed").read_text().splitlines()) == 1 + calls["call_transfer_tree"].sum()


def test_a_rescorer_without_whole_region_evidence_calls_with_the_base(
    tmp_path, target, genes_only_rescorer, capsys
):
    """Issue 49: the default never worse than the base: a re-scorer recommended on genes only
    gives the base model's own calls, and the report and the log say why (fails on the old code,
    which took its tree)."""
    run(target, genes_only_rescorer, tmp_path)
    report = json.loads((tmp_path / "out.report").read_text())
    calls = pl.read_parquet(tmp_path / "out.calls")
    assert report["corrected_calls"]["predictor"] == "base_threshold"
    assert "no whole-region evidence" in report["corrected_calls"]["why"]
    assert report["corrected_calls"]["calls"] == calls["call_base_threshold"].sum() > 0
    assert len((tmp_path / "out.bed").read_text().splitlines()) == 1 + calls["call_base_threshold"].sum()
    assert (
        "corrected calls: base_threshold: the re-scorer carries no whole-region evidence"
        in capsys.readouterr().err
    )


def test_without_a_rescorer_the_calls_are_the_base_models_and_the_report_says_why(
    tmp_path, target, tree_rescorer, capsys
):
    """No re-scorer is fitted with this base model (the honeybee one, say): sites.transfer unset
    gives the base model's own calls at calling.threshold, the same calls a re-scorer run's
    base_threshold column holds, and the report, its page and the log say why."""
    run(target, None, tmp_path / "base")
    run(target, tree_rescorer, tmp_path / "tree")
    base = pl.read_parquet(tmp_path / "base" / "out.calls")
    with_tree = pl.read_parquet(tmp_path / "tree" / "out.calls")
    assert base.select(KEY).equals(with_tree.select(KEY))
    assert base["call_base_threshold"].equals(with_tree["call_base_threshold"])
    assert not any(column.startswith(("call_transfer", "transfer_")) for column in base.columns)
    report = json.loads((tmp_path / "base" / "out.report").read_text())
    assert report["corrected_calls"]["predictor"] == "base_threshold" and report["rescorer"] is None
    assert report["corrected_calls"]["calls"] == base["call_base_threshold"].sum() > 0
    assert report["corrected_calls"]["why"].startswith("no re-scorer given (sites.transfer unset")
    assert "no re-scorer" in (tmp_path / "base" / "out.html").read_text()
    assert (
        len((tmp_path / "base" / "out.bed").read_text().splitlines()) == 1 + base["call_base_threshold"].sum()
    )
    assert "corrected calls: base_threshold: no re-scorer given" in capsys.readouterr().err


def refusal(tmp_path: Path, capsys, target: Path, rescorer: Path, **sites) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run(target, rescorer, tmp_path, **sites)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert not any((tmp_path / f"out.{name}").exists() for name in OUTPUTS)
    return lines[0]


class Payload:
    def __reduce__(self):
        return (print, ("pickled code ran",))


def test_a_pickle_is_refused_unread(tmp_path, capsys, target):
    pickled = tmp_path / "rescorer.pkl"
    pickled.write_bytes(pickle.dumps(Payload()))
    line = refusal(tmp_path, capsys, target, pickled)
    assert line.startswith(f"errorseq: error: {pickled}") and "pickled code ran" not in line


def test_a_rescorer_of_other_feature_settings_is_refused(tmp_path, capsys, target, tree_rescorer):
    line = refusal(tmp_path, capsys, target, tree_rescorer, flank=20)
    assert line.startswith(f"errorseq: error: {tree_rescorer}") and "flank" in line


def test_the_deep_models_score_in_chunks_with_progress_and_the_same_probabilities(
    tmp_path, target, deep_rescorer, monkeypatch, capsys
):
    """A chromosome holds hundreds of thousands of candidates: the fold models score them
    CHUNK_WINDOWS at a time, saying how far they are, with the probabilities of one pass."""
    from workflow_scripts.sites import deep_transfer

    run(target, deep_rescorer, tmp_path / "whole")
    capsys.readouterr()
    monkeypatch.setattr(deep_transfer, "CHUNK_WINDOWS", 37)
    run(target, deep_rescorer, tmp_path / "chunked")
    log = capsys.readouterr().err
    whole = pl.read_parquet(tmp_path / "whole" / "out.calls")
    chunked = pl.read_parquet(tmp_path / "chunked" / "out.calls")
    assert whole.height > 3 * 37
    assert np.allclose(
        whole["transfer_errorseq_probability"], chunked["transfer_errorseq_probability"], atol=1e-6
    )
    assert whole["call_transfer_errorseq"].equals(chunked["call_transfer_errorseq"])
    done = re.findall(r"rescore_sites: deep models done: 100\.0% \((\d+)/(\d+) fold models, ([\d,]+)/", log)
    assert done and done[-1][0] == done[-1][1] != "0", log[-2000:]
    assert int(done[-1][2].replace(",", "")) == int(done[-1][0]) * whole.height
