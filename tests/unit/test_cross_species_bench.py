"""benchmarks/cross_species.py: `subset` keeps the scored genes' scores and GTF lines; `print`
tabulates real site_calls reports (within the genome and transferred) without losing a number."""

from __future__ import annotations

import gzip
import json

import polars as pl
from threadpoolctl import threadpool_limits

from benchmarks import cross_species
from tests.site_fixtures import profile_genome, settings
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import predict_out_of_fold
from workflow_scripts.sites.report import site_report
from workflow_scripts.sites.rescorer import fit_rescorer, with_transfer


def test_subset_keeps_the_genes_the_tables_score(tmp_path):
    tables = []
    for index, genes in enumerate((["g1", "g2"], ["g3"])):
        frame = pl.DataFrame({"gene_id": genes, "position": list(range(len(genes)))})
        tables.append(tmp_path / f"{index}.parquet")
        frame.write_parquet(tables[-1])
    gtf = tmp_path / "all.gtf.gz"
    lines = [
        f'chr1\tsrc\texon\t1\t9\t.\t+\t.\tgene_id "{g}"; transcript_id "{g}.1";\n'
        for g in ("g1", "g2", "g3", "g4")
    ]
    with gzip.open(gtf, "wt") as handle:
        handle.write("#comment\n" + "".join(lines))
    cross_species.main(
        ["subset", "--out-dir", str(tmp_path / "out"), "--annotation", str(gtf), *map(str, tables)]
    )
    kept = (tmp_path / "out/annotation.gtf").read_text().splitlines()
    assert [line.split('"')[1] for line in kept] == ["g1", "g2", "g3"]
    assert pl.read_parquet(tmp_path / "out/scores.parquet").height == 3


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
