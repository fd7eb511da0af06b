import json
import os
import shlex
import sys

from snakemake.settings.types import DeploymentMethod

# The package is installed (make setup: pip install -e .); rules import nothing else.
from workflow_scripts import layout
from workflow_scripts.artifacts import EXPLAIN_PLOTS, PLOTS
from workflow_scripts.config.package_paths import resolve_package_paths
from workflow_scripts.config.run_directory import check_run_directory
from workflow_scripts.config.runs import runs_of_config, site_runs
from workflow_scripts.config.sections import schema
from workflow_scripts.config.validate import check_config_file, validate_config
from workflow_scripts.errors import InputError
from workflow_scripts.workflow import rule_params
from workflow_scripts.workflow.interrupt import quiet_interrupt
from workflow_scripts.workflow.job_environment import shell_exports
from workflow_scripts.workflow.preflight import check_input_files, local_gpu_resource
from workflow_scripts.workflow.report_labels import (
    figure_label,
    site_file_label,
    summary_label,
)
from workflow_scripts.workflow.rule_files import (
    RuleFiles,
    explain_plot_paths,
    plot_paths,
)
from workflow_scripts.workflow.rule_params import (
    genome_args,
    output_dir,
    path_args,
    rule_code,
    runs_pattern,
    user_input_digests,
)

try:
    for configfile_path in workflow.configfiles:
        check_config_file(configfile_path)
    # a run directory started with --configfile refuses a run without it (it would plan the demo)
    check_run_directory(
        workflow.configfiles, f"{workflow.basedir}/config/config.yaml", sys.argv
    )
    checked = resolve_package_paths(validate_config(config, schema()))
    check_input_files(checked)  # unusable input files fail before any job runs
    runs = runs_of_config(checked)
    site_model_runs = site_runs(checked, runs)
except InputError as error:
    sys.exit(f"errorseq: error: {error}")
# The validated config, defaults filled in, is the one the rules read: as Snakemake's own
# validate(config, schema, set_default=True) fills `config` in place. errorseq's validator (its
# one-line errors, strings from --config coerced, pkg: paths resolved) returns it as a copy.
config.clear()
config.update(checked)

# Run name -> config.runs.Run: each experiment x fold (split.folds) x seed (train.repeats).
EXPERIMENTS = runs
# sites.model's runs (site_candidates_fold<i>): windows from site_windows, then bucket, train and
# evaluate as any run; not experiments (no plots, explain or summary). docs/sites.md.
SITE_RUNS = site_model_runs
ALL_RUNS = {**EXPERIMENTS, **SITE_RUNS}
# the files the rules read and the targets, as the config says (workflow/rule_files.py)
files = RuleFiles(config, tuple(EXPERIMENTS), tuple(SITE_RUNS))
# Every job's shell line exports the cluster section (the launcher's NCCL presets), the one
# environment channel: no param, so changing it reruns nothing (workflow/
# job_environment.py). SLURM jobs parse the workflow again and build the same prefix.
JOB_EXPORTS = shell_exports(config, workflow.configfiles)
# Ctrl-C: one line, not every interrupted job's shell line and log (workflow/interrupt.py)
if workflow.is_main_process:
    quiet_interrupt()


wildcard_constraints:
    experiment=runs_pattern(ALL_RUNS),


if DeploymentMethod.CONDA in workflow.deployment_settings.deployment_method:
    # envs/*.yaml hold the third-party packages; errorseq itself is this checkout.
    shell.prefix(
        f"set -euo pipefail; {JOB_EXPORTS}export PYTHONPATH={shlex.quote(workflow.basedir)}; "
    )
else:
    # Jobs run `python` from the interpreter that runs Snakemake (e.g. .venv/bin/snakemake
    # without an activated venv), not whichever python comes first on the user's PATH.
    interpreter_bin = shlex.quote(os.path.dirname(sys.executable))
    shell.prefix(
        f'set -euo pipefail; {JOB_EXPORTS}export PATH={interpreter_bin}:"$PATH"; '
    )


def plot_report_output(name, path):
    """One plot flagged for the report, with its caption report/plots/<name>.rst."""
    flagged = report(
        path,
        caption=f"../report/plots/{name}.rst",
        category="{experiment}",
        labels=figure_label(name),
    )
    return flagged


def plot_report_outputs():
    """plot_paths() flagged for the report (the plot rule's output)."""
    return [plot_report_output(n, path) for n, path in zip(PLOTS, plot_paths())]


def explain_report_outputs():
    """explain_plot_paths() flagged for the report, captions report/explain/<name>.rst."""
    pairs = zip(EXPLAIN_PLOTS, explain_plot_paths())
    return [explain_report_output(name, path) for name, path in pairs]


def explain_report_output(name, path):
    flagged = report(
        path,
        caption=f"../report/explain/{name}.rst",
        category="{experiment}",
        labels=figure_label(f"explain: {name}"),
    )
    return flagged


def all_outputs():
    # no annotation: no calls to train on, only the corrected calls
    if files.calling_start() == "regions":
        return rescore_outputs() + files.score_shard_outputs()
    outputs = files.experiment_outputs() + site_outputs()
    return (
        outputs
        + files.score_shard_outputs()
        + files.base_data_outputs()
        + files.train_base_outputs()
        + files.evaluate_base_outputs()
    )


def stage_config(rule):
    """`rule`'s `--config` param: the config sections and keys its declaration reads
    (config/stages/), as its run sees them for a stage of one run (its train.seed, its
    `experiments:` entry as the section `experiment`)."""
    return rule_params.stage_config(config, ALL_RUNS, rule)


def site_outputs():
    """Every output of the site_calls rule where the pipeline makes the calls (calling.start
    scores or annotation): site-level re-scored calls, docs/sites.md. All of them, declared
    whatever the config: an output set that changes (with sites.model, or with an errorseq
    update) leaves a new file without metadata, and Snakemake then skips the params check of a
    target that exists ("Nothing to be done")."""
    if not files.makes_site_calls():
        return []
    return [*rules.site_calls.output, *rules.site_summary.output]


def site_report_output(name):
    """results/sites/<name> flagged for the report's "Site calls" category, captioned by
    report/sites/<name>.rst, in SITE_REPORT_ORDER."""
    return report(
        f"{layout.SITES_DIR}/{name}",
        caption=f"../report/sites/{name.replace('.', '_')}.rst",
        category="Site calls",
        labels=site_file_label(name),
    )


def rescore_report_output(name):
    """results/rescored/<name> flagged for the report's "Corrected calls" category, captioned by
    report/rescored/<name>.rst (calling.start regions)."""
    return report(
        f"{layout.RESCORED_DIR}/{name}",
        caption=f"../report/rescored/{name.replace('.', '_')}.rst",
        category="Corrected calls",
    )


def rescore_outputs():
    """The targets of `all` with calling.start regions, the corrected calls and their report."""
    return list(rules.rescore_sites.output)
