"""A shipped re-scorer's card numbers are written from the runs that measured them
(benchmarks/rescorer_cards.py) and compared back against a target run (benchmarks/shipped_rescorers.py)."""

from __future__ import annotations

import json

import pytest

from benchmarks import shipped_rescorers
from benchmarks.rescorer_cards import card_numbers
from workflow_scripts.errors import InputError

DESCRIBED = {"genome": "a target", "base_model": "a base", "config": "a config"}


def overall(f1: float) -> dict:
    return {"overall": {"f1": f1, "precision": f1 + 0.01, "recall": f1 - 0.01, "tp": 9, "fp": 1, "fn": 1}}


def interval(estimate: float) -> dict:
    return {"overall": {"f1": {"estimate": estimate, "low": estimate - 0.002, "high": estimate + 0.002}}}


def site_metrics(calls: dict[str, float], pairs: dict[str, float]) -> dict:
    return {
        "calls": {name: overall(f1) for name, f1 in calls.items()},
        "differences": {pair: interval(value) for pair, value in pairs.items()},
        "counts": {"genes": 40, "sites": 700},
        "bootstrap": {"replicates": 1000},
    }


SOURCE = site_metrics({"base_threshold": 0.93, "base_tuned": 0.93, "tree": 0.94, "kmer": 0.64}, {})
TARGET = site_metrics(
    {"base_tuned": 0.9, "tree": 0.91, "transfer_base_tuned": 0.901, "transfer_tree": 0.90456},
    {"tree - base_tuned": 0.01, "transfer_tree - transfer_base_tuned": 0.0036, "tree - transfer_tree": 0.005},
)


def test_a_card_holds_the_transferred_rows_and_only_transfer_differences():
    numbers = card_numbers("shipped", SOURCE, TARGET, DESCRIBED, None)
    assert [row["predictor"] for row in numbers["transfer"]] == ["transfer_base_tuned", "transfer_tree"]
    assert numbers["transfer"][1] == {
        "predictor": "transfer_tree",
        "f1": 0.9046,
        "precision": 0.9146,
        "recall": 0.8946,
    }
    assert [row["pair"] for row in numbers["differences"]] == ["transfer_tree - transfer_base_tuned"]
    assert numbers["differences"][0] == {
        "pair": "transfer_tree - transfer_base_tuned",
        "estimate": 0.0036,
        "low": 0.0016,
        "high": 0.0056,
    }
    assert [row["predictor"] for row in numbers["source_out_of_fold"]] == [
        "base_threshold",
        "base_tuned",
        "tree",
        "kmer",
    ]
    assert (
        numbers["target"] == {**DESCRIBED, "genes": 40, "sites": 700} and "ortholog_held_out" not in numbers
    )


def test_a_target_run_without_transfer_is_refused():
    with pytest.raises(InputError, match="no transferred predictor"):
        card_numbers("shipped", SOURCE, SOURCE, DESCRIBED, None)


def test_orthologs_held_out_are_the_shipped_minus_the_held_out_f1():
    report = {
        "orthologs": {"with_ortholog": 3},
        "comparisons": {
            "shipped": {"calls": {"transfer_tree": overall(0.907)}},
            "tree": {"calls": {"transfer_tree": overall(0.905), "held_out_tree": overall(0.903)}},
        },
    }
    held_out = card_numbers("shipped", SOURCE, TARGET, DESCRIBED, report)["ortholog_held_out"]
    assert held_out["shipped_minus_held_out_f1"] == {"transfer_tree": 0.002}
    assert held_out["target_genes_with_an_ortholog"] == 3 and "3 of 40" in held_out["note"]


@pytest.mark.parametrize("moved", [0.0, 0.0004, 0.0007])
def test_compare_holds_a_run_to_its_card_within_the_tolerance(tmp_path, monkeypatch, moved):
    card = card_numbers("shipped", SOURCE, TARGET, DESCRIBED, None)
    monkeypatch.setattr(shipped_rescorers, "measured", lambda name: card)
    run = json.loads(json.dumps(TARGET))
    run["calls"]["transfer_tree"]["overall"]["recall"] += moved
    path = tmp_path / "site_metrics.json"
    path.write_text(json.dumps(run))
    assert shipped_rescorers.compare("shipped", str(path)) is (moved <= shipped_rescorers.TOLERANCE)


def scan_metrics(scored: str) -> dict:
    """A whole-region scan's site_metrics.json with the re-scorer transferred."""
    report = site_metrics(
        {"base_threshold": 0.86, "transfer_tree": 0.84}, {"transfer_tree - base_threshold": -0.02}
    )
    fp = {"gene": 1, "antisense": 2, "intergenic": 3}
    report["whole_region"] = {
        "scored": scored,
        "calls": report["calls"],
        "false_positives_by_location": {"base_threshold": fp, "transfer_tree": fp},
        "differences": report["differences"],
        "bootstrap": {"replicates": 1000, "blocks": 30, "resampled_unit": "100-kb genomic block"},
    }
    return report


def test_a_cards_whole_region_figures_come_from_a_scan(tmp_path, monkeypatch):
    """`whole-region` adds a scan's figures to the card and refuses a run that scored only genes."""
    name = "atha-openspliceai-arabidopsis"
    card = json.loads((shipped_rescorers.FOLDER / f"{name}.measured.json").read_text())
    (tmp_path / f"{name}.measured.json").write_text(json.dumps(card))
    monkeypatch.setattr(shipped_rescorers, "FOLDER", tmp_path)
    words = ["--genome", "a scan", "--config", "a config"]
    genes_only = tmp_path / "genes.json"
    genes_only.write_text(json.dumps(scan_metrics("gene spans")))
    with pytest.raises(InputError, match="not a whole-region scan"):
        shipped_rescorers.main(["whole-region", name, str(genes_only), *words])
    scan = tmp_path / "scan.json"
    scan.write_text(json.dumps(scan_metrics("regions")))
    shipped_rescorers.main(["whole-region", name, str(scan), *words])
    written = json.loads((tmp_path / f"{name}.measured.json").read_text())
    assert written["transfer"] == card["transfer"]  # the in-gene figures kept
    tree = next(row for row in written["whole_region"]["calls"] if row["predictor"] == "transfer_tree")
    assert tree["f1"] == 0.84 and tree["calls"] == 10 and tree["fp"]["intergenic"] == 3
    assert written["whole_region"]["intervals"] == "1000 replicates over 30 100-kb genomic blocks"
