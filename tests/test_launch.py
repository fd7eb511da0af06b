import sys

import pytest

from workflow_scripts.errors import InputError
from workflow_scripts.launch import parse_args, processes_per_node, torchrun_command


def test_one_process_per_gpu_else_the_configured_cpu_processes():
    assert processes_per_node(gpus=0, cpu_procs=3) == 3
    with pytest.raises(InputError, match="resources: cpu_procs"):
        processes_per_node(gpus=0, cpu_procs=0)
    with pytest.raises(InputError, match="resources: gpu"):
        processes_per_node(gpus=-1, cpu_procs=2)


def test_command_is_one_torchrun_with_the_train_arguments_untouched():
    args, rest = parse_args(["--gpus", "0", "--cpu-procs", "2", "--", "--out", "a b;rm -rf x"])
    assert args.cpu_procs == 2 and rest == ["--out", "a b;rm -rf x"]
    command = torchrun_command(2, "workflow_scripts.train", rest)
    assert command[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nproc_per_node=2" in command and command[-2:] == rest
