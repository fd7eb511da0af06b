"""Training faults and reruns (issue 17), met the way a user meets them: the exit status and one
last line `errorseq: ...` naming the file, folder or key, and no traceback.

- reruns: each rule's code digest; a run that exported its model is not resumed (a forced rerun
  trains afresh; a crash rerun resumes: test_faults, test_train); Snakemake's side is in
  test_train_workflow
- a DeepSpeed JSON that contradicts errorseq or that DeepSpeed refuses: refused before torchrun
- a full disk during a save: one line naming the file

Each takes a second. Through a real torchrun (a corrupted model.pt, a truncated checkpoint,
max_steps, a read-only or full output folder, Ctrl-C): tests/workflow/test_training_faults.py.
"""

from __future__ import annotations

import json
import re

import pytest
import torch

from tests.train_fixtures import train_config
from workflow_scripts import source_digest
from workflow_scripts.config.sections import complete_section, section_defaults
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.training.checkpoint import save_tensors
from workflow_scripts.training.strategies import deepspeed_config as dsc
from workflow_scripts.workflow.preflight import check_input_files

# ---- reruns: the code a rule runs -------------------------------------------------------------


def test_a_rule_code_digest_covers_what_the_rule_runs_and_changes_with_it(package_copy):
    closure = source_digest.module_closure("workflow_scripts.rules.train")
    assert {
        "workflow_scripts.training.worker",  # started by torchrun: named in a string, never imported
        "workflow_scripts.training.loop",
        "workflow_scripts.training.strategies.deepspeed_engine",  # imported inside a function
        "workflow_scripts.training",  # packages' __init__.py run on import
    } <= closure
    assert "workflow_scripts.evaluation.plots.training" not in closure
    rules = ("train", "pretrain", "extract", "evaluate")
    before = {rule: source_digest.rule_code_digest(rule) for rule in rules}
    assert len(set(before.values())) == len(rules) and all(len(d) == 16 for d in before.values())
    loop = package_copy / "training" / "loop.py"
    loop.write_text(loop.read_text() + "# an edit\n")
    source_digest.code_digest.cache_clear()
    source_digest.module_source.cache_clear()
    after = {rule: source_digest.rule_code_digest(rule) for rule in rules}
    assert [rule for rule in rules if after[rule] != before[rule]] == ["train", "pretrain"]


# ---- the user's DeepSpeed JSON ------------------------------------------------------------------
def deepspeed(**train):
    return train_config(**{"strategy": "deepspeed", "zero_stage": 2, **train})


@pytest.mark.parametrize(
    "user, key, message",
    [
        (
            {"train_batch_size": 64},
            "train_batch_size",
            "64 differs from the bucket batch sizes × train.grad_accumulation × world size (16)",
        ),
        (
            {"train_micro_batch_size_per_gpu": 3},
            "train_micro_batch_size_per_gpu",
            "3 differs from the largest bucket batch size (bucket: section) (8)",
        ),
        (
            {"gradient_accumulation_steps": 4},
            "gradient_accumulation_steps",
            "4 differs from train.grad_accumulation (1)",
        ),
        ({"gradient_clipping": 0.5}, "gradient_clipping", "0.5 differs from train.grad_clip (1.0)"),
        ({"bf16": {"enabled": True}}, "bf16.enabled", "true differs from train.precision (false)"),
        (
            {"zero_optimization": {"stage": 3}},
            "zero_optimization.stage",
            "3 differs from train.zero_stage (2)",
        ),
        (
            {"zero_optimization": {"offload_optimizer": {"device": "cpu"}}},
            "zero_optimization.offload_optimizer",
            "true differs from train.offload_optimizer (false)",
        ),
        (
            {"zero_force_ds_cpu_optimizer": True},
            "zero_force_ds_cpu_optimizer",
            "must be false: errorseq passes its own torch AdamW",
        ),
        (
            {"scheduler": {"type": "WarmupLR"}},
            "scheduler",
            "errorseq builds the optimizer and LR schedule from train.*; remove it",
        ),
    ],
)
def test_a_deepspeed_json_key_that_contradicts_errorseq_names_the_file_and_key(tmp_path, user, key, message):
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(user))
    with pytest.raises(InputError) as refused:
        dsc.build(
            deepspeed(precision="fp32", deepspeed_config=str(path)),
            world_size=2,
            micro_batch=8,
            hardware=dsc.CPU_ONLY,
        )
    assert str(refused.value) == f"{path}: {key}: {message}" + (
        "; set it in one place" if "differs" in message else ""
    )


def test_a_deepspeed_json_may_repeat_errorseqs_values_and_tune_the_rest(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(
        json.dumps(
            {
                "train_batch_size": 16,
                "gradient_clipping": 1,
                "bf16": {"enabled": False},
                "zero_optimization": {"stage": 2, "reduce_bucket_size": 1000},
                "steps_per_print": 7,
            }
        )
    )
    merged = dsc.build(
        deepspeed(precision="fp32", deepspeed_config=str(path)),
        world_size=2,
        micro_batch=8,
        hardware=dsc.CPU_ONLY,
    )
    assert merged["zero_optimization"]["reduce_bucket_size"] == 1000 and merged["steps_per_print"] == 7


@pytest.mark.parametrize(
    "text, train, expected",
    [
        (
            '{"zero_optimization": {"stage": 2,}}',
            {},
            "JSON: line 1: Expecting property name enclosed in double quotes",
        ),
        ("[1, 2]", {}, "JSON: must be an object"),
        (
            '{"gradient_accumulation_steps": 2}',
            {"grad_accumulation": 4},
            "gradient_accumulation_steps: 2 differs from train.grad_accumulation (4); set it in one place",
        ),
        (
            '{"fp16": {"enabled": true}}',
            {"precision": "bf16"},
            "fp16.enabled: true differs from train.precision (false); set it in one place",
        ),
    ],
)
def test_preflight_refuses_a_bad_deepspeed_json_before_any_job(tmp_path, text, train, expected):
    path = tmp_path / "ds.json"
    path.write_text(text)
    section = complete_section(
        "train", {"strategy": "deepspeed", "zero_stage": 2, "deepspeed_config": str(path), **train}
    )
    with pytest.raises(InputError) as refused:
        check_input_files({"calling": section_defaults("calling"), "train": section})
    assert str(refused.value) == f"{path}: {expected}"


def test_deepspeeds_own_parser_refuses_with_one_line(tmp_path):
    merged = dsc.merge(
        dsc.build(deepspeed(), world_size=1, micro_batch=4, hardware=dsc.CPU_ONLY),
        {"zero_optimization": {"reduce_bucket_size": "big"}},
    )
    with pytest.raises(InputError) as refused:
        dsc.check_with_deepspeed(merged, "ds.json")
    assert re.fullmatch(
        r"ds\.json: DeepSpeed: refused by DeepSpeed: .*reduce_bucket_size; Input should be a valid "
        r"integer, unable to parse string as an integer",
        str(refused.value),
    ), str(refused.value)


# ---- file-system errors -------------------------------------------------------------------------
def test_a_full_disk_during_a_save_is_one_line_naming_the_file(capsys):
    def main(argv):
        save_tensors({"w": torch.zeros(100_000)}, "/dev/full")  # every write: ENOSPC

    with pytest.raises(SystemExit) as exited:
        run_cli(main)
    assert exited.value.code == 2
    assert capsys.readouterr().err == "errorseq: error: /dev/full: ENOSPC: No space left on device\n"
