"""`sites.transfer: builtin:<name>`: a shipped re-scorer folder (workflow_scripts/rescorers/),
refused in one line for a name not shipped or a key other than sites.transfer."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.unit.test_rescore_sites import run
from tests.unit.test_rescore_sites import target as target  # noqa: F401 (the target genome fixture)
from workflow_scripts.config.package_paths import resolve_package_paths
from workflow_scripts.errors import InputError
from workflow_scripts.rescorers import FOLDER, available
from workflow_scripts.sites.base_match import check_same_base
from workflow_scripts.sites.rescore import whole_region_evidence


def test_a_name_not_shipped_lists_the_shipped_ones():
    with pytest.raises(InputError) as error:
        resolve_package_paths({"sites": {"transfer": "builtin:no-such"}})
    assert error.value.field == "sites.transfer" and "shipped:" in error.value.message


def test_builtin_names_a_rescorer_only_in_sites_transfer():
    with pytest.raises(InputError, match="only in sites.transfer"):
        resolve_package_paths({"calling": {"scores": "builtin:anything"}})


@pytest.mark.parametrize("name", available())
def test_each_shipped_name_resolves_to_its_folder(name):
    resolved = resolve_package_paths({"sites": {"transfer": f"builtin:{name}"}})
    assert resolved["sites"]["transfer"] == str(FOLDER / name)


SHIPPED = "atha-openspliceai-arabidopsis"


@pytest.mark.parametrize("name", available())
def test_each_shipped_rescorer_loads_and_corrects_a_genome_without_annotation(tmp_path, target, name):  # noqa: F811
    """Every file checked against its manifest, then applied by rescore_sites: the source's
    recommendation (out of fold on its own genome) is carried over where it was made over whole
    regions (sites/rescore.whole_region_evidence), else the calls are the base model's own."""
    manifest = json.loads((FOLDER / name / "rescorer.json").read_text())
    results = manifest["results"]
    recommended = results["recommended"]["predictor"]
    run(target, FOLDER / name, tmp_path)
    report = json.loads((tmp_path / "out.report").read_text())
    if whole_region_evidence(results):
        column = "call_base_threshold" if recommended == "base_threshold" else f"call_transfer_{recommended}"
        assert report["corrected_calls"]["predictor"] == column.removeprefix("call_")
        assert f"recommends {recommended}" in report["corrected_calls"]["why"]
    else:
        column = "call_base_threshold"
        assert report["corrected_calls"]["predictor"] == "base_threshold"
        assert "no whole-region evidence" in report["corrected_calls"]["why"]
    assert report["rescorer"]["deep_models"] == len(manifest["deep_models"]) and report["metrics"] is None
    calls = pl.read_parquet(tmp_path / "out.calls")
    # the made-up genome's isolated peaks may all look intergenic to a tree fitted on a whole-region
    # scan (atha-scan: it calls none of them); the base calls some, and no predictor calls every one
    assert calls.height > 0 and 0 < calls["call_base_threshold"].sum() < calls.height
    assert calls[column].dtype == pl.Boolean and calls[column].sum() < calls.height


def test_the_shipped_rescorer_refuses_another_base_model():
    shipped = json.loads((FOLDER / SHIPPED / "rescorer.json").read_text())["source"]["base_model"]
    assert shipped["made_by"]["family"] == "openspliceai"
    assert shipped["made_by"]["species"] == "Arabidopsis thaliana"
    spliceai = {
        "source": "weights",
        "family": "keras-spliceai",
        "species": "Homo sapiens",
        "files": [
            {
                "path": "spliceai1.h5",
                "sha256": "e1fd5adcef7489d604b10e79c40078ef790d51ef048c4ce3869c9119ac5de42b",
            }
        ],
    }
    with pytest.raises(InputError, match="openspliceai models trained on Arabidopsis thaliana"):
        check_same_base(shipped, spliceai, str(FOLDER / SHIPPED))


def test_each_shipped_rescorer_has_its_card_and_measured_numbers():
    for name in available():
        card = (FOLDER / f"{name}.md").read_text()
        measured = json.loads((FOLDER / f"{name}.measured.json").read_text())
        assert name in card and measured["rescorer"] == name
        for row in measured["transfer"]:
            assert f"{row['f1']:.3f}" in card  # the card shows the numbers the benchmark checks
        whole = measured.get("whole_region", {}).get("calls", [])
        # issue 49: every card carries whole-region figures beside in-gene ones, a transferred
        # predictor's and the base's at 0.5, and shows the transferred ones
        assert {"base_threshold", "transfer_tree"} <= {row["predictor"] for row in whole}, name
        for row in whole:
            if row["predictor"].startswith("transfer_"):
                assert f"{row['f1']:.3f}" in card, (name, row)
