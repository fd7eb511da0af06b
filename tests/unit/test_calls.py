"""Calls from scores + annotated sites: counts against a brute-force count, the consensus window
at its edges, decoy and random TN, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.calls_fixtures import background_scores, plant_site_scores
from workflow_scripts.calling import scores as scores_module
from workflow_scripts.calling.calls import CallSettings, make_calls
from workflow_scripts.calling.negatives import ks_distance
from workflow_scripts.calling.score_checks import gene_positions
from workflow_scripts.calling.scores import read_scores
from workflow_scripts.command_line import path_flags
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import make_calls as make_calls_rule

BASES = np.frombuffer(b"ACGT", dtype=np.uint8)


class Toy:
    """A random genome with genes on both strands, annotated sites and a scores table."""

    def __init__(self, rng, lengths=(3000, 2000), genes=None, n_sites=12):
        self.genome = Genome(
            [f"c{i + 1}" for i in range(len(lengths))],
            np.array(lengths),
            rng.choice(BASES, int(sum(lengths))),
        )
        self.genes = pl.DataFrame(
            genes
            or [
                ("gA", "c1", 101, 2500, "+"),
                ("gB", "c1", 1801, 2900, "+"),
                ("gC", "c1", 201, 2800, "-"),
                ("gD", "c2", 11, 1900, "-"),
            ],
            schema=["gene_id", "chrom", "start", "end", "strand"],
            orient="row",
        )
        self.genes = self.genes.with_columns(pl.lit("protein_coding").alias("biotype"))
        self.sites = self.random_sites(rng, n_sites)
        self.scores = self.random_scores(rng)

    def random_sites(self, rng, n_sites) -> pl.DataFrame:
        rows = []
        for gene in self.genes.iter_rows(named=True):
            for position in rng.choice(np.arange(gene["start"] + 5, gene["end"] - 5), n_sites, replace=False):
                rows.append(
                    (
                        gene["gene_id"],
                        f"t{gene['gene_id']}",
                        gene["chrom"],
                        int(position),
                        gene["strand"],
                        str(rng.choice(["donor", "acceptor"])),
                    )
                )
        frame = pl.DataFrame(
            rows,
            schema=["gene_id", "transcript_id", "chrom", "position", "strand", "splice_type"],
            orient="row",
        )
        return frame.unique(["chrom", "position", "strand", "splice_type"], keep="first").sort(
            "chrom", "position"
        )

    def random_scores(self, rng) -> pl.DataFrame:
        scores = background_scores(self.genes, rng, power=6)
        # overlapping genes gA/gB score the same positions: the table must agree with itself
        first = scores.group_by("chrom", "strand", "position").agg(pl.col("donor", "acceptor").first())
        scores = scores.drop("donor", "acceptor").join(first, on=["chrom", "strand", "position"])
        near_sites = self.sites.select(
            "chrom", "strand", "position", pl.lit(0.9).alias("planted"), "splice_type"
        )
        for splice_type in ("donor", "acceptor"):
            planted = near_sites.filter(pl.col("splice_type") == splice_type).with_columns(
                pl.col("position")
                + pl.Series(
                    rng.integers(-3, 4, near_sites.filter(pl.col("splice_type") == splice_type).height)
                )
            )
            scores = (
                scores.join(planted.drop("splice_type"), on=["chrom", "strand", "position"], how="left")
                .with_columns(
                    pl.max_horizontal(splice_type, pl.col("planted").fill_null(0)).alias(splice_type)
                )
                .drop("planted")
                .unique(["gene_id", "chrom", "strand", "position"])
            )
        return scores.with_columns(pl.col("donor", "acceptor").cast(pl.Float32))

    def call(self, tmp_path: Path, **settings):
        path = tmp_path / "scores.parquet"
        self.scores.write_parquet(path)
        scores, _ = read_scores(path, self.genes, self.genome.chrom_lengths())
        values = {
            "threshold": 0.5,
            "consensus_window": 2,
            "negatives": "decoy",
            "per_error": 1.0,
            "seed": 0,
            **settings,
        }
        return make_calls(scores, self.sites, self.genes, self.genome, CallSettings(**values))


def brute_force_counts(toy: Toy, threshold: float, window: int) -> dict:
    """TP/FP/FN per splice type, by looking at every position one at a time."""
    scored = {}
    for row in toy.scores.iter_rows(named=True):
        scored[(row["chrom"], row["strand"], row["position"])] = row
    counts = {}
    for splice_type in ("donor", "acceptor"):
        sites = {
            (r["chrom"], r["strand"], r["position"])
            for r in toy.sites.iter_rows(named=True)
            if r["splice_type"] == splice_type
        }
        predicted = {key for key, row in scored.items() if row[splice_type] >= threshold}

        def within(key, targets):
            return any((key[0], key[1], key[2] + d) in targets for d in range(-window, window + 1))

        called = [site for site in sites if site in scored]
        counts[splice_type] = {
            "TP": sum(within(s, predicted) for s in called),
            "FN": sum(not within(s, predicted) for s in called),
            "FP": sum(not within(p, sites) for p in predicted),
        }
    return counts


def check_negatives(toy: Toy, calls: pl.DataFrame, threshold: float, window: int) -> None:
    """Every TN: scored, below the threshold, no annotated or predicted site of either type within ±w."""
    scored = {(r["chrom"], r["strand"], r["position"]): r for r in toy.scores.iter_rows(named=True)}
    busy = {(r["chrom"], r["strand"], r["position"]) for r in toy.sites.iter_rows(named=True)}
    busy |= {key for key, row in scored.items() if max(row["donor"], row["acceptor"]) >= threshold}
    negatives = calls.filter(pl.col("pred_type") == "TN")
    assert negatives.height == calls.filter(pl.col("pred_type") == "FN").height  # per_error 1
    assert negatives.select("chrom", "strand", "position").is_unique().all()
    for row in negatives.iter_rows(named=True):
        key = (row["chrom"], row["strand"], row["position"])
        assert key in scored and scored[key][row["splice_type"]] < threshold
        assert not any((key[0], key[1], key[2] + d) in busy for d in range(-window, window + 1)), row


def counts_of(calls: pl.DataFrame) -> dict:
    found = {t: {"TP": 0, "FN": 0, "FP": 0} for t in ("donor", "acceptor")}
    for row in (
        calls.filter(pl.col("pred_type") != "TN").group_by("splice_type", "pred_type").len().iter_rows()
    ):
        found[row[0]][row[1]] = row[2]
    return found


@pytest.mark.parametrize("threshold,window", [(0.5, 2), (0.2, 0), (0.85, 3), (0.05, 1)])
def test_calls_equal_a_brute_force_count(tmp_path, threshold, window):
    toy = Toy(np.random.default_rng(int(threshold * 100) + window))
    calls, summary = toy.call(tmp_path, threshold=threshold, consensus_window=window)
    assert counts_of(calls) == brute_force_counts(toy, threshold, window)
    assert summary["counts"]["donor"]["TP"] == counts_of(calls)["donor"]["TP"]
    check_negatives(toy, calls, threshold, window)


def test_every_call_keeps_its_score_gene_and_span(tmp_path):
    toy = Toy(np.random.default_rng(3))
    calls, _ = toy.call(tmp_path)
    scores = toy.scores.unique(["chrom", "strand", "position"])
    for splice_type in ("donor", "acceptor"):
        typed = calls.filter(pl.col("splice_type") == splice_type)
        joined = typed.join(scores, on=["chrom", "strand", "position"], how="left")
        assert joined[splice_type].is_not_null().all()
        assert (joined["score"] == joined[splice_type]).all()
    spans = calls.join(toy.genes, on="gene_id")
    assert spans.height == calls.height
    assert (spans["gene_start"] == spans["start"]).all() and (spans["gene_end"] == spans["end"]).all()
    assert (
        (spans["position"] >= spans["start"])
        & (spans["position"] <= spans["end"])
        & (spans["strand"] == spans["strand_right"])
    ).all()
    tn = calls.filter(pl.col("pred_type") == "TN")
    assert tn.height > 0 and (tn["tn_strategy"] == "decoy").all() and (tn["window_score"] < 0.5).all()


def one_site(window: int, offset: int):
    """One + strand gene c1:101-400, a donor at 200, and one predicted donor at 200 + offset."""
    genome = Genome(["c1"], np.array([500]), np.random.default_rng(0).choice(BASES, 500))
    genes = pl.DataFrame(
        {
            "gene_id": ["g"],
            "chrom": ["c1"],
            "start": [101],
            "end": [400],
            "strand": ["+"],
            "biotype": ["protein_coding"],
        }
    )
    sites = pl.DataFrame(
        {
            "gene_id": ["g"],
            "transcript_id": ["t"],
            "chrom": ["c1"],
            "position": [200],
            "strand": ["+"],
            "splice_type": ["donor"],
        }
    )
    positions = np.arange(101, 401)
    scores = pl.DataFrame(
        {
            "gene_id": "g",
            "chrom": "c1",
            "strand": "+",
            "position": positions,
            "donor": np.where(positions == 200 + offset, 0.9, 0.01).astype(np.float32),
            "acceptor": np.zeros(len(positions), dtype=np.float32),
        }
    )
    return genome, genes, sites, scores


@pytest.mark.parametrize("window", [0, 2, 3])
@pytest.mark.parametrize("side", [-1, 1])
def test_consensus_window_counts_at_its_edge_and_not_beyond(tmp_path, window, side):
    for offset, expected in ((side * window, {"TP": 1}), (side * (window + 1), {"FN": 1, "FP": 1})):
        genome, genes, sites, scores = one_site(window, offset)
        scores.write_parquet(tmp_path / "scores.parquet")
        scored, _ = read_scores(tmp_path / "scores.parquet", genes, genome.chrom_lengths())
        calls, _ = make_calls(scored, sites, genes, genome, CallSettings(0.5, window, "random", 1.0, 0))
        donors = calls.filter((pl.col("splice_type") == "donor") & (pl.col("pred_type") != "TN"))
        assert dict(donors.group_by("pred_type").len().iter_rows()) == expected, (window, offset)
        site_row = donors.filter(pl.col("position") == 200)
        assert site_row["window_score"][0] == pytest.approx(0.9 if "TP" in expected else 0.01)


class DecoyToy(Toy):
    """300 kb, half the sites missed (FN scores uniform in 0-0.5), background mostly near 0 with
    5% of positions uniform in 0-0.5: enough GT/AG candidates to match the FN scores."""

    def __init__(self, rng):
        super().__init__(
            rng,
            lengths=(300_000,),
            genes=[("gP", "c1", 1001, 298_000, "+"), ("gM", "c1", 2001, 299_000, "-")],
            n_sites=600,
        )

    def random_scores(self, rng) -> pl.DataFrame:
        parts = []
        for gene in self.genes.iter_rows(named=True):
            positions = np.arange(gene["start"], gene["end"] + 1)
            columns = {}
            for splice_type in ("donor", "acceptor"):
                values = rng.beta(0.3, 30, len(positions))
                lifted = rng.random(len(positions)) < 0.05
                values[lifted] = rng.uniform(0, 0.5, lifted.sum())
                columns[splice_type] = values
            parts.append(
                pl.DataFrame(
                    {
                        "gene_id": gene["gene_id"],
                        "chrom": "c1",
                        "strand": gene["strand"],
                        "position": positions,
                        **columns,
                    }
                )
            )
        scores = pl.concat(parts)
        planted = self.sites.with_columns(
            pl.Series(
                "planted",
                np.where(rng.random(self.sites.height) < 0.5, 0.95, rng.uniform(0, 0.5, self.sites.height)),
            )
        )
        scores = plant_site_scores(scores, planted)
        return scores.with_columns(pl.col("donor", "acceptor").cast(pl.Float32))


def test_decoy_negatives_carry_the_dinucleotide_and_the_fn_scores(tmp_path):
    toy = DecoyToy(np.random.default_rng(11))
    decoy, summary = toy.call(tmp_path, negatives="decoy", seed=5)
    random, _ = toy.call(tmp_path, negatives="random", seed=5)
    for splice_type, canonical in (("donor", "GT"), ("acceptor", "AG")):
        fn = decoy.filter((pl.col("splice_type") == splice_type) & (pl.col("pred_type") == "FN"))
        tn = decoy.filter((pl.col("splice_type") == splice_type) & (pl.col("pred_type") == "TN"))
        random_tn = random.filter((pl.col("splice_type") == splice_type) & (pl.col("pred_type") == "TN"))
        assert fn.height > 100 and tn.height == fn.height == random_tn.height
        assert (tn["dinucleotide"] == canonical).all()
        assert (random_tn["dinucleotide"] == canonical).mean() < 0.2  # ~1/16 at random
        matched = ks_distance(fn["score"].to_numpy(), tn["score"].to_numpy())
        unmatched = ks_distance(fn["score"].to_numpy(), random_tn["score"].to_numpy())
        assert matched < 0.05 < 0.5 < unmatched, (matched, unmatched)
        assert np.quantile(tn["score"], [0.1, 0.5, 0.9]) == pytest.approx(
            np.quantile(fn["score"], [0.1, 0.5, 0.9]), abs=0.02
        )
        assert summary[f"{splice_type}_report"]["ks_fn_vs_tn_score"] == pytest.approx(matched, abs=1e-6)


def test_negatives_follow_seed_and_per_error(tmp_path):
    toy = Toy(np.random.default_rng(12), n_sites=40)
    first, _ = toy.call(tmp_path, seed=1, negatives="random")
    again, _ = toy.call(tmp_path, seed=1, negatives="random")
    other, _ = toy.call(tmp_path, seed=2, negatives="random")
    double, _ = toy.call(tmp_path, seed=1, per_error=2.0)
    assert first.equals(again)
    tn = {
        name: frame.filter(pl.col("pred_type") == "TN")["position"].to_list()
        for name, frame in (("first", first), ("other", other), ("double", double))
    }
    assert tn["first"] != tn["other"]
    n_fn = first.filter(pl.col("pred_type") == "FN").height
    assert len(tn["double"]) == 2 * n_fn and len(tn["first"]) == n_fn


def write_cli_inputs(tmp_path: Path, toy: Toy, scores: pl.DataFrame) -> list[str]:
    fasta = tmp_path / "genome.fa"
    fasta.write_text("".join(f">{name}\n{toy.genome.chromosome(name)}\n" for name in toy.genome.names))
    toy.sites.write_parquet(tmp_path / "sites.parquet")
    toy.genes.write_parquet(tmp_path / "genes.parquet")
    scores.write_parquet(tmp_path / "scores.parquet")
    inputs = {name: tmp_path / f"{name}.parquet" for name in ("scores", "sites", "genes")}
    outputs = {"calls": tmp_path / "calls.parquet", "summary": tmp_path / "summary.json"}
    return [
        *path_flags(inputs, outputs),
        "--genome",
        str(fasta),
    ]


def one_line_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(make_calls_rule.main, argv)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_cli_writes_calls_and_summary(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    run_cli(make_calls_rule.main, write_cli_inputs(tmp_path, toy, toy.scores) + ["--config", "{}"])
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert counts_of(calls) == brute_force_counts(toy, 0.5, 2)
    assert summary["counts"]["donor"]["TN"] == summary["counts"]["donor"]["FN"]
    assert "make_calls: threshold 0.5, window ±2, TN decoy; donor: TP" in capsys.readouterr().err


def test_missing_score_column_is_one_line(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    argv = write_cli_inputs(tmp_path, toy, toy.scores.drop("acceptor")) + ["--config", "{}"]
    line = one_line_error(capsys, argv)
    assert line == (
        f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'acceptor': required column missing "
        "(found: gene_id, chrom, strand, position, donor)"
    )


def test_scores_outside_zero_one_are_one_line(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    bad = toy.scores.with_columns(
        pl.when(pl.int_range(pl.len()) == 6).then(1.5).otherwise(pl.col("donor")).alias("donor")
    )
    line = one_line_error(capsys, write_cli_inputs(tmp_path, toy, bad) + ["--config", "{}"])
    assert line == (
        f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'donor' row 7: "
        "not a probability in [0, 1] (got 1.5)"
    )


@pytest.mark.parametrize(
    "threshold,message",
    [
        (1.5, "1.5 is greater than or equal to the maximum of 1"),
        (0, "0 is less than or equal to the minimum of 0"),
    ],
)
def test_threshold_outside_zero_one_is_one_line(tmp_path, capsys, threshold, message):
    toy = Toy(np.random.default_rng(4))
    argv = write_cli_inputs(tmp_path, toy, toy.scores) + [
        "--config",
        json.dumps({"calling": {"threshold": threshold}}),
    ]
    assert one_line_error(capsys, argv) == f"errorseq: error: config: calling.threshold: {message}"


def test_sites_on_a_chromosome_the_genome_lacks_are_one_line(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    argv = write_cli_inputs(tmp_path, toy, toy.scores) + ["--config", "{}"]
    toy.sites.with_columns(pl.col("chrom").str.replace("c1", "chr1")).write_parquet(
        tmp_path / "sites.parquet"
    )
    line = one_line_error(capsys, argv)
    assert line == (
        f"errorseq: error: {tmp_path / 'sites.parquet'}: column 'chrom': chromosome 'chr1' not in genome; "
        "genome has c1, c2 (1 of its chromosomes missing; or restrict with calling.region)"
    )


def test_scores_of_one_strand_only_are_one_line(tmp_path, capsys):
    """Half the sites unscored would give no calls on '-': refused, naming chromosome and strand."""
    toy = Toy(np.random.default_rng(4))
    plus_only = toy.scores.filter(pl.col("strand") == "+")
    line = one_line_error(capsys, write_cli_inputs(tmp_path, toy, plus_only) + ["--config", "{}"])
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: strand: no scored position on ")
    assert "strand '-'" in line and "score both strands of every gene" in line


def test_conflicting_duplicate_scores_are_one_line(tmp_path, capsys):
    toy = Toy(np.random.default_rng(4))
    twin = toy.scores.head(1).with_columns(pl.lit(0.99, dtype=pl.Float32).alias("donor"))
    line = one_line_error(
        capsys, write_cli_inputs(tmp_path, toy, pl.concat([toy.scores, twin])) + ["--config", "{}"]
    )
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'position' row 1: ")
    assert "scored twice with different donor/acceptor values" in line


def test_float_positions_that_are_not_integers_are_one_line(tmp_path, capsys):
    """A parquet column of floats used to be truncated (12.7 read as 12) where TSV refused it."""
    toy = Toy(np.random.default_rng(4))
    floats = toy.scores.with_columns(pl.col("position").cast(pl.Float64))
    shifted = floats.with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(pl.col("position") + 0.7).otherwise("position")
    )
    line = one_line_error(capsys, write_cli_inputs(tmp_path, toy, shifted) + ["--config", "{}"])
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'position' row 3: ")
    assert "not a positive integer" in line


def test_position_past_the_chromosome_end_is_one_line(tmp_path, capsys):
    """2**40 + p used to alias onto the next strand's key and score a real position there."""
    toy = Toy(np.random.default_rng(4))
    huge = toy.scores.with_columns(
        pl.when(pl.int_range(pl.len()) == 4)
        .then(pl.col("position") + 2**40)
        .otherwise("position")
        .alias("position")
    )
    line = one_line_error(capsys, write_cli_inputs(tmp_path, toy, huge) + ["--config", "{}"])
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'position' row 5: ")
    assert "past the end of chromosome" in line


def test_a_table_of_peaks_only_is_one_line(tmp_path, capsys):
    """Scores kept only where they are high (a common export) used to fail later as 'no TN windows'."""
    toy = Toy(np.random.default_rng(4))
    peaks = toy.scores.filter((pl.col("donor") > 0.1) | (pl.col("acceptor") > 0.1))
    line = one_line_error(capsys, write_cli_inputs(tmp_path, toy, peaks) + ["--config", "{}"])
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: position: scores ")
    assert "score every position of every gene" in line


def test_gene_positions_count_overlapping_genes_once():
    genes = pl.DataFrame(
        {
            "chrom": ["c1", "c1", "c1", "c1", "c2"],
            "strand": ["+", "+", "+", "-", "+"],
            "start": [1, 5, 30, 5, 1],
            "end": [10, 20, 40, 20, 1],
        }
    )
    assert gene_positions(genes) == 20 + 11 + 16 + 1


def test_scores_read_in_batches_of_a_few_rows_give_the_same_calls_and_errors(tmp_path, capsys, monkeypatch):
    """A chromosome is read BATCH_ROWS rows at a time: batches of 7 rows give the calls of one
    batch, and a position scored twice (its twin in the last batch) still names its first row."""
    toy = Toy(np.random.default_rng(5))
    whole, _ = toy.call(tmp_path)
    monkeypatch.setattr(scores_module, "BATCH_ROWS", 7)
    batched, _ = toy.call(tmp_path)
    assert batched.equals(whole)
    twin = toy.scores.head(1).with_columns(pl.lit(0.99, dtype=pl.Float32).alias("donor"))
    line = one_line_error(
        capsys, write_cli_inputs(tmp_path, toy, pl.concat([toy.scores, twin])) + ["--config", "{}"]
    )
    assert line.startswith(f"errorseq: error: {tmp_path / 'scores.parquet'}: column 'position' row 1: ")
