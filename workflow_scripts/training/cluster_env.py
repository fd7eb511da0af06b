"""NCCL and other environment presets for training jobs, from the config's `cluster:` section.

Variables already set in the job's environment win over the config (export NCCL_DEBUG=INFO
before `snakemake` to debug one run: SLURM passes the environment on with --export=ALL).
The section itself travels to every process of a job as JSON in ERRORSEQ_CLUSTER_ENV: every
job's shell line exports it (workflow/job_environment.py, not a rule param, so changing an NCCL
setting does not retrain), the launcher sets it again for the ranks, which read their collective
timeout from it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping

from workflow_scripts.config.sections import complete_section
from workflow_scripts.errors import InputError

# The config's cluster: section as JSON, exported on every job's shell line (workflow/job_environment.py).
CLUSTER_ENV_VARIABLE = "ERRORSEQ_CLUSTER_ENV"

# config key -> environment variable
NCCL_SETTINGS = {
    "nccl_debug": "NCCL_DEBUG",
    "nccl_socket_ifname": "NCCL_SOCKET_IFNAME",
    "nccl_ib_disable": "NCCL_IB_DISABLE",
    "nccl_async_error_handling": "TORCH_NCCL_ASYNC_ERROR_HANDLING",
}


def as_env_value(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def preset_environment(section: dict) -> dict[str, str]:
    """The variables the `cluster:` section asks for; empty/absent settings are left out."""
    presets = {}
    for key, variable in NCCL_SETTINGS.items():
        value = section.get(key)
        if value is not None and value != "":
            presets[variable] = as_env_value(value)
    for variable, value in (section.get("env") or {}).items():
        presets[str(variable)] = as_env_value(value)
    return presets


def parse_cluster_section(text: str) -> dict:
    """The section as JSON (the workflow exports it in ERRORSEQ_CLUSTER_ENV)."""
    try:
        section = json.loads(text or "{}")
    except json.JSONDecodeError as error:
        raise InputError("config", "cluster", f"not JSON ({error})") from None
    if not isinstance(section, dict):
        raise InputError("config", "cluster", "must be a mapping")
    return section


def section_from_environment(environ: Mapping[str, str] = os.environ) -> dict:
    """The completed cluster section the workflow (or the launcher) exported for this job."""
    return complete_section("cluster", parse_cluster_section(environ.get(CLUSTER_ENV_VARIABLE, "{}")))


def export_section(section: dict, environ: MutableMapping[str, str] = os.environ) -> None:
    """Hand the section on to every process started from here (srun, torchrun, the ranks)."""
    environ[CLUSTER_ENV_VARIABLE] = json.dumps(section, sort_keys=True)


def collective_timeout_s(environ: Mapping[str, str] = os.environ) -> int:
    """cluster.collective_timeout_s: how long a rank waits in one collective before failing."""
    return int(section_from_environment(environ)["collective_timeout_s"])


def apply_environment(
    presets: dict[str, str], environ: MutableMapping[str, str] = os.environ
) -> dict[str, str]:
    """Set each preset that the environment does not set already; return those set."""
    applied = {name: value for name, value in presets.items() if name not in environ}
    environ.update(applied)
    return applied
