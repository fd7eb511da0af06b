"""The real DAG that `snakemake -n` plans with folds and repeats, and a chromosome split without
its lists stopping before any job. Run names and what each run's rules get:
tests/unit/test_runs.py."""

import re

from tests.workflow_helpers import planned_rules, snakemake, write_config


# ---- the real DAG ------------------------------------------------------------------------------------
def planned_jobs(dry_run_output: str, rule: str) -> dict[str, int]:
    """The job-stats table of `snakemake -n`: jobs planned per rule."""
    counts = re.findall(rf"^{rule}\s+(\d+)$", dry_run_output, flags=re.MULTILINE)
    return int(counts[0]) if counts else 0


def train_wildcards(dry_run_output: str) -> list[str]:
    blocks = dry_run_output.split("rule train:")[1:]
    return sorted(re.search(r"wildcards: experiment=(\S+)", block).group(1) for block in blocks)


def test_dry_run_with_three_folds_plans_three_train_jobs_per_experiment(tmp_path):
    config = write_config(tmp_path, "folds.yaml", {"split": {"folds": 3}, "train": {"repeats": 2}})
    result = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert result.returncode == 0, result.stderr[-3000:]
    assert planned_jobs(result.stdout, "train") == 2 * 3 * 2 and planned_jobs(result.stdout, "summarize") == 1
    assert train_wildcards(result.stdout) == sorted(
        f"{experiment}_fold{fold}_seed{seed}"
        for experiment in ("fp_vs_tp", "fn_vs_tn")
        for fold in (1, 2, 3)
        for seed in (1, 2)
    )
    plain_run = tmp_path / "plain"  # a directory of its own: this one remembers folds.yaml
    plain_run.mkdir()
    plain = snakemake(plain_run, "-n", "--config", "split={folds: 3}")
    assert planned_jobs(plain.stdout, "train") == 6
    assert train_wildcards(plain.stdout) == sorted(
        f"{e}_fold{i}" for e in ("fp_vs_tp", "fn_vs_tn") for i in (1, 2, 3)
    )
    assert planned_rules(plain.stdout) >= {"extract", "bucket", "train", "evaluate", "summarize"}


def test_a_chromosome_split_without_its_lists_fails_before_any_job(tmp_path):
    result = snakemake(tmp_path, "-n", "--config", "split={by: chromosome, test_chromosomes: [chr1]}")
    assert result.returncode != 0
    assert (
        "errorseq: error: config: split.val_chromosomes: split.by: chromosome needs at least one chromosome here"
        in result.stderr
    )
    assert not (tmp_path / "results").exists()
