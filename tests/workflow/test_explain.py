"""explain on the tiny demo run of the real workflow (tests/workflow/conftest.py: tiny_demo_run,
shared with test_workflow.py): it recovers the motif the demo plants near error sites
(workflow_scripts/data/demo.py: MOTIF within MOTIF_REACH nt of the site, in the site's strand
orientation). Attribution, k-mers and plots on their own: tests/unit/test_explain.py."""

from __future__ import annotations

import polars as pl

from workflow_scripts.artifacts import EXPLAIN_PLOTS, plot_file_name
from workflow_scripts.data.demo import MOTIF, MOTIF_REACH


def test_explain_recovers_the_demos_planted_motif(tiny_demo_run):
    workdir = tiny_demo_run.workdir
    attribution = pl.read_csv(workdir / "results/fp_vs_tp/explain/attribution.tsv", separator="\t")
    for splice_type in ("donor", "acceptor"):
        error = attribution.filter((pl.col("splice_type") == splice_type) & (pl.col("class") == "error"))
        top = error.sort("importance", descending=True)["position"].head(5).to_list()
        assert all(abs(position) <= MOTIF_REACH for position in top), (splice_type, top)
    kmers = pl.read_csv(workdir / "results/fp_vs_tp/explain/kmers.tsv", separator="\t")
    assert kmers["kmer"][0] in MOTIF and kmers["q_value"][0] < 1e-10
    for name in EXPLAIN_PLOTS:
        assert (workdir / f"results/fp_vs_tp/explain/{plot_file_name(name)}").stat().st_size > 5000
