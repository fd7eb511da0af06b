"""workflow/rule_params.py and report_labels.py: the params functions and report labels the
rules share."""

from __future__ import annotations

import re
import shlex
from types import SimpleNamespace

from workflow_scripts.workflow.report_labels import FIGURE_ORDER, figure_label, site_file_label, summary_label
from workflow_scripts.workflow.rule_params import genome_args, input_paths, path_args, runs_pattern


class Named(dict):
    """What path_args and genome_args read of Snakemake's input and output Namedlists."""

    def __getattr__(self, name):
        return self[name]


def test_path_args_are_the_declared_inputs_and_outputs_quoted():
    """bucket declares windows and tokenizer (optional: off here) and its two outputs."""
    args = path_args("bucket")
    inputs = Named(windows="results/a b/windows.parquet", tokenizer=[])
    outputs = Named(manifest="results/x/manifest.parquet", summary="results/x/summary.json")
    words = shlex.split(args(None, inputs, outputs))
    assert words == [
        "--windows",
        "results/a b/windows.parquet",
        "--out-manifest",
        "results/x/manifest.parquet",
        "--out-summary",
        "results/x/summary.json",
    ]
    plots = Named(plots=["results/x/plots/roc.png"])
    assert path_args("plot")(None, Named(), plots) == ""  # the plots go by --out-dir


def test_genome_args_name_the_index_folder_or_the_fasta():
    assert genome_args(None, Named(index="results/genome/index.tsv")) == "--genome results/genome"
    assert genome_args(None, Named(genome="my genome.fa")) == "--genome 'my genome.fa'"
    assert genome_args(None, Named(sequences="s.tsv")) == ""


def test_runs_pattern_matches_exactly_the_runs():
    pattern = re.compile(runs_pattern(["a.b", "c"]))
    assert pattern.fullmatch("a.b") and pattern.fullmatch("c") and not pattern.fullmatch("axb")
    assert not re.compile(runs_pattern([])).fullmatch("")


def test_input_paths_reads_paths_lists_dicts_and_functions():
    wildcards = SimpleNamespace(experiment="e")
    item = {"a": "x", "b": ["y", "z"], "c": lambda w: f"results/{w.experiment}"}
    assert input_paths(lambda w: item, wildcards) == ["x", "y", "z", "results/e"]


def test_report_labels_number_files_in_reading_order():
    assert figure_label("model_vs_baselines") == {"figure": "1. model vs baselines"}
    assert figure_label(FIGURE_ORDER[-1])["figure"].startswith(f"{len(FIGURE_ORDER)}. explain: ")
    assert summary_label("summary.html") == {"file": "1. summary.html"}
    assert site_file_label("site_metrics.json") == {"file": "2. site metrics.json"}
