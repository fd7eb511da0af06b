"""Print what each job of the workflow would ask SLURM for, without submitting anything.

    python -m workflow_scripts.slurm_plan --profile profiles/slurm [--configfile my.yaml]

Runs `snakemake -n --forceall` with the profile, reads each job's threads and resources, and turns
them into sbatch options with snakemake-executor-plugin-slurm's own submit-string code.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

from workflow_scripts.errors import InputError, run_cli

REPO = Path(__file__).resolve().parents[1]
RESOURCE = re.compile(r"(\w+)=(.*?)(?=, \w+=|$)")
BANNER = re.compile(
    r"(Using (profile|workflow specific profile)|Config file .* is extended|Building DAG|"
    r"Assuming unrestricted shared filesystem)"
)
UNCAPPED_CORES = 1_000_000
HIDDEN_FLAGS = re.compile(r"--(job-name|output|comment) \S+ |--parsable |--export=ALL ")


class PlannedJob:
    """The parts of a Snakemake job that the plugin's get_submit_command reads."""

    def __init__(self, rule: str, wildcards: str, threads: int, resources: dict):
        self.name, self.wildcards, self.threads = rule, wildcards, threads
        self.resources = _Resources(resources)


class _Resources(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def parse_value(text: str):
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def parse_dry_run(text: str) -> list[PlannedJob]:
    """Jobs from the `rule NAME:` blocks of `snakemake -n` output."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        head = re.match(r"rule (\w+):", block)  # localrules run on the submit host
        if not head:
            continue
        fields = dict(re.findall(r"^\s+(\w+): (.*)$", block, re.MULTILINE))
        if "output" not in fields:  # a target rule such as `all`: nothing is submitted
            continue
        resources = {key: parse_value(value) for key, value in RESOURCE.findall(fields.get("resources", ""))}
        jobs.append(
            PlannedJob(head.group(1), fields.get("wildcards", ""), int(fields.get("threads", 1)), resources)
        )
    return jobs


def sbatch_options(job: PlannedJob) -> str:
    """The sbatch options the SLURM plugin would use for this job (partition/account as given)."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    res = job.resources
    params = {
        "run_uuid": "x",
        "slurm_logfile": "x",
        "comment_str": "x",
        "workdir": "",
        "account": f"-A {res['slurm_account']}" if res.get("slurm_account") else "",
        "partition": f"-p {res['slurm_partition']}" if res.get("slurm_partition") else "",
    }
    command = get_submit_command(job, params) + set_gres_string(job)
    return " ".join(HIDDEN_FLAGS.sub("", command + " ").split()[1:])


def dry_run(profile: str, configfiles: list[str], snakefile: Path, workdir: str) -> str:
    # A dry run caps threads at --cores (1 when not given); a SLURM submission does not.
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-n",
        "--forceall",
        "--snakefile",
        str(snakefile),
        "--directory",
        workdir,
        "--profile",
        profile,
        "--cores",
        str(UNCAPPED_CORES),
    ]
    if configfiles:
        command += ["--configfile", *configfiles]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(profile, "snakemake -n", first_error(done.stderr + done.stdout))
    return done.stdout + done.stderr


def first_error(output: str) -> str:
    """The lines that say what went wrong, without Snakemake's banners ("Using profile ...")."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and not BANNER.match(line)]
    errors = [line for line in lines if "error" in line.lower()]
    return " | ".join((errors or lines)[:3])[:2000] or "failed without a message"


def format_plan(jobs: list[PlannedJob]) -> str:
    lines, seen = [], set()
    for job in jobs:
        line = (
            f"{job.name:<14} {job.wildcards or '-':<28} threads={job.threads:<3} sbatch {sbatch_options(job)}"
        )
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--profile", default=str(REPO / "profiles" / "slurm"))
    parser.add_argument("--configfile", nargs="*", default=[])
    parser.add_argument("--snakefile", default=str(REPO / "Snakefile"))
    parser.add_argument("--directory", default=".")
    args = parser.parse_args(argv)
    text = dry_run(args.profile, args.configfile, Path(args.snakefile), args.directory)
    print(format_plan(parse_dry_run(text)))


if __name__ == "__main__":
    run_cli(main)
