"""sites.model: errorseq's deep model as site_calls' fourth predictor. Its runs test exactly
site_calls' folds (a run that tests other candidates is refused), its thresholds come from the
runs' val clusters and never from the test fold, and its calls are counted as make_calls counts
(by hand), with intervals of errorseq - tree and errorseq - base_tuned."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tests.site_fixtures import settings
from workflow_scripts.config.runs import expand_runs, site_runs
from workflow_scripts.config.types import FractionsSection
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidate_windows import candidate_ids, fold_splits
from workflow_scripts.sites.candidates import Candidates
from workflow_scripts.sites.errorseq import FoldPredictions, errorseq_out_of_fold, with_errorseq
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.outputs import ERRORSEQ_COLUMNS, TABLE_COLUMNS, corrected_calls
from workflow_scripts.sites.predictors import BASE_THRESHOLD, BASE_TUNED, ERRORSEQ, TREE, OutOfFold
from workflow_scripts.sites.report import site_report

# clusters a1, a2 in fold 1 and b1, b2 in fold 2, each with a true donor candidate (its site) and a
# false one; a1 also holds site s4, which no candidate is near (missed).
CLUSTERS = ["a1", "a1", "a2", "a2", "b1", "b1", "b2", "b2"]
TRUE = [True, False] * 4
POSITIONS = [100, 200, 300, 400, 500, 600, 700, 800]
SITE_POSITIONS = [100, 300, 500, 700, 900]
SITE_CLUSTERS = ["a1", "a2", "b1", "b2", "a1"]


def fold_of(cluster: str) -> int:
    return 1 if cluster.startswith("a") else 2


def found() -> Candidates:
    table = pl.DataFrame(
        {
            "key": POSITIONS,
            "splice_type": "donor",
            "base_score": np.array([0.6, 0.3, 0.7, 0.2, 0.4, 0.1, 0.8, 0.6], dtype=np.float32),
            "is_true_site": TRUE,
            "gene_id": CLUSTERS,
            "chrom": "chr1",
            "strand": "+",
            "position": POSITIONS,
            "gene_cluster": CLUSTERS,
            "fold": [fold_of(c) for c in CLUSTERS],
        }
    )
    sites = pl.DataFrame(
        {
            "key": SITE_POSITIONS,
            "chrom": "chr1",
            "strand": "+",
            "position": SITE_POSITIONS,
            "splice_type": "donor",
            "gene_id": SITE_CLUSTERS,
            "base_score": np.full(5, 0.5, dtype=np.float32),
            "gene_cluster": SITE_CLUSTERS,
            "fold": [fold_of(c) for c in SITE_CLUSTERS],
        }
    )
    members = np.array([[0], [2], [4], [6], [-1]])
    return Candidates(table, np.zeros((8, 1), np.float32), sites, members)


IDS = [f"chr1:{p}:+:donor" for p in POSITIONS]


def run(fold: int, test: dict[int, float], val: dict[int, float], val_cluster: str) -> FoldPredictions:
    """A run testing candidates `test` ({row: P(true site)}), with val candidates `val`."""
    return FoldPredictions(
        source=f"results/site_candidates_fold{fold}",
        fold=fold,
        test_ids=np.array([IDS[i] for i in test]),
        test_probability=np.array(list(test.values())),
        val_ids=np.array([IDS[i] for i in val]),
        val_probability=np.array(list(val.values())),
        val_clusters=frozenset([val_cluster]),
        val_folds=frozenset(fold_of(CLUSTERS[i]) for i in val),
    )


def runs() -> list[FoldPredictions]:
    # run 1 tests fold 1; its val (b2): site 0.7, false 0.3 -> threshold midway, 0.5
    # run 2 tests fold 2; its val (a2): site 0.9, false 0.5 -> threshold 0.7
    return [
        run(1, {0: 0.6, 1: 0.55, 2: 0.4, 3: 0.2}, {6: 0.7, 7: 0.3}, "b2"),
        run(2, {4: 0.8, 5: 0.75, 6: 0.65, 7: 0.1}, {2: 0.9, 3: 0.5}, "a2"),
    ]


def base_predictions(candidates: Candidates) -> OutOfFold:
    base = candidates.table["base_score"].to_numpy().astype(float)
    tuned = {fold: {"donor": 0.5, "acceptor": float("inf")} for fold in (1, 2)}
    return OutOfFold(
        tree_probability=base,
        thresholds={BASE_TUNED: tuned, TREE: tuned},
        calls={BASE_THRESHOLD: base >= 0.5, BASE_TUNED: base >= 0.5, TREE: base >= 0.65},
    )


def test_thresholds_come_from_the_val_clusters_and_calls_are_counted_by_hand():
    candidates = found()
    items = Items.from_candidates(candidates)
    probability, thresholds = errorseq_out_of_fold(candidates, items, runs())
    assert thresholds[1]["donor"] == pytest.approx(0.5) and thresholds[2]["donor"] == pytest.approx(0.7)
    assert np.allclose(probability, [0.6, 0.55, 0.4, 0.2, 0.8, 0.75, 0.65, 0.1])
    merged = with_errorseq(base_predictions(candidates), candidates, items, runs())
    report = site_report(candidates, items, merged, settings(folds=2, bootstrap_replicates=50), 0)
    # called: rows 0 (site s0: TP), 1 (FP) in fold 1; rows 4 (site s2: TP), 5 (FP) in fold 2;
    # s1 (row 2, 0.4 < 0.5), s3 (row 6, 0.65 < 0.7) and the missed s4 are FN
    donor = report["calls"][ERRORSEQ]["donor"]
    assert (donor["tp"], donor["fp"], donor["fn"]) == (2, 2, 3)
    assert donor["f1"] == pytest.approx(4 / 9) and report["calls"][ERRORSEQ]["overall"] == donor
    # the tree here calls base >= 0.65: rows 2 and 6, sites s1 and s3
    tree = report["calls"][TREE]["donor"]
    assert (tree["tp"], tree["fp"], tree["fn"]) == (2, 0, 3)
    difference = report["differences"]["errorseq - tree"]["donor"]["f1"]
    assert difference["estimate"] == pytest.approx(4 / 9 - 4 / 7)
    assert set(report["differences"]) == {
        "tree - base_tuned",
        "base_tuned - base_threshold",
        "errorseq - tree",
        "errorseq - base_tuned",
    }
    assert report["thresholds"][ERRORSEQ] == {
        "1": {"donor": 0.5, "acceptor": None},
        "2": {"donor": 0.7, "acceptor": None},
    }
    assert "errorseq_probability" in report["scores"]
    assert "errorseq's model's calls reach F1 0.444" in report["answer"]
    table = corrected_calls(candidates, merged)
    assert table.columns == [*TABLE_COLUMNS, *ERRORSEQ_COLUMNS]
    assert table["call_errorseq"].sum() == 4 and table.filter(~pl.col("is_candidate")).height == 1


def test_the_test_fold_takes_no_part_in_its_own_threshold():
    """Fold 1's threshold stays when fold 1's predictions, labels and run 2 change; it moves with
    run 1's val predictions."""
    candidates = found()
    items = Items.from_candidates(candidates)
    _, before = errorseq_out_of_fold(candidates, items, runs())
    flipped = candidates.table.with_columns(
        pl.when(pl.col("fold") == 1)
        .then(~pl.col("is_true_site"))
        .otherwise("is_true_site")
        .alias("is_true_site")
    )
    changed = Candidates(flipped, candidates.features, candidates.sites, candidates.members)
    other = [
        run(1, {0: 0.01, 1: 0.99, 2: 0.02, 3: 0.98}, {6: 0.7, 7: 0.3}, "b2"),
        run(2, {4: 0.2, 5: 0.3, 6: 0.4, 7: 0.5}, {2: 0.35, 3: 0.95}, "a2"),
    ]
    _, after = errorseq_out_of_fold(changed, Items.from_candidates(changed), other)
    assert after[1] == before[1]
    assert after[2] != before[2]
    moved = [run(1, {0: 0.6, 1: 0.55, 2: 0.4, 3: 0.2}, {6: 0.9, 7: 0.2}, "b2"), runs()[1]]
    assert errorseq_out_of_fold(candidates, items, moved)[1][1] != before[1]


def test_a_run_whose_val_holds_test_fold_candidates_is_refused():
    leaky = [run(1, {0: 0.6, 1: 0.55, 2: 0.4, 3: 0.2}, {2: 0.9, 6: 0.7}, "b2"), runs()[1]]
    candidates = found()
    with pytest.raises(InputError, match="holds candidates of the test fold 1"):
        errorseq_out_of_fold(candidates, Items.from_candidates(candidates), leaky)


def test_a_run_testing_other_candidates_than_site_calls_fold_is_refused():
    """Fold equality: run 1 tests rows 0-2 and 4, site_calls' fold 1 is rows 0-3."""
    shifted = [run(1, {0: 0.6, 1: 0.55, 2: 0.4, 4: 0.2}, {6: 0.7, 7: 0.3}, "b2"), runs()[1]]
    candidates = found()
    with pytest.raises(InputError, match="tests other candidates than site_calls' fold 1"):
        errorseq_out_of_fold(candidates, Items.from_candidates(candidates), shifted)


def test_fold_splits_test_the_fold_and_cut_the_other_clusters_into_train_and_val():
    clusters = [f"c{i}" for i in range(30) for _ in range(3)]
    frame = pl.DataFrame({"gene_cluster": clusters, "fold": [int(c[1:]) % 3 + 1 for c in clusters]})
    for fold in (1, 2, 3):
        split = fold_splits(frame, fold, FractionsSection(train=0.8, val=0.1, test=0.1), seed=0)
        assert ((split == "test").to_numpy() == (frame["fold"] == fold).to_numpy()).all()
        with_split = frame.with_columns(split)
        assert with_split.group_by("gene_cluster").agg(pl.col("split").n_unique())["split"].max() == 1
        assert set(split.to_list()) == {"train", "val", "test"}


def test_candidate_ids_are_keys():
    assert candidate_ids(found().table).to_list() == IDS


def test_site_runs_are_one_per_sites_fold_only_with_sites_model():
    config = {
        "experiments": [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}],
        "split": {
            "by": "gene",
            "folds": 1,
            "fractions": {},
            "test_chromosomes": [],
            "val_chromosomes": [],
            "seed": 0,
        },
        "train": {"repeats": 1, "seed": 7},
        "calling": {"start": "scores"},
        "sites": {"folds": 3, "model": True},
    }
    runs_ = expand_runs(config["experiments"], config["split"], config["train"])
    found_runs = site_runs(config, runs_)
    assert list(found_runs) == ["site_candidates_fold1", "site_candidates_fold2", "site_candidates_fold3"]
    assert found_runs["site_candidates_fold2"].entry == {"name": "site_candidates_fold2", "fold": 2}
    assert found_runs["site_candidates_fold2"].seed == 7
    assert site_runs({**config, "sites": {"folds": 3, "model": False}}, runs_) == {}
    with pytest.raises(InputError, match="sites.model"):
        site_runs({**config, "calling": {"start": "calls"}}, runs_)
