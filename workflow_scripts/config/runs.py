"""The workflow's runs: every `experiments:` entry × fold (split.folds) × seed (train.repeats).

Each run is one value of the `{experiment}` wildcard with its own results/<run>/, so the folds
and seeds of every experiment train side by side in one DAG. A run's name is the experiment's,
then `_fold<i>` when split.folds > 1, then `_seed<r>` when train.repeats > 1:

    folds 1, repeats 1   fp_vs_tp                       (the experiment itself)
    folds 3, repeats 1   fp_vs_tp_fold1 .. fp_vs_tp_fold3
    folds 1, repeats 2   fp_vs_tp_seed1, fp_vs_tp_seed2
    folds 2, repeats 2   fp_vs_tp_fold1_seed1, fp_vs_tp_fold1_seed2, fp_vs_tp_fold2_seed1, ...

Run `_seed<r>` trains with seed train.seed + r - 1. What a rule sees of its run
(`run_config_json`): the `experiment` section is the entry under the run's name, with `fold`
(the fold it tests: data/splits.py) when split.folds > 1; the `train` section has the run's seed
and not train.repeats (so going from 2 repeats to 3 trains only the third). With one fold and one
repeat the experiment's run gets what its rules got before folds and repeats existed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workflow_scripts import layout
from workflow_scripts.config.sections import rule_config_json
from workflow_scripts.config.split_checks import check_split_config
from workflow_scripts.config.types import SplitSection
from workflow_scripts.errors import InputError

SET_BY_WORKFLOW = ("fold",)  # keys of an experiments: entry that only runs carry
# Keys about the set of runs, not one run: left out of what a run's rules get, so adding a
# repeat does not rerun the runs there already are.
WORKFLOW_KEYS = {"train": ("repeats",)}
MAX_SEED = 2**32 - 1  # train.seed's maximum in the schema


@dataclass(frozen=True)
class Run:
    name: str  # the wildcard value: results/<name>/
    group: str  # the experiments: entry it belongs to
    fold: int | None  # 1..split.folds, None with one fold
    seed: int  # train.seed of this run
    entry: dict = field(hash=False)  # the experiment section its rules get


def run_name(group: str, fold: int | None, repeat: int | None) -> str:
    return (
        group
        + (f"_fold{fold}" if fold is not None else "")
        + (f"_seed{repeat}" if repeat is not None else "")
    )


def expand_runs(experiments: list[dict], split: dict, train: dict) -> dict[str, Run]:
    """Every run, by name, experiment by experiment, folds before seeds (the module docstring).
    Sections as validated (defaults filled); an impossible combination is an InputError."""
    check_split_config(SplitSection.from_completed(split))
    folds, repeats = split["folds"], train["repeats"]
    if train["seed"] + repeats - 1 > MAX_SEED:
        raise InputError("config", "train.repeats", f"train.seed + {repeats} - 1 is above {MAX_SEED}")
    runs: dict[str, Run] = {}
    for index, experiment in enumerate(experiments):
        for key in SET_BY_WORKFLOW:
            if key in experiment:
                raise InputError(
                    "config", f"experiments.{index}.{key}", "set by the workflow for each run: leave it out"
                )
        for fold in range(1, folds + 1) if folds > 1 else (None,):
            for repeat in range(1, repeats + 1) if repeats > 1 else (None,):
                run = make_run(experiment, fold, repeat, train["seed"])
                if run.name in runs:
                    raise InputError(
                        "config",
                        f"experiments.{index}.name",
                        f"run {run.name!r} would be made twice; rename it",
                    )
                runs[run.name] = run
    return runs


def make_run(experiment: dict, fold: int | None, repeat: int | None, base_seed: int) -> Run:
    name = run_name(experiment["name"], fold, repeat)
    entry = {**experiment, "name": name, **({"fold": fold} if fold is not None else {})}
    seed = base_seed + (repeat - 1 if repeat is not None else 0)
    return Run(name=name, group=experiment["name"], fold=fold, seed=seed, entry=entry)


def runs_of_config(config: dict) -> dict[str, Run]:
    """expand_runs on a validated workflow config."""
    return expand_runs(config["experiments"], config["split"], config["train"])


def run_sections(config: dict, run: Run, sections: tuple[str, ...]) -> dict[str, dict]:
    """The named config sections as `run` sees them: `experiment` is its entry, `train` has its
    seed; WORKFLOW_KEYS are left out."""
    seen = {**config, "experiment": run.entry}
    if "train" in config:
        seen["train"] = {**config["train"], "seed": run.seed}
    for name, keys in WORKFLOW_KEYS.items():
        if name in seen:
            seen[name] = {key: value for key, value in seen[name].items() if key not in keys}
    return {name: seen[name] for name in sections}


def run_config_json(config: dict, run: Run, *sections: str) -> str:
    """A run's rule's `--config`: run_sections as one JSON value (rule_config_json's format)."""
    return rule_config_json(run_sections(config, run, sections), *sections)


def site_runs(config: dict, runs: dict[str, Run]) -> dict[str, Run]:
    """sites.model's runs: `site_candidates_fold<i>` for i in 1..sites.folds, each testing the
    candidates of site_calls' fold i (docs/sites.md), seeded with train.seed; {} when sites.model
    is off. They are not `experiments:` entries: no plots, explain or summary of their own."""
    if not config.get("sites", {}).get("model"):
        return {}
    if "sequences" in config or config["calling"]["start"] == "calls":
        raise InputError(
            "config",
            "sites.model",
            "site_calls runs only where the pipeline makes the calls (calling.start: scores or annotation)",
        )
    found = {}
    for fold in range(1, config["sites"]["folds"] + 1):
        name = layout.site_fold_run(fold)
        if name in runs:
            raise InputError("config", "experiments", f"run {name!r} is sites.model's: rename the experiment")
        entry = {"name": name, "fold": fold}
        found[name] = Run(
            name=name, group=layout.SITE_EXPERIMENT, fold=fold, seed=config["train"]["seed"], entry=entry
        )
    return found
