"""The value every job of a run receives on its shell line without being a param of its rule.

rules/common.smk puts `shell_exports(config, config_files)` into Snakemake's shell prefix, the text
Snakemake puts before each job's formatted command when it runs it:

    ERRORSEQ_CLUSTER_ENV  the config's cluster: section as JSON; the training launcher exports the
                          NCCL presets from it and the ranks read their collective timeout
                          (training/cluster_env.py)

It is the one environment channel: every other value a job reads is on its command line, as its
declaration says (config/stage.py), and provenance travels with the data (evaluation/records.py).

Why the prefix: Snakemake's params trigger compares a rule's params and its code trigger the
rule's shell template (persistence `_code`: `rule.shellcmd`, the text before formatting); the
prefix is neither, so changing an NCCL setting retrains nothing and a config change that leaves a
rule's results as they are reruns nothing. A job still runs with the values of the config it is
started with, also on SLURM, where each job parses the workflow again and builds the same prefix.
Nothing is written to the environment of the process that parses the workflow.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence

from workflow_scripts.training.cluster_env import CLUSTER_ENV_VARIABLE


def job_variables(config: Mapping, config_files: Sequence[str]) -> dict[str, str]:
    """The variables every job gets, from the validated config."""
    return {
        CLUSTER_ENV_VARIABLE: json.dumps(config["cluster"], sort_keys=True),
    }


def export_commands(variables: Mapping[str, str]) -> str:
    """`export NAME=value; ` for each variable, the values quoted for the shell."""
    return "".join(f"export {name}={shlex.quote(value)}; " for name, value in variables.items())


def shell_exports(config: Mapping, config_files: Sequence[str]) -> str:
    """export_commands of job_variables, its braces doubled: Snakemake formats the text given to
    `shell.prefix` as a template (a single brace would name a variable)."""
    exports = export_commands(job_variables(config, config_files))
    return exports.replace("{", "{{").replace("}", "}}")
