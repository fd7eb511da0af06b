"""explain: attribution aligned on the splice site, k-mer enrichment, plots (workflow_scripts/inference/).

That explain recovers the demo's planted motif from the tiny demo run of the real workflow:
tests/workflow/test_explain.py.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from tests.evaluation_fixtures import make_windows, write_untrained_model
from workflow_scripts.artifacts import ATTRIBUTION_COLUMNS, EXPLAIN_PLOTS, KMER_COLUMNS, plot_file_name
from workflow_scripts.data.demo import MOTIF
from workflow_scripts.inference.attribution import mutant_means, mutants, nucleotide_scores
from workflow_scripts.inference.explain import aligned_means
from workflow_scripts.inference.kmers import kmer_enrichment
from workflow_scripts.rules.explain import main as explain_main


def planted(n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 2
    sequences = []
    for label in labels:
        bases = list(rng.choice(list("ACGT"), 120))
        if label and rng.random() < 0.9:
            start = int(rng.integers(0, 120 - len(MOTIF)))
            bases[start : start + len(MOTIF)] = MOTIF
        sequences.append("".join(bases))
    return sequences, labels


def test_kmer_enrichment_finds_the_planted_motif_with_corrected_p_values():
    sequences, labels = planted(300)
    table = kmer_enrichment([*sequences, "ACGTN" * 3], np.append(labels, 0), k=5)
    assert table.columns == list(KMER_COLUMNS)
    assert table["kmer"][0] in MOTIF and table["q_value"][0] < 1e-20
    assert not table["kmer"].str.contains("N").any()
    assert (table["q_value"] >= table["p_value"]).all()
    row = table.filter(pl.col("kmer") == table["kmer"][0]).row(0, named=True)
    holding = [table["kmer"][0] in s for s in sequences]
    assert row["error_windows"] == sum(h for h, label in zip(holding, labels) if label == 1)
    assert row["correct_windows"] == sum(h for h, label in zip(holding, labels) if label == 0)


def test_kmer_counts_are_windows_holding_it_not_occurrences():
    table = kmer_enrichment(["AAAAAA", "AAACCC", "CCCCCC"], np.array([1, 1, 0]), k=3)
    counts = {r["kmer"]: (r["error_windows"], r["correct_windows"]) for r in table.iter_rows(named=True)}
    assert counts == {"AAA": (2, 0), "AAC": (1, 0), "ACC": (1, 0), "CCC": (1, 1)}


def test_token_scores_map_to_the_nucleotides_they_cover():
    scores = np.array([9.0, 1.0, 2.0, 3.0])  # CLS, then three tokens
    np.testing.assert_array_equal(nucleotide_scores(scores, 3, 1, None), [1, 2, 3])
    # 3-mers over 5 nt: token j covers nucleotides j..j+2, each gets a third
    np.testing.assert_allclose(nucleotide_scores(scores, 5, 3, None), [1 / 3, 1, 2, 5 / 3, 1])
    # a 7-nt window cropped to its centre 3 nt (k=1): the two outer bases on each side get 0
    np.testing.assert_array_equal(nucleotide_scores(scores, 7, 1, 3), [0, 0, 1, 2, 3, 0, 0])


def test_mutagenesis_averages_each_positions_substitutions():
    assert mutants("AN") == ["CN", "GN", "TN", "AA", "AC", "AG", "AT"]
    np.testing.assert_allclose(mutant_means("AN", np.array([1, 2, 3, 4, 4, 4, 8.0])), [2, 5])


def test_windows_are_aligned_on_their_site():
    scores = [np.array([0, 0, 5.0, 0]), np.array([0, 0, 0, 0, 7.0, 1.0])]
    means = aligned_means(scores, ["ACGT", "AACCGT"], np.array([1, 3]))
    by_position = dict(zip(means["position"], means["importance"]))
    assert by_position[1] == pytest.approx(6.0)  # both windows: one base after the site
    assert by_position[2] == pytest.approx(0.5)  # the second window only reaches +2
    assert dict(zip(means["position"], means["n_windows"]))[-3] == 1
    row = means.filter(pl.col("position") == 1).row(0, named=True)
    assert (row["G"], row["A"], row["C"], row["T"]) == (pytest.approx(6.0), 0, 0, 0)  # G, G at +1
    assert row["importance_se"] == pytest.approx(np.std([5.0, 7.0], ddof=1) / np.sqrt(2))  # 5 and 7
    assert means.filter(pl.col("position") == -3)["importance_se"].to_list() == [0.0]  # one window


@pytest.mark.parametrize("method", ["gradient_x_input", "in_silico_mutagenesis"])
def test_the_entry_point_writes_the_declared_tables_and_plots(tmp_path, method, capsys):
    windows = make_windows(tmp_path / "windows.parquet", n=60, seed=1)
    model = write_untrained_model(tmp_path, 3001)
    out = tmp_path / "explain"
    explain_main(
        [
            "--windows",
            str(windows),
            "--model",
            str(model["model"]),
            "--model-config",
            str(model["model_config"]),
            "--experiment",
            "toy",
            "--out-attribution",
            str(out / "attribution.tsv"),
            "--out-kmers",
            str(out / "kmers.tsv"),
            "--out-dir",
            str(out),
            "--config",
            json.dumps({"explain": {"method": method, "max_windows": 1, "kmer_k": 4}}),
        ]
    )
    attribution = pl.read_csv(out / "attribution.tsv", separator="\t")
    assert attribution.columns == list(ATTRIBUTION_COLUMNS)
    assert (
        "warning: only 1 donor error windows (under 50); their mean attribution is noisy"
        in capsys.readouterr().err
    )
    assert set(attribution["splice_type"]) == {"donor", "acceptor"}
    assert set(attribution["class"]) == {"error", "correct"}
    assert pl.read_csv(out / "kmers.tsv", separator="\t").columns == list(KMER_COLUMNS)
    for name in EXPLAIN_PLOTS:
        assert (out / plot_file_name(name)).stat().st_size > 5000


def test_auto_method_uses_gradients_only_where_tokens_map_to_bases():
    from types import SimpleNamespace

    from workflow_scripts.inference.explain import resolved_method
    from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer

    assert resolved_method("auto", NucleotideTokenizer(1)) == "gradient_x_input"
    assert (
        resolved_method("auto", SimpleNamespace(needs_sequences=True)) == "in_silico_mutagenesis"
    )  # BPE, HF
    assert resolved_method("in_silico_mutagenesis", NucleotideTokenizer(3)) == "in_silico_mutagenesis"
