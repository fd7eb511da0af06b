"""No input may lie inside the run's own outputs: `sites.transfer` naming site_calls' own
rescorer made Snakemake delete all six results/sites outputs before the job ran. The workflow
refuses such a config in one line while it is parsed, before Snakemake builds the DAG (so before
any of its output cleaning), and nothing under results/ is touched."""

from __future__ import annotations

from pathlib import Path

from tests.calls_fixtures import scores_workdir
from tests.workflow_helpers import snakemake, write_config

SITE_OUTPUTS = (
    "corrected_calls.parquet",
    "tree_calls.bed",
    "base_calls.bed",
    "site_metrics.json",
    "rescorer.pkl",
    "errorseq_calls.bed",
)


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("errorseq: error:")]


def earlier_site_outputs(workdir: Path) -> dict[Path, str]:
    """results/sites as an earlier run left it: each file with its own content."""
    (workdir / "results/sites").mkdir(parents=True)
    written = {}
    for name in SITE_OUTPUTS:
        path = workdir / "results/sites" / name
        path.write_text(f"an earlier run's {name}")
        written[path] = path.read_text()
    return written


def test_a_transfer_file_that_is_the_runs_own_rescorer_is_refused_and_nothing_is_deleted(tmp_path):
    calling = scores_workdir(tmp_path)
    transfer = write_config(tmp_path, "transfer.yaml", {"sites": {"transfer": "results/sites/rescorer.pkl"}})
    before = earlier_site_outputs(tmp_path)
    configs = ("--configfile", str(calling), str(transfer))
    expected = [
        "errorseq: error: results/sites/rescorer.pkl: sites.transfer: lies inside this run's own outputs "
        f"({tmp_path.resolve() / 'results'}), which the workflow writes and deletes before rerunning a job; "
        "copy it outside results/ and logs/ or run in another --directory"
    ]
    dry = snakemake(tmp_path, "-n", *configs)
    assert dry.returncode != 0 and error_lines(dry.stdout + dry.stderr) == expected, dry.stderr[-3000:]
    run = snakemake(tmp_path, "results/sites/site_metrics.json", *configs, cores=1)
    assert run.returncode != 0 and error_lines(run.stdout + run.stderr) == expected, run.stderr[-3000:]
    assert {path: path.read_text() for path in before} == before
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["sites"]


def test_a_missing_transfer_file_is_one_line_not_a_missing_input_exception(tmp_path):
    calling = scores_workdir(tmp_path)
    transfer = write_config(tmp_path, "transfer.yaml", {"sites": {"transfer": "source/rescorer.pkl"}})
    result = snakemake(tmp_path, "-n", "--configfile", str(calling), str(transfer))
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "MissingInputException" not in output, output[-3000:]
    assert error_lines(output) == [
        f"errorseq: error: source/rescorer.pkl: sites.transfer: not found (relative paths start at {tmp_path})"
    ]
