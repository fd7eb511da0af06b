import json
import sys

import pytest

from workflow_scripts.config.sections import section_defaults
from workflow_scripts.config.types import complete_typed_sections
from workflow_scripts.errors import InputError
from workflow_scripts.rules.train import STAGE
from workflow_scripts.training.entry import resources_from_args
from workflow_scripts.training.launch import (
    Resources,
    cluster_section,
    processes_per_node,
    torchrun_command,
)
from workflow_scripts.training.run_spec import RunSpec, read_launch_file, write_launch_file

PATHS = [
    "--windows",
    "w.parquet",
    "--manifest",
    "m.parquet",
    "--bucket-summary",
    "s.json",
    "--checkpoint-dir",
    "ck",
    "--out-weights",
    "a b;rm -rf x",
    "--out-config",
    "model.json",
    "--out-steps",
    "steps.jsonl",
    "--experiment",
    "fp_vs_tp",
]


def test_one_process_per_gpu_else_the_configured_cpu_processes():
    assert processes_per_node(gpus=0, cpu_procs=3) == 3
    with pytest.raises(InputError, match="resources: cpu_procs"):
        processes_per_node(gpus=0, cpu_procs=0)
    with pytest.raises(InputError, match="resources: gpu"):
        processes_per_node(gpus=-1, cpu_procs=2)


def test_command_is_one_torchrun_of_the_worker_given_the_launch_file_with_the_run_untouched(tmp_path):
    args, _ = STAGE.parse([*PATHS, "--gpus", "0", "--cpu-procs", "3"])
    assert resources_from_args(args) == Resources(gpus=0, cpu_procs=3, threads=args.threads, nodes=1)
    spec = RunSpec(
        experiment="fp_vs_tp",
        windows="w.parquet",
        manifest="m.parquet",
        bucket_summary="s.json",
        checkpoint_dir="ck",
        out_weights="a b;rm -rf x",
        out_config=str(tmp_path / "model" / "model.json"),
        out_steps="steps.jsonl",
        init_encoder="enc.pt",
    )
    sections = complete_typed_sections({"train": {"lr": 0.01}}, required=("model",))
    write_launch_file("classification", sections, spec)
    assert spec.launch_file == tmp_path / "model" / "launch.json"
    assert read_launch_file(spec.launch_file) == ("classification", sections, spec)
    rest = ["--launch-file", str(spec.launch_file)]
    command = torchrun_command(2, rest)
    assert command[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nproc_per_node=2" in command and command[-len(rest) - 2 :] == [
        "-m",
        "workflow_scripts.training.worker",
        *rest,
    ]


def test_several_nodes_run_one_srun_torchrun_per_node_with_a_c10d_rendezvous():
    from workflow_scripts.training.launch import Rendezvous, gpus_per_node, srun_torchrun_command

    assert gpus_per_node(8, 2) == 4
    with pytest.raises(InputError, match="split evenly"):
        gpus_per_node(6, 4)
    rendezvous = Rendezvous(("node001", "node002"), 29500, timeout_s=90)
    command = srun_torchrun_command(2, 4, 4, rendezvous, ["--x"])
    assert command[0] == "srun" and "--ntasks-per-node=1" in command and "--gpus-per-node=4" in command
    assert command.count("workflow_scripts.training.node_torchrun") == 1  # torchrun, naming failed ranks
    assert {
        "--nnodes=2",
        "--nproc_per_node=4",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=node001:29500",
        "--rdzv-conf=join_timeout=90,read_timeout=90",  # cluster.collective_timeout_s
    } <= set(command)
    assert "--standalone" not in command and command[-1] == "--x"


def test_one_node_in_a_slurm_batch_step_runs_torchrun_as_a_job_step(monkeypatch):
    """A job-array task runs in the batch step, which SLURM's step signals (--signal=TERM@300,
    scancel --signal) never reach: torchrun becomes a step of its own; inside a step, or outside
    SLURM, it runs in this process."""
    from workflow_scripts.training import launch

    cluster = section_defaults("cluster")
    resources = Resources(gpus=0, cpu_procs=2, threads=2, nodes=1)
    monkeypatch.delenv("SLURM_STEP_ID", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    local = launch.build_command(resources, ["--x"], cluster)
    assert local[1:3] == ["-m", "torch.distributed.run"]
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    step = launch.build_command(resources, ["--x"], cluster)
    assert step[:4] == ["srun", "--nodes=1", "--ntasks=1", "--kill-on-bad-exit=1"]
    assert step[4:7] == [sys.executable, "-m", "workflow_scripts.training.node_torchrun"]
    assert step[7:] == local[3:] and "--standalone" in step  # the same torchrun arguments
    monkeypatch.setenv("SLURM_STEP_ID", "0")
    assert launch.build_command(resources, ["--x"], cluster) == local


def test_each_job_meets_at_its_own_rendezvous_port():
    from workflow_scripts.training.launch import job_rendezvous_port

    assert job_rendezvous_port(29500, "4321") == 29821 and job_rendezvous_port(29500, "4322") == 29822
    assert job_rendezvous_port(29500, "") == 29500  # outside SLURM
    assert job_rendezvous_port(65000, "999") == 64001  # stays a port


def test_the_collective_timeout_reaches_the_ranks_through_the_exported_cluster_section():
    from workflow_scripts.config.types import parse_typed_config
    from workflow_scripts.training.cluster_env import (
        CLUSTER_ENV_VARIABLE,
        collective_timeout_s,
        export_section,
    )

    def rule_config(sections: dict) -> dict:
        return parse_typed_config(json.dumps(sections), required=("model", "train"))

    environ = {}
    assert collective_timeout_s(environ) == 600  # the schema's default
    export_section(
        cluster_section(rule_config({"cluster": {"collective_timeout_s": 45}})["cluster"]), environ
    )
    assert (
        collective_timeout_s(environ) == 45
        and json.loads(environ[CLUSTER_ENV_VARIABLE])["rdzv_port"] == 29500
    )
    with pytest.raises(InputError, match="cluster.collective_timeout_s"):
        rule_config({"cluster": {"collective_timeout_s": 0}})  # the rule's --config, checked once


def test_the_job_threads_are_shared_by_all_its_processes_on_all_its_nodes(monkeypatch):
    from workflow_scripts.training import launch

    monkeypatch.setattr(launch, "allocation_hosts", lambda: ("n1", "n2"))
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # restored after the test
    cluster = section_defaults("cluster")
    launch.build_command(Resources(gpus=0, cpu_procs=2, threads=2, nodes=1), ["--x"], cluster)
    assert launch.os.environ["OMP_NUM_THREADS"] == "1"
    command = launch.build_command(Resources(gpus=8, cpu_procs=2, threads=64, nodes=2), ["--x"], cluster)
    assert launch.os.environ["OMP_NUM_THREADS"] == "8" and "--nproc_per_node=4" in command


def test_cluster_presets_become_environment_variables_unless_already_set():
    from workflow_scripts.training.cluster_env import (
        apply_environment,
        parse_cluster_section,
        preset_environment,
    )

    section = parse_cluster_section(
        json.dumps(
            {
                "nccl_debug": "INFO",
                "nccl_socket_ifname": "",
                "nccl_ib_disable": True,
                "nccl_async_error_handling": True,
                "env": {"NCCL_P2P_DISABLE": 1},
            }
        )
    )
    presets = preset_environment(section)
    assert presets == {
        "NCCL_DEBUG": "INFO",
        "NCCL_IB_DISABLE": "1",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
        "NCCL_P2P_DISABLE": "1",
    }
    environ = {"NCCL_DEBUG": "WARN"}
    assert "NCCL_DEBUG" not in apply_environment(presets, environ) and environ["NCCL_DEBUG"] == "WARN"
    with pytest.raises(InputError, match="config: cluster"):
        parse_cluster_section("[1, 2]")


def test_cluster_section_comes_from_the_config_else_the_workflow_environment(monkeypatch):
    from workflow_scripts.training.cluster_env import CLUSTER_ENV_VARIABLE, parse_cluster_section

    monkeypatch.setenv(CLUSTER_ENV_VARIABLE, json.dumps({"nccl_debug": "INFO"}))
    from_environment = cluster_section(None)
    assert (
        from_environment["nccl_debug"] == "INFO" and from_environment["rdzv_port"] == 29500
    )  # schema default
    assert (
        cluster_section(complete_typed_sections({"cluster": {"rdzv_port": 29600}})["cluster"])["nccl_debug"]
        == "WARN"
    )
    monkeypatch.setenv(CLUSTER_ENV_VARIABLE, json.dumps({"nccl_debgu": "INFO"}))
    with pytest.raises(InputError, match="config: cluster.nccl_debgu: unknown key"):
        cluster_section(None)
    with pytest.raises(InputError, match="config: cluster"):
        parse_cluster_section("{'nccl_debug': 'INFO'}")


def test_no_gpus_requested_hides_visible_gpus_from_the_workers(monkeypatch):
    """resources.gpu 0 on a machine with CUDA: CPU processes with gloo, not N ranks on cuda:0."""
    from workflow_scripts.training import launch

    monkeypatch.setattr(launch.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(launch.torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    cluster = section_defaults("cluster")
    command = launch.build_command(Resources(gpus=0, cpu_procs=2, threads=2, nodes=1), ["--x"], cluster)
    assert "--nproc_per_node=2" in command
    assert launch.os.environ["CUDA_VISIBLE_DEVICES"] == ""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert "--nproc_per_node=1" in launch.build_command(
        Resources(gpus=1, cpu_procs=2, threads=2, nodes=1), ["--x"], cluster
    )
    assert launch.os.environ["CUDA_VISIBLE_DEVICES"] == "0"


@pytest.mark.parametrize(
    "strategy, precision, cuda, message",
    [
        ("fsdp", "fp16", True, "fsdp trains in fp32 or bf16"),
        ("ddp", "fp16", False, "fp16 needs a CUDA GPU"),
        ("deepspeed", "fp16", False, "fp16 needs a CUDA GPU"),
    ],
)
def test_fp16_rules_are_checked_before_torchrun_starts(strategy, precision, cuda, message):
    from tests.train_fixtures import train_config
    from workflow_scripts.training.prelaunch import check_before_launch

    with pytest.raises(InputError, match=f"config: train.precision: {message}"):
        check_before_launch(train_config(strategy=strategy, precision=precision), cuda=cuda)
    check_before_launch(train_config(strategy="ddp", precision="fp16"), cuda=True)


def test_one_precision_rule_for_every_strategy():
    from workflow_scripts.training.precision import resolve_precision

    assert resolve_precision("ddp", "auto", cuda=False, bf16=True) == "fp32"
    assert resolve_precision("fsdp", "auto", cuda=True, bf16=True) == "bf16"
    assert resolve_precision("deepspeed", "auto", cuda=True, bf16=False) == "fp32"
    assert resolve_precision("fsdp", "bf16", cuda=False, bf16=True) == "bf16"
    with pytest.raises(InputError, match="bf16 is not supported on this GPU"):
        resolve_precision("ddp", "bf16", cuda=True, bf16=False)


def test_pretrain_takes_epochs_lr_and_max_steps_from_its_own_section():
    from workflow_scripts.config.types import complete_typed_sections
    from workflow_scripts.training.objectives.masked_lm import pretrain_train_section

    sections = {
        "train": {"epochs": 7, "lr": 0.1, "max_steps": 50, "strategy": "fsdp"},
        "pretrain": {"epochs": 2, "lr": 0.004},
    }
    completed = complete_typed_sections(sections, required=("model",))
    pretrain = pretrain_train_section(completed["train"], completed["pretrain"])
    assert (pretrain.epochs, pretrain.lr, pretrain.max_steps, pretrain.strategy) == (2, 0.004, None, "fsdp")
    sections["pretrain"]["max_steps"] = 5
    completed = complete_typed_sections(sections, required=("model",))
    assert pretrain_train_section(completed["train"], completed["pretrain"]).max_steps == 5
    train = completed["train"]
    assert (train.epochs, train.lr, train.max_steps) == (7, 0.1, 50)


def test_cuda_ranks_turn_off_cudnn_attention_which_rebuilds_for_every_new_length():
    """Measured on an H100: ~130 ms per new padded length in bf16 (docs/performance.md)."""
    import torch

    from workflow_scripts.training.distributed import avoid_per_shape_kernels

    before = torch.backends.cuda.cudnn_sdp_enabled()
    try:
        avoid_per_shape_kernels()
        assert not torch.backends.cuda.cudnn_sdp_enabled()
    finally:
        torch.backends.cuda.enable_cudnn_sdp(before)
