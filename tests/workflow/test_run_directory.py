"""The example-directory trap, in real dry runs: a run directory started with --configfile refuses
`snakemake -n` without it (which planned the demo there without a word), in one line."""

from __future__ import annotations

from tests.calls_fixtures import scores_workdir
from tests.workflow_helpers import snakemake


def test_a_run_directory_refuses_a_run_without_its_config_file(tmp_path):
    config = scores_workdir(tmp_path)
    first = snakemake(tmp_path, "-n", "--configfile", str(config))
    assert first.returncode == 0, first.stderr[-3000:]
    bare = snakemake(tmp_path, "-n")
    assert bare.returncode != 0
    errors = [
        line for line in (bare.stdout + bare.stderr).splitlines() if line.startswith("errorseq: error:")
    ]
    assert errors == [
        f"errorseq: error: config: --configfile: this directory's runs were given --configfile {config}; "
        "without it this run would plan the demo here. Give it again (or another config file), or delete "
        ".snakemake/errorseq/config_files.json to use the defaults"
    ]
    assert "demo_data" not in bare.stdout
    unlocked = snakemake(tmp_path, "--unlock")
    assert unlocked.returncode == 0, unlocked.stderr[-2000:]
