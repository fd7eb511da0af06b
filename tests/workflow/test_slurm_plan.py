"""`python -m workflow_scripts.slurm_plan` through Snakemake's dry run of profiles/slurm:
training jobs get the profile's threads and GPUs, and a Snakemake error shows without the
profile banner. Parsing the plan and the sbatch options: tests/unit/test_slurm_plan.py."""

import subprocess
import sys
from pathlib import Path

import yaml

from tests.train_fixtures import ROOT
from tests.workflow_helpers import HANG_GUARD_S


# ---- the real plan of the repository's SLURM profile (snakemake -n with the profile) ----------
def slurm_plan(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "workflow_scripts.slurm_plan",
            "--profile",
            str(ROOT / "profiles/slurm"),
            "--directory",
            str(cwd),
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def planned(stdout: str, rule: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(rule + " ")]


def test_training_jobs_get_the_profiles_threads_and_gpus_not_the_local_core_count(tmp_path):
    (tmp_path / "pretrain.yaml").write_text("pretrain: {enabled: true}\n")
    result = slurm_plan("--configfile", str(tmp_path / "pretrain.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    for rule in ("train", "pretrain"):
        lines = planned(result.stdout, rule)
        assert lines, result.stdout
        threads = profile["set-threads"][rule]
        assert all(
            f"threads={threads} " in line and "-p gpu" in line and "--gpus=" in line for line in lines
        ), lines


def test_rescore_sites_asks_for_memory_that_grows_with_the_regions(tmp_path):
    """calling.start regions: the plan's --mem of rescore_sites follows the BED's nt (both strands,
    workflow/resources.py), not the profile's flat default."""
    from tests.spliceai_fixtures import openspliceai_models
    from workflow_scripts.workflow.resources import ScoredNt, rescore_mem_mb

    config = yaml.safe_load((ROOT / "config/new_genome.yaml").read_text())
    config["calling"]["base_model"]["weights"] = str(openspliceai_models("arabidopsis"))
    asked = {}
    for name, megabases in (("small", 0.3), ("large", 12.0)):
        bed = tmp_path / f"{name}.bed"
        bed.write_text(f"LR999452.1\t0\t{int(megabases * 1e6)}\n")
        config["calling"]["regions"] = str(bed)
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config))
        result = slurm_plan("--configfile", str(path), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        (line,) = planned(result.stdout, "rescore_sites")
        asked[name] = int(line.split("--mem ")[1].split()[0])
        nt = int(2 * megabases * 1e6)
        assert asked[name] == rescore_mem_mb(ScoredNt(nt, nt))
    assert asked["small"] < asked["large"]


def test_a_snakemake_error_is_shown_without_the_profile_banner(tmp_path):
    result = slurm_plan("--configfile", "missing.yaml", cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "missing.yaml" in line and "Using profile" not in line
