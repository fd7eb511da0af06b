"""The workflow's runs (config/runs.py): names and what each run's rules get. The real DAG that
`snakemake -n` plans with folds and repeats: tests/workflow/test_runs.py."""

import json

import pytest

from workflow_scripts.config.runs import expand_runs, run_config_json, runs_of_config
from workflow_scripts.config.sections import rule_config_json, schema, section_defaults
from workflow_scripts.config.validate import validate_config
from workflow_scripts.errors import InputError

EXPERIMENTS = [
    {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"},
    {"name": "fn_vs_tn", "error_label": "FN", "correct_label": "TN"},
]


def validated(**values) -> dict:
    """A whole workflow config as common.smk has it after validation."""
    return validate_config(
        {"genome": "g.fa", "calls": "c.tsv", "experiments": EXPERIMENTS, **values}, schema()
    )


def runs(folds=1, repeats=1, seed=0, experiments=EXPERIMENTS):
    split = {**section_defaults("split"), "folds": folds}
    train = {**section_defaults("train"), "repeats": repeats, "seed": seed}
    return expand_runs(experiments, split, train)


def test_one_fold_and_one_repeat_keep_the_experiment_names():
    made = runs()
    assert list(made) == ["fp_vs_tp", "fn_vs_tn"]
    assert made["fp_vs_tp"].entry == EXPERIMENTS[0]  # exactly the user's entry: no fold key
    assert (made["fp_vs_tp"].group, made["fp_vs_tp"].fold, made["fp_vs_tp"].seed) == ("fp_vs_tp", None, 0)


def test_folds_and_seeds_expand_in_order_with_their_group_fold_and_seed():
    assert list(runs(folds=3)) == [f"{e}_fold{i}" for e in ("fp_vs_tp", "fn_vs_tn") for i in (1, 2, 3)]
    seeds = runs(repeats=3, seed=7)
    assert list(seeds)[:3] == ["fp_vs_tp_seed1", "fp_vs_tp_seed2", "fp_vs_tp_seed3"]
    assert [run.seed for run in seeds.values()] == [7, 8, 9, 7, 8, 9]
    both = runs(folds=2, repeats=2)
    assert list(both)[:4] == [
        "fp_vs_tp_fold1_seed1",
        "fp_vs_tp_fold1_seed2",
        "fp_vs_tp_fold2_seed1",
        "fp_vs_tp_fold2_seed2",
    ]
    run = both["fn_vs_tn_fold2_seed1"]
    assert (run.group, run.fold, run.seed) == ("fn_vs_tn", 2, 0)
    assert run.entry == {**EXPERIMENTS[1], "name": "fn_vs_tn_fold2_seed1", "fold": 2}


def test_what_a_run_rule_gets():
    config = validated(train={"repeats": 2, "seed": 5})
    made = runs_of_config(config)
    sections = json.loads(run_config_json(config, made["fp_vs_tp_seed2"], "experiment", "model", "train"))
    assert sections["experiment"]["name"] == "fp_vs_tp_seed2"
    assert sections["train"]["seed"] == 6 and "repeats" not in sections["train"]
    assert sections["model"] == config["model"]
    first = json.loads(run_config_json(config, made["fp_vs_tp_seed1"], "model", "train"))
    assert {**first["train"], "seed": 6} == sections["train"]  # the seed is all that differs


def test_a_single_run_gets_what_rules_got_before_runs_existed():
    config = validated()
    run = runs_of_config(config)["fp_vs_tp"]
    before = {**config, "train": {k: v for k, v in config["train"].items() if k != "repeats"}}
    assert run_config_json(config, run, "model", "train") == rule_config_json(before, "model", "train")
    with_entry = {**config, "experiment": EXPERIMENTS[0]}
    assert run_config_json(config, run, "experiment", "split") == rule_config_json(
        with_entry, "experiment", "split"
    )


@pytest.mark.parametrize(
    ("experiments", "seed", "repeats", "field", "message"),
    [
        ([{**EXPERIMENTS[0], "fold": 1}], 0, 1, "experiments.0.fold", "set by the workflow"),
        ([EXPERIMENTS[0], EXPERIMENTS[0]], 0, 1, "experiments.1.name", "'fp_vs_tp' would be made twice"),
        (EXPERIMENTS, 2**32 - 2, 3, "train.repeats", "above 4294967295"),
    ],
)
def test_impossible_runs_are_config_errors(experiments, seed, repeats, field, message):
    with pytest.raises(InputError) as caught:
        runs(repeats=repeats, seed=seed, experiments=experiments)
    assert (caught.value.source, caught.value.field) == ("config", field)
    assert message in caught.value.message
