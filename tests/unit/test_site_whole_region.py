"""Whole-region site metrics (issue 49): on a scan of whole regions every call counts, a called
candidate with no annotated site within ±w is an FP wherever it lies (in a gene, antisense,
intergenic), beside the in-gene figures that count only what lies in genes; the recommendation
goes by the whole region, so it is never worse than the base model's own calls there."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from threadpoolctl import threadpool_limits

from tests.site_fixtures import BACKGROUND, CHROM, profile_genome, scores_of, settings
from workflow_scripts.calling.scores import decode
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import BASE_THRESHOLD, predict_out_of_fold
from workflow_scripts.sites.recommend import recommend
from workflow_scripts.sites.report import site_report

N_GENES = 40  # profile_genome: gene i on 1000i+1..1000i+500, strands alternating


@pytest.fixture(autouse=True, scope="module")
def one_openmp_thread():
    with threadpool_limits(limits=1, user_api="openmp"):
        yield


def scan_rows(scores) -> pl.DataFrame:
    """profile_genome's scores plus every other position of 1..40,000 on both strands, with a
    donor peak of 0.9 (no annotated site) intergenic at 1000i+750 on + for every gene, and
    antisense, on the other strand at 1000i+250, for every even gene."""
    genes = decode(scores.keys, scores.groups).with_columns(
        pl.Series("donor", scores.donor.astype(float)), pl.Series("acceptor", scores.acceptor.astype(float))
    )
    everything = pl.DataFrame(
        {
            "chrom": CHROM,
            "strand": np.repeat(["+", "-"], 40_000),
            "position": np.tile(np.arange(1, 40_001), 2),
            "donor": np.full(80_000, BACKGROUND),
            "acceptor": np.full(80_000, BACKGROUND),
        }
    )
    rest = everything.join(genes, on=["chrom", "strand", "position"], how="anti")
    peaks = {("+", 1000 * i + 750) for i in range(N_GENES)}
    peaks |= {("-+"[i % 2], 1000 * i + 250) for i in range(0, N_GENES, 2)}
    donor = [
        0.9 if (strand, position) in peaks else value
        for strand, position, value in rest.select("strand", "position", "donor").iter_rows()
    ]
    return pl.concat([genes, rest.with_columns(pl.Series("donor", donor))]).sort("strand", "position")


def report_of(scores, sites, genes, clusters, scored_regions: bool) -> dict:
    found = assign_folds(find_candidates([(CHROM, scores)], sites, genes, settings()), clusters, 5, 0, genes)
    items = Items.from_candidates(found)
    predictions = predict_out_of_fold(found, items, settings())
    return site_report(found, items, predictions, settings(), 0, scored_regions=scored_regions)


@pytest.fixture(scope="module")
def reports() -> tuple[dict, dict]:
    scores, sites, genes, clusters = profile_genome()
    on_genes = report_of(scores, sites, genes, clusters, scored_regions=False)
    scan = report_of(scores_of(scan_rows(scores)), sites, genes, clusters, scored_regions=True)
    return on_genes, scan


def test_every_call_in_the_scan_counts_and_its_fp_are_told_by_location(reports):
    """Fails on the old code: it had no whole-region figures (and counted intergenic calls among
    the in-gene ones)."""
    on_genes, scan = reports
    base_in_genes = scan["calls"][BASE_THRESHOLD]["overall"]
    assert base_in_genes == on_genes["calls"][BASE_THRESHOLD]["overall"]  # the in-gene figures stay
    whole = scan["whole_region"]
    assert whole["scored"] == "regions" and on_genes["whole_region"]["scored"] == "gene spans"
    by_location = whole["false_positives_by_location"][BASE_THRESHOLD]
    assert by_location["intergenic"] == N_GENES and by_location["antisense"] == N_GENES // 2
    assert by_location["gene"] == base_in_genes["fp"]
    base_whole = whole["calls"][BASE_THRESHOLD]["overall"]
    assert base_whole["fp"] == base_in_genes["fp"] + N_GENES + N_GENES // 2
    assert base_whole["tp"] == base_in_genes["tp"] and base_whole["f1"] < base_in_genes["f1"]
    assert scan["counts"]["candidates_by_location"]["intergenic"] >= N_GENES
    assert scan["counts"]["genes"] == N_GENES  # no "(no gene)" among them
    assert on_genes["whole_region"]["calls"][BASE_THRESHOLD] == on_genes["calls"][BASE_THRESHOLD]
    # the genes' spans alone: the same items, the same gene-cluster intervals
    assert on_genes["whole_region"]["bootstrap"]["resampled_unit"] == "gene_cluster"
    pair = "tree - base_tuned"
    assert on_genes["whole_region"]["differences"][pair] == on_genes["differences"][pair]


def test_whole_region_intervals_resample_genomic_blocks(reports):
    """The scan lies in one 100-kb block: no block-bootstrap interval, said so, and the in-gene
    gene-cluster intervals are still there."""
    _, scan = reports
    whole = scan["whole_region"]
    assert (
        whole["bootstrap"]["blocks"] == 1 and whole["bootstrap"]["resampled_unit"] == "100-kb genomic block"
    )
    gain = whole["differences"]["tree - base_tuned"]["overall"]["f1"]
    assert gain["low"] is None and "genomic block" in gain["reason"] and gain["estimate"] is not None
    assert scan["differences"]["tree - base_tuned"]["overall"]["f1"]["low"] is not None
    assert scan["bootstrap"]["resampled_unit"] == "gene_cluster"


def test_candidates_outside_genes_have_their_block_as_out_of_fold_unit():
    scores, sites, genes, clusters = profile_genome()
    found = assign_folds(
        find_candidates([(CHROM, scores_of(scan_rows(scores)))], sites, genes, settings()),
        clusters,
        5,
        0,
        genes,
    )
    outside = found.table.filter(pl.col("location") != "gene")
    assert outside.height > 0 and outside["gene_cluster"].str.starts_with("(block) chr1:").all()
    inside = found.table.filter(pl.col("location") == "gene")
    assert not inside["gene_cluster"].str.starts_with("(block)").any()


def random_report(rng: np.random.Generator) -> dict:
    """A report whose predictors' F1 on genes and over the whole region are drawn at random,
    each difference's interval around its point estimate."""
    names = ("base_threshold", "base_tuned", "tree", "errorseq")

    def scope() -> tuple[dict, dict]:
        f1 = {name: float(rng.uniform(0.8, 0.95)) for name in names}
        calls = {name: {"overall": {"f1": value}} for name, value in f1.items()}
        differences = {}
        for first, second in (
            ("tree", "base_tuned"),
            ("errorseq", "base_tuned"),
            ("base_tuned", "base_threshold"),
        ):
            estimate = f1[first] - f1[second]
            low, high = estimate - rng.uniform(0, 0.02), estimate + rng.uniform(0, 0.02)
            verdict = "better" if low > 0 else "worse" if high < 0 else "not better"
            differences[f"{first} - {second}"] = {
                "overall": {"f1": {"estimate": estimate, "low": low, "high": high, "verdict": verdict}}
            }
        return calls, differences

    calls, differences = scope()
    whole_calls, whole_differences = scope()
    return {
        "calls": calls,
        "differences": differences,
        "whole_region": {"scored": "regions", "calls": whole_calls, "differences": whole_differences},
    }


def test_the_recommended_calls_are_never_worse_than_the_base_over_the_whole_region():
    """Fails on the old code: it recommended by the in-gene figures, so a tree better on genes and
    worse over the whole region was picked."""
    rng = np.random.default_rng(0)
    for _ in range(500):
        report = random_report(rng)
        chosen = recommend(report)["predictor"]
        whole = report["whole_region"]["calls"]
        assert whole[chosen]["overall"]["f1"] >= whole[BASE_THRESHOLD]["overall"]["f1"], report


def test_the_console_and_the_report_show_both_figures(reports):
    from workflow_scripts.sites.summary import console_lines, summary_html

    _, scan = reports
    lines = console_lines(scan, "site_metrics.json")
    header = next(line for line in lines if line.startswith("predictor") and "F1 whole region" in line)
    base = next(line for line in lines[lines.index(header) :] if line.startswith("base_threshold"))
    whole = scan["whole_region"]["calls"]["base_threshold"]["overall"]
    assert f"{whole['f1']:.3f}" in base and base.split()[-1] == str(N_GENES)  # FP intergenic
    assert any(line.startswith("whole region (every call in the scored regions counts)") for line in lines)
    assert "FP antisense" in summary_html(scan)


def test_a_cards_whole_region_numbers_come_from_the_scan(reports):
    """benchmarks/rescorer_cards: measured.json carries the whole-region figures of a scan."""
    from benchmarks.rescorer_cards import whole_region_numbers

    _, scan = reports
    numbers = whole_region_numbers(scan["whole_region"])
    base = next(row for row in numbers["calls"] if row["predictor"] == BASE_THRESHOLD)
    assert base["fp"]["intergenic"] == N_GENES and base["calls"] > N_GENES
    pairs = [row["pair"] for row in numbers["differences"]]
    assert "tree - base_threshold" in pairs and "tree - base_tuned" in pairs
    assert numbers["intervals"] == "0 replicates over 1 100-kb genomic blocks"
