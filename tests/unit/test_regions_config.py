"""calling.start regions' config: a genome and the base model are enough (another genome's
re-scorer optional); what it cannot use (an annotation, a scores table, sites.model, calling.region) is
refused in one line, and calling.regions is refused where another start would ignore it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workflow_scripts.config.validate import load_schema, validate_config
from workflow_scripts.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "config/config.schema.yaml")


def regions_config(**changes) -> dict:
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["genome"] = "genome.fa"
    config["calling"] = {"start": "regions", "base_model": {"weights": "models/"}}
    config["sites"] = {"transfer": "source/results/sites/rescorer"}
    for key, value in changes.items():
        section, name = key.split("__")
        config[section] = {**config[section], name: value}
    return config


def refusal(config: dict) -> str:
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_a_genome_the_base_model_and_a_rescorer_are_enough():
    checked = validate_config(regions_config(), SCHEMA)
    assert checked["calling"]["start"] == "regions" and checked["calling"]["regions"] is None
    with_bed = validate_config(regions_config(calling__regions="regions.bed"), SCHEMA)
    assert with_bed["calling"]["regions"] == "regions.bed"


def test_without_a_rescorer_the_run_is_the_base_models_calls():
    """No re-scorer is fitted with every base model (the honeybee one: none): sites.transfer unset
    is a run, whose corrected calls are the base model's own (tests/unit/test_rescore_sites.py)."""
    checked = validate_config(regions_config(sites__transfer=None), SCHEMA)
    assert checked["sites"]["transfer"] is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"calling__base_model": {}},
            "config: calling.base_model.weights: calling.start regions needs the base model's weights",
        ),
        (
            {"sites__model": True},
            "config: sites.model: trains on annotated sites, and calling.start regions has none",
        ),
        ({"calling__region": "chr1:1-100"}, "config: calling.region: selects annotated genes"),
        (
            {"calling__annotation": "genes.gtf"},
            "config: calling.start: is regions, which ignores calling.annotation",
        ),
        ({"calling__scores": "s.parquet"}, "config: calling.start: is regions, which ignores calling.scores"),
    ],
)
def test_what_regions_cannot_use_is_one_line(changes, message):
    assert refusal(regions_config(**changes)).startswith(message)


def test_no_genome_is_refused():
    config = regions_config()
    del config["genome"]
    assert refusal(config) == "config: genome: calling.start regions needs the genome FASTA"


def test_a_bed_of_regions_is_refused_where_the_start_would_ignore_it():
    """calling.start scores ignores calling.regions; start annotation scans them (tests/unit/test_config_checks.py)."""
    config = regions_config(
        calling__start="scores", calling__annotation="genes.gtf", calling__regions="r.bed"
    )
    config["calling"]["scores"] = "s.parquet"
    del config["calling"]["base_model"]
    assert refusal(config) == (
        "config: calling.start: is scores, which ignores calling.regions; drop them or change the start"
    )


def test_a_bed_of_regions_without_a_start_is_refused():
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    config["calling"] = {"regions": "r.bed"}
    assert refusal(config).startswith(
        "config: calling.start: is calls (the default), which ignores calling.regions"
    )


def test_a_missing_bed_is_refused_while_the_workflow_is_parsed(tmp_path):
    from workflow_scripts.workflow.preflight import check_calling_inputs

    with pytest.raises(InputError) as error:
        check_calling_inputs({"start": "regions", "regions": str(tmp_path / "missing.bed")})
    assert str(error.value).startswith(f"{tmp_path / 'missing.bed'}: calling.regions: file not found")


def test_a_bed_inside_the_runs_own_outputs_is_refused(tmp_path):
    from workflow_scripts.workflow.preflight import check_inputs_outside_outputs

    config = regions_config(calling__regions="results/regions/regions.bed")
    with pytest.raises(InputError) as error:
        check_inputs_outside_outputs(config, tmp_path)
    assert str(error.value).startswith(
        "results/regions/regions.bed: calling.regions: lies inside this run's own outputs"
    )
