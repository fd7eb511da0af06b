"""benchmarks/cross_species_orthologs.py on pairs of finished site_calls work directories made by
the rules' own programs: the planted ortholog is found and its source fold left out of the trees
that score it; a genome transferred onto itself, held out, gives back site_calls' own out-of-fold
calls of the tree, the thresholds and the deep models; bad folders are refused in one line."""

from __future__ import annotations

import json
import shutil

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from benchmarks import cross_species_orthologs
from benchmarks.site_transfer.held_out import SourceFits, can_hold_out
from benchmarks.site_transfer.held_out_deep import fold_model_probabilities
from benchmarks.site_transfer.ortholog_transfer import transfer_calls
from benchmarks.site_transfer.orthologs import exonic_kmer_pairs
from benchmarks.site_transfer.run_folder import read_site_run
from benchmarks.tables import read_tables
from tests.ortholog_fixtures import SITE_CONFIG, plant_copy, species, write_model_run, write_run
from workflow_scripts.errors import run_cli


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A source of 40 genes and a target of 30 whose t004 carries s007's exons (3% substituted)."""
    source, target = species("s", 40, seed=0), species("t", 30, seed=1)
    plant_copy(target, "t004", source, "s007", rate=0.03, seed=5)
    folder = tmp_path_factory.mktemp("runs")
    return write_run(folder / "source", source), write_run(folder / "target", target)


def source_fold(root, gene: str) -> int:
    calls = pl.read_parquet(root / "results/sites/corrected_calls.parquet")
    return calls.filter(pl.col("gene_id") == gene)["fold"].unique().item()


def test_the_command_finds_the_planted_ortholog_and_fits_without_its_fold(runs, tmp_path, capsys):
    source, target = runs
    out = tmp_path / "report.json"
    cross_species_orthologs.main([str(source), str(target), "--replicates", "100", "--out", str(out)])
    report = json.loads(out.read_text())
    found = report["orthologs"]
    assert found["target_genes"] == 30 and found["with_ortholog"] == 1 and found["source_orthologs"] == 1
    assert found["genes_by_ortholog_folds"] == {"0": 29, "1": 1}
    assert [source_fold(source, "s007")] in report["fits"]
    assert report["checks"]["source_out_of_fold_tree_max_abs_difference"] < 1e-6
    orthologous = report["comparisons"]["tree_orthologous"]
    assert orthologous["genes"] == 1 and report["comparisons"]["tree"]["genes"] == 30
    gain = report["comparisons"]["tree"]["differences"]["held_out_tree - held_out_base_tuned"]["overall"][
        "f1"
    ]
    assert gain["low"] is not None and gain["low"] <= gain["estimate"] <= gain["high"]
    tables = {table.title.split(":")[0]: table for table in read_tables(capsys.readouterr().out)}
    side = tables["Transferred as shipped and ortholog-held-out"]
    held = report["comparisons"]["tree"]["calls"]["held_out_tree"]["overall"]["f1"]
    assert side.column("held out")[1] == f"{held:.3f}" and "deep models, every gene" not in side.column(
        "predictors"
    )


def test_the_planted_copys_candidates_are_scored_by_the_tree_without_its_fold(runs):
    source, target = (read_site_run(root) for root in runs)
    pairs = exonic_kmer_pairs(target.exons, target.inputs.genome, source.exons, source.inputs.genome)
    moved = transfer_calls(source, target, pairs, 0.02)
    fold = source_fold(runs[0], "s007")
    assert moved.excluded == {"t004": frozenset({fold})}
    copy = target.found.table["gene_id"].to_numpy() == "t004"
    fit = moved.fits.fit(frozenset({fold}))
    trained = source.found.table.filter(pl.Series(fit.training))
    assert "s007" not in trained["gene_id"].to_list() and fold not in trained["fold"].to_list()
    held, shipped = moved.calls["held_out_probability"], moved.calls["transfer_probability"]
    assert np.array_equal(held[copy], fit.probability(target.found.features[copy]))
    assert np.array_equal(held[~copy], shipped[~copy])


def test_a_genome_held_out_against_itself_gives_back_site_calls_out_of_fold_calls(tmp_path):
    """Every gene is its own ortholog, so each is scored by the tree, thresholds and fold model
    that left its fold out: site_calls' out-of-fold predictors (the deep ones untrained, each fold
    its own weights)."""
    run = read_site_run(write_model_run(tmp_path / "run", species("s", 40, seed=0)))
    pairs = exonic_kmer_pairs(run.exons, run.inputs.genome, run.exons, run.inputs.genome)
    fold_probability = fold_model_probabilities(run.fold_runs(), run.found, run.inputs, 64)
    moved = transfer_calls(run, run, pairs, 0.02, fold_probability)
    assert set(moved.excluded.values()) == {frozenset({f}) for f in range(1, 6)}
    calls = run.calls
    for held_out, own in (("held_out_tree", "call_tree"), ("held_out_base_tuned", "call_base_tuned")):
        assert np.array_equal(moved.calls[held_out], calls[own].to_numpy()), held_out
    assert np.array_equal(moved.calls["held_out_errorseq"], calls["call_errorseq"].to_numpy())
    assert np.allclose(
        moved.calls["held_out_errorseq_probability"], calls["errorseq_probability"].to_numpy(), atol=1e-6
    )
    assert np.allclose(moved.calls["held_out_probability"], calls["tree_probability"].to_numpy(), atol=1e-6)
    shipped = moved.calls["transfer_errorseq_probability"]
    assert np.allclose(shipped, np.mean(list(fold_probability.values()), axis=0))
    assert not np.allclose(shipped, moved.calls["held_out_errorseq_probability"])


def one_line_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        run_cli(cross_species_orthologs.main, argv)
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("errorseq: error: ") and "Traceback" not in "\n".join(lines)
    return lines[-1]


def test_bad_run_folders_are_refused_in_one_line_naming_the_file(runs, tmp_path, capsys):
    source, target = runs
    line = one_line_error(capsys, [str(source), str(tmp_path)])
    assert "results/sites/site_metrics.json: site_metrics: not found" in line
    changed = tmp_path / "changed"
    shutil.copytree(target, changed)
    shard = changed / "results/base_model/shards/1-of-1.parquet"
    pl.read_parquet(shard).filter(pl.col("gene_id") != "t010").write_parquet(shard)
    line = one_line_error(capsys, [str(source), str(changed)])
    assert "corrected_calls.parquet: candidates:" in line and "changed since" in line
    narrower = write_run(
        tmp_path / "narrow",
        species("n", 20, seed=2),
        {**SITE_CONFIG, "sites": {**SITE_CONFIG["sites"], "flank": 5}},
    )
    line = one_line_error(capsys, [str(source), str(narrower)])
    assert "site_metrics.json: settings.flank: 5, the source's 10" in line
    assert "--min-share: value" in one_line_error(capsys, [str(source), str(target), "--min-share", "0"])


def with_base_model(root, sha256: str, family: str) -> None:
    path = root / "results/sites/site_metrics.json"
    metrics = json.loads(path.read_text())
    files = [{"path": "model.pt", "bytes": 1, "sha256": sha256}]
    metrics["provenance"] = {"base_model": {"source": "weights", "files": files, "family": family}}
    path.write_text(json.dumps(metrics))


def test_a_target_scored_by_another_base_model_is_refused_naming_both(runs, tmp_path, capsys):
    source, target = (shutil.copytree(root, tmp_path / root.name) for root in runs)
    with_base_model(source, "a" * 64, "openspliceai")
    with_base_model(target, "b" * 64, "spliceai")
    line = one_line_error(capsys, [str(source), str(target), "--replicates", "0"])
    assert "provenance.base_model" in line and "(spliceai)" in line and "(openspliceai," in line


def test_a_fit_needs_two_source_folds_left_for_its_nested_thresholds(tmp_path):
    """With one fold left the nested thresholds' inner tree would have no data (a constant
    probability, every candidate called): such genes are not held out but counted apart."""
    run = read_site_run(write_run(tmp_path / "run", species("s", 40, seed=0)))
    fits = SourceFits(run.found, run.items, run.settings)
    assert [can_hold_out(frozenset(range(1, n + 1)), fits.folds) for n in range(6)] == [True] * 4 + [
        False
    ] * 2
    assert fits.fit(frozenset({1, 2, 3})).tree is not None
    with pytest.raises(ValueError, match="fewer than 2 source folds"):
        fits.fit(frozenset({1, 2, 3, 4}))
