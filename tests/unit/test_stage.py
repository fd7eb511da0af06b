"""config/stage.py and config/stages/: a rule's declaration gives its parser, its flags and its
`--config`; a stage reads only the config it declared, and gets only that from the workflow, so a
change to another key leaves its params (and so its outputs) as they are."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest
import yaml

from tests.workflow_helpers import ROOT
from workflow_scripts.config.sections import schema
from workflow_scripts.config.stage import UndeclaredConfig
from workflow_scripts.config.stages import STAGES
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.config.types import CallingSection, EvaluateSection, SitesSection
from workflow_scripts.config.validate import validate_config
from workflow_scripts.errors import InputError


def demo_config(**changes: dict) -> dict:
    """config/config.yaml as the workflow validates it, with `changes` merged per section."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for section, values in changes.items():
        config[section] = {**config.get(section, {}), **values}
    return validate_config(config, schema())


def test_parse_gives_the_paths_and_the_typed_sections():
    stage = STAGES["evaluate"]
    config = json.dumps({"evaluate": {"batch_size": 7}, "train": {"seed": 3}})
    paths, cfg = stage.parse(
        [
            *stage.path_flags(
                {"windows": "w.parquet", "manifest": "m.parquet", "model": "m.pt", "model_config": "m.json"},
                {"predictions": "p.parquet", "metrics": "metrics.json"},
            ),
            "--experiment",
            "e",
            "--config",
            config,
        ]
    )
    assert (paths.windows, paths.model_config, paths.out_metrics, paths.experiment) == (
        "w.parquet",
        "m.json",
        "metrics.json",
        "e",
    )
    assert isinstance(cfg.evaluate, EvaluateSection) and cfg.evaluate.batch_size == 7
    assert isinstance(cfg.train, TrainConfig) and cfg.train.seed == 3
    assert not hasattr(paths, "config")


def test_a_missing_required_path_is_a_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        STAGES["evaluate"].parse(["--windows", "w.parquet", "--experiment", "e"])
    assert exit_info.value.code == 2


def test_a_key_outside_the_declared_subset_cannot_be_read():
    """annotate_sites declares calling's biotypes, transcripts and region: the threshold the user
    gave by hand is dropped, and reading it is an error, not the schema's default."""
    text = json.dumps({"calling": {"biotypes": ["lncRNA"], "threshold": 0.9}})
    cfg = STAGES["annotate_sites"].typed_config(text)
    assert cfg.calling.biotypes == ["lncRNA"]
    with pytest.raises(UndeclaredConfig, match=r"calling\.threshold"):
        cfg.calling.threshold  # noqa: B018
    assert cfg.completed("calling") == {"biotypes": ["lncRNA"], "transcripts": "all", "region": None}
    with pytest.raises(UndeclaredConfig, match="'sites'"):
        cfg.sites  # noqa: B018


def test_a_whole_section_is_the_typed_class_and_bad_values_name_the_key():
    cfg = STAGES["rescore_sites"].typed_config(json.dumps({"sites": {"folds": 4}}))
    assert isinstance(cfg.sites, SitesSection) and cfg.sites.folds == 4
    assert isinstance(cfg.calling.__dict__["_section"], CallingSection)
    with pytest.raises(InputError, match=r"sites\.folds"):
        STAGES["rescore_sites"].typed_config(json.dumps({"sites": {"folds": "many"}}))
    with pytest.raises(InputError, match="JSON"):
        STAGES["rescore_sites"].typed_config("{not json")


def test_optional_sections_are_none_when_absent():
    assert STAGES["train"].typed_config(json.dumps({})).cluster is None
    assert STAGES["summarize"].typed_config(json.dumps({})).experiments is None
    given = STAGES["summarize"].typed_config(
        json.dumps({"experiments": [{"name": "a", "error_label": "FP", "correct_label": "TP"}]})
    )
    assert [experiment.name for experiment in given.experiments] == ["a"]


def test_a_calling_rule_gets_only_its_keys():
    config = demo_config()
    moved = demo_config(calling={"threshold": 0.3})
    for rule in ("annotate_sites", "cluster_genes", "score_base_model", "make_calls"):
        keys = STAGES[rule].config["calling"]
        sections = json.loads(STAGES[rule].config_json(config))
        assert list(sections) == ["calling"] and set(sections["calling"]) <= set(keys), rule
        changed = STAGES[rule].config_json(moved) != STAGES[rule].config_json(config)
        assert changed == (rule == "make_calls"), rule


def test_site_rules_read_their_keys():
    config = demo_config()
    other = copy.deepcopy(config)
    other["sites"]["bootstrap_replicates"] += 1  # the intervals: site_calls only
    assert STAGES["site_windows"].config_json(other) == STAGES["site_windows"].config_json(config)
    assert STAGES["site_calls"].config_json(other) != STAGES["site_calls"].config_json(config)
    windows = json.loads(STAGES["site_windows"].config_json(config))
    assert set(windows["sites"]) == {"floor", "peak_radius", "folds", "seed"}
    assert windows["split"] == {"fractions": config["split"]["fractions"]}


def test_site_calls_gets_the_batch_size_only_with_sites_model():
    config = demo_config()
    off = json.loads(STAGES["site_calls"].config_json(config))
    on_config = copy.deepcopy(config)
    on_config["sites"]["model"] = True
    on = json.loads(STAGES["site_calls"].config_json(on_config))
    assert off["evaluate"] == {"kmer_max_k": config["evaluate"]["kmer_max_k"]}
    assert on["evaluate"] == {**off["evaluate"], "batch_size": config["evaluate"]["batch_size"]}
    sites = {key: value for key, value in config["sites"].items() if key != "transfer"}  # an input
    assert on["window"] == {"flank": config["window"]["flank"]} and off["sites"] == sites
    rescore = json.loads(STAGES["rescore_sites"].config_json(config))
    assert rescore == {
        "calling": {key: config["calling"][key] for key in ("threshold", "consensus_window")},
        "sites": sites,
        "evaluate": {"batch_size": config["evaluate"]["batch_size"]},
    }


def test_the_declarations_import_no_heavy_library():
    """rules/common.smk imports them while Snakemake parses the workflow."""
    code = (
        "import sys, workflow_scripts.workflow.rule_params;"
        "from workflow_scripts.config.stages import STAGES; [STAGES[rule] for rule in STAGES];"
        "print(sorted({'torch', 'polars', 'sklearn', 'numpy', 'pandas'} & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "[]"


def test_every_program_parses_with_its_declaration():
    """Each workflow_scripts/rules/<rule>.py has a declaration, and its STAGE is it."""
    programs = {path.stem for path in (ROOT / "workflow_scripts" / "rules").glob("*.py")} - {"__init__"}
    assert programs == set(STAGES)


def test_site_calls_fold_runs_are_named_inputs_one_path_per_fold():
    """sites.model's runs reach site_calls as the inputs fold_<file>, zipped into FoldRunFiles."""
    from workflow_scripts.rules.site_calls import STAGE, fold_run_inputs

    runs = ("results/site_candidates_fold1", "results/site_candidates_fold2")
    fold_inputs = {
        "fold_windows": [f"{run}/windows.parquet" for run in runs],
        "fold_manifest": [f"{run}/buckets/manifest.parquet" for run in runs],
        "fold_weights": [f"{run}/model/model.pt" for run in runs],
        "fold_model_config": [f"{run}/model/model.json" for run in runs],
        "fold_predictions": [f"{run}/evaluation/predictions.parquet" for run in runs],
    }
    required = ["--genome", "g", "--scores", "s", "--sites", "s", "--genes", "g", "--gene-clusters", "c"]
    outputs = {
        name: name for name in ("calls", "tree_bed", "base_bed", "metrics", "rescorer", "errorseq_bed")
    }
    paths, _ = STAGE.parse([*required, *STAGE.path_flags(fold_inputs, outputs)])
    folds = fold_run_inputs(paths)
    assert [fold.run for fold in folds] == list(runs)
    assert folds[1].weights == "results/site_candidates_fold2/model/model.pt"
    off, _ = STAGE.parse([*required, *STAGE.path_flags({}, outputs)])
    assert fold_run_inputs(off) == []
    short = {**fold_inputs, "fold_weights": fold_inputs["fold_weights"][:1]}
    uneven, _ = STAGE.parse([*required, *STAGE.path_flags(short, outputs)])
    with pytest.raises(InputError, match="--fold-"):
        fold_run_inputs(uneven)


# ---- a path enters its job once: an Input that names its config key (Input.key) ----------------


def test_a_keyed_path_leaves_the_config_and_reads_as_its_input():
    """sites.transfer and calling.base_model.weights reach their jobs once, as declared inputs
    (their digest the rerun trigger): never in `--config`, and `cfg.<key>` is the input's path."""
    config = copy.deepcopy(demo_config())  # as the validated config of a run that names both
    config["sites"]["transfer"] = "their/rescorer"
    config["calling"]["base_model"]["weights"] = "models/ensemble"
    keyed = {name: [item.key for item in stage.inputs if item.key] for name, stage in STAGES.items()}
    assert {name: keys for name, keys in keyed.items() if keys} == {
        "rescore_sites": ["sites.transfer"],
        "score_base_model": ["calling.base_model.weights"],
        # calling.start scores: the weights that made the scores table, recorded (made_by)
        "site_calls": ["calling.base_model.weights", "sites.transfer"],
        "summarize": ["calling.base_model.weights"],
    }
    for stage in STAGES.values():  # no stage carries either path in its --config
        if stage.per_run:
            continue
        text = stage.config_json(config)
        assert "their/rescorer" not in text and "models/ensemble" not in text, stage.rule
    stage = STAGES["score_base_model"]
    assert "weights" not in json.loads(stage.config_json(config))["calling"]["base_model"]
    paths, cfg = stage.parse(
        ["--config", stage.config_json(config), "--genome", "g", "--genes", "genes.parquet"]
        + ["--weights", "a.pt", "b.pt", "--out-scores", "s.parquet"]
    )
    assert cfg.calling.base_model.weights == paths.weights == ["a.pt", "b.pt"]
    stage = STAGES["site_calls"]
    argv = ["--config", stage.config_json(config), "--genome", "g", "--transfer", "their/rescorer"]
    argv += ["--scores", "s", "--sites", "s", "--genes", "g", "--gene-clusters", "c"]
    for output in stage.outputs:
        if output.required:
            argv += [f"--out-{output.name.replace('_', '-')}", f"{output.name}.out"]
    paths, cfg = stage.parse(argv)
    assert cfg.sites.transfer == paths.transfer == "their/rescorer"
