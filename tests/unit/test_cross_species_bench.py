"""benchmarks/cross_species.py: `subset` keeps the scored genes' scores and GTF lines; `print`
tabulates real site_calls reports (within the genome and transferred) without losing a number."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from benchmarks import cross_species
from tests.site_fixtures import profile_genome, settings
from tests.workflow_helpers import ROOT
from workflow_scripts.calling.contract import SCORE_COLUMNS
from workflow_scripts.errors import InputError
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import predict_out_of_fold
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import fit_rescorer, with_transfer


def scores_frame(genes: list[str]) -> pl.DataFrame:
    """A scores table as calling.scores reads it: two positions of each gene."""
    return pl.DataFrame(
        {
            "gene_id": [g for g in genes for _ in range(2)],
            "chrom": "chr1",
            "strand": "+",
            "position": list(range(1, 2 * len(genes) + 1)),
            "donor": 0.25,
            "acceptor": 0.5,
        }
    )


def gtf_lines(genes=("g1", "g2", "g3", "g4")) -> list[str]:
    return [f'chr1\tsrc\texon\t1\t9\t.\t+\t.\tgene_id "{g}"; transcript_id "{g}.1";\n' for g in genes]


def write_inputs(folder, suffixes=(".parquet", ".parquet")) -> tuple[list, object]:
    tables = []
    for index, (genes, suffix) in enumerate(zip((["g1", "g2"], ["g3"]), suffixes)):
        tables.append(folder / f"{index}{suffix}")
        frame = scores_frame(genes)
        frame.write_parquet(tables[-1]) if suffix == ".parquet" else frame.write_csv(
            tables[-1], separator="\t"
        )
    gtf = folder / "all.gtf.gz"
    with gzip.open(gtf, "wt") as handle:
        handle.write("#comment\n" + "".join(gtf_lines()))
    return tables, gtf


def subset_args(out_dir, gtf, tables) -> list[str]:
    return ["subset", "--out-dir", str(out_dir), "--annotation", str(gtf), *map(str, tables)]


def test_subset_keeps_the_genes_the_tables_score(tmp_path):
    tables, gtf = write_inputs(tmp_path)
    cross_species.main(subset_args(tmp_path / "out", gtf, tables))
    kept = (tmp_path / "out/annotation.gtf").read_text().splitlines()
    assert [line.split('"')[1] for line in kept] == ["g1", "g2", "g3"]
    assert pl.read_parquet(tmp_path / "out/scores.parquet").height == 6


def test_subset_reads_a_tsv_scores_table_as_calling_scores_does(tmp_path):
    """calling.scores accepts TSV; subset used to read every table as parquet (a traceback)."""
    tables, gtf = write_inputs(tmp_path, suffixes=(".tsv", ".parquet"))
    cross_species.main(subset_args(tmp_path / "out", gtf, tables))
    scores = pl.read_parquet(tmp_path / "out/scores.parquet")
    assert scores.columns == list(SCORE_COLUMNS) and scores["gene_id"].to_list() == [
        "g1",
        "g1",
        "g2",
        "g2",
        "g3",
        "g3",
    ]
    assert scores["position"].to_list() == [1, 2, 3, 4, 1, 2] and scores["donor"].to_list() == [0.25] * 6


def run_program(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.cross_species", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_an_out_dir_whose_output_is_the_input_gtf_is_refused_and_the_gtf_kept(tmp_path):
    """--annotation D/annotation.gtf with --out-dir D truncated the user's GTF to 0 lines, exit 0."""
    tables, _ = write_inputs(tmp_path)
    gtf = tmp_path / "annotation.gtf"
    gtf.write_text("".join(gtf_lines()))
    result = run_program(*subset_args(tmp_path, gtf, tables))
    assert result.returncode == 2 and result.stderr.splitlines() == [
        f"errorseq: error: {gtf}: --annotation: is also an output of this command ({gtf}); choose another --out-dir"
    ]
    assert gtf.read_text() == "".join(gtf_lines()) and not (tmp_path / "scores.parquet").exists()


def test_an_out_dir_whose_output_is_an_input_scores_table_is_refused(tmp_path):
    tables, gtf = write_inputs(tmp_path)
    scores = tmp_path / "scores.parquet"
    scores_frame(["g4"]).write_parquet(scores)
    with pytest.raises(InputError, match="scores table: is also an output of this command"):
        cross_species.main(subset_args(tmp_path, gtf, [*tables, scores]))
    assert pl.read_parquet(scores).equals(scores_frame(["g4"]))


@pytest.mark.parametrize(
    "args, expected",
    [
        (("print", "{tmp}/no_such_run"), "{tmp}/no_such_run: results/sites/site_metrics.json: not found"),
        (
            ("subset", "--out-dir", "{tmp}/o", "--annotation", "{tmp}/a.gtf", "{tmp}/none.tsv"),
            "{tmp}/none.tsv: scores table: file not found",
        ),
        (
            ("print", "{tmp}/edited"),
            "{tmp}/edited/results/sites/site_metrics.json: json: not a site_calls site_metrics.json (no 'counts')",
        ),
    ],
)
def test_the_command_line_says_what_is_wrong_in_one_line(tmp_path, args, expected):
    (tmp_path / "edited/results/sites").mkdir(parents=True)
    (tmp_path / "edited/results/sites/site_metrics.json").write_text('{"calls": {}}')
    result = run_program(*(arg.format(tmp=tmp_path) for arg in args))
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith(f"errorseq: error: {expected.format(tmp=tmp_path)}")


def test_a_bad_scores_row_is_named(tmp_path):
    tables, gtf = write_inputs(tmp_path, suffixes=(".tsv", ".parquet"))
    tables[0].write_text(tables[0].read_text().replace("\t0.25\t", "\t1.5\t", 1))
    with pytest.raises(InputError) as refused:
        cross_species.main(subset_args(tmp_path / "out", gtf, tables))
    assert refused.value.field == "column 'donor' row 1" and not (tmp_path / "out").exists()


def report_of(seed: int, rescorer=None) -> tuple[dict, object]:
    scores, sites, genes, clusters = profile_genome(seed=seed)
    found = assign_folds(find_candidates([("chr1", scores)], sites, genes, settings()), clusters, 5, seed=0)
    items = Items.from_candidates(found)
    predictions = predict_out_of_fold(found, items, settings())
    fitted = fit_rescorer(found, items, predictions, settings(), {"source": "chr1", "source_sites": 1})
    transfer = None
    if rescorer is not None:
        predictions, transfer = with_transfer(predictions, found, rescorer), {"file": "x", **rescorer.source}
    return site_report(found, items, predictions, settings(), 0, transfer), fitted


def test_print_shows_every_runs_f1_differences_and_diagnostics(tmp_path, capsys):
    with threadpool_limits(limits=1, user_api="openmp"):
        source, rescorer = report_of(seed=0)
        target, _ = report_of(seed=1, rescorer=rescorer)
    for name, report in (("source", source), ("target", target)):
        (tmp_path / name / "results/sites").mkdir(parents=True)
        (tmp_path / name / "results/sites/site_metrics.json").write_text(json.dumps(report))
    cross_species.main(["print", str(tmp_path / "source"), str(tmp_path / "target")])
    out = capsys.readouterr().out
    rows = {
        line.split(" | ")[0].strip("| "): line for line in out.splitlines() if line.startswith("| target")
    }
    assert len(rows) == 1
    f1_line = next(line for line in out.splitlines() if line.startswith("| target |"))
    assert f"{target['calls']['transfer_tree']['overall']['f1']:.3f}" in f1_line
    gain = target["differences"]["transfer_tree - transfer_base_tuned"]["overall"]["f1"]
    assert f"{gain['estimate']:+.3f} [{gain['low']:+.3f}, {gain['high']:+.3f}]" in out
    roc = target["diagnostics"]["fp_vs_tp"]["predictors"]["transfer_probability"]["roc_auc"]["estimate"]
    assert f"{roc:.3f} [" in out and target["answer"] in out
