import json
import sys

import pytest

from workflow_scripts.errors import InputError
from workflow_scripts.training.launch import parse_args, processes_per_node, torchrun_command


def test_one_process_per_gpu_else_the_configured_cpu_processes():
    assert processes_per_node(gpus=0, cpu_procs=3) == 3
    with pytest.raises(InputError, match="resources: cpu_procs"):
        processes_per_node(gpus=0, cpu_procs=0)
    with pytest.raises(InputError, match="resources: gpu"):
        processes_per_node(gpus=-1, cpu_procs=2)


def test_command_is_one_torchrun_with_the_train_arguments_untouched():
    args, rest = parse_args(["--gpus", "0", "--cpu-procs", "2", "--", "--out", "a b;rm -rf x"])
    assert args.cpu_procs == 2 and rest == ["--out", "a b;rm -rf x"]
    command = torchrun_command(2, "workflow_scripts.training.train", rest)
    assert command[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nproc_per_node=2" in command and command[-2:] == rest


def test_several_nodes_run_one_srun_torchrun_per_node_with_a_c10d_rendezvous():
    from workflow_scripts.training.launch import gpus_per_node, srun_torchrun_command

    assert gpus_per_node(8, 2) == 4
    with pytest.raises(InputError, match="split evenly"):
        gpus_per_node(6, 4)
    command = srun_torchrun_command(2, 4, 4, "node001", 29500, "workflow_scripts.training.train", ["--x"])
    assert command[0] == "srun" and "--ntasks-per-node=1" in command and "--gpus-per-node=4" in command
    assert command.count("torch.distributed.run") == 1
    assert {"--nnodes=2", "--nproc_per_node=4", "--rdzv-backend=c10d",
            "--rdzv-endpoint=node001:29500"} <= set(command)
    assert "--standalone" not in command and command[-1] == "--x"


def test_cluster_presets_become_environment_variables_unless_already_set():
    from workflow_scripts.training.cluster_env import apply_environment, parse_cluster_section, preset_environment

    section = parse_cluster_section(json.dumps({"nccl_debug": "INFO", "nccl_socket_ifname": "",
                                         "nccl_ib_disable": True, "nccl_async_error_handling": True,
                                         "env": {"NCCL_P2P_DISABLE": 1}}))
    presets = preset_environment(section)
    assert presets == {"NCCL_DEBUG": "INFO", "NCCL_IB_DISABLE": "1",
                       "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1", "NCCL_P2P_DISABLE": "1"}
    environ = {"NCCL_DEBUG": "WARN"}
    assert "NCCL_DEBUG" not in apply_environment(presets, environ) and environ["NCCL_DEBUG"] == "WARN"
    with pytest.raises(InputError, match="config: cluster"):
        parse_cluster_section("[1, 2]")


def test_cluster_section_comes_from_the_workflow_environment(monkeypatch):
    from workflow_scripts.training.cluster_env import CLUSTER_ENV_VARIABLE, parse_cluster_section

    monkeypatch.setenv(CLUSTER_ENV_VARIABLE, json.dumps({"nccl_debug": "INFO"}))
    args, _ = parse_args(["--gpus", "0", "--"])
    assert parse_cluster_section(args.cluster_env) == {"nccl_debug": "INFO"}
    with pytest.raises(InputError, match="config: cluster"):
        parse_cluster_section("{'nccl_debug': 'INFO'}")


def test_no_gpus_requested_hides_visible_gpus_from_the_workers(monkeypatch):
    """resources.gpu 0 on a machine with CUDA: CPU processes with gloo, not N ranks on cuda:0."""
    from workflow_scripts.training import launch

    monkeypatch.setattr(launch.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(launch.torch.cuda, "device_count", lambda: 1)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    args, rest = parse_args(["--gpus", "0", "--cpu-procs", "2", "--threads", "2", "--", "--x"])
    command = launch.build_command(args, rest, 29500)
    assert "--nproc_per_node=2" in command
    assert launch.os.environ["CUDA_VISIBLE_DEVICES"] == ""
    args, rest = parse_args(["--gpus", "1", "--threads", "2", "--", "--x"])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert "--nproc_per_node=1" in launch.build_command(args, rest, 29500)
    assert launch.os.environ["CUDA_VISIBLE_DEVICES"] == "0"


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
