"""Splits beyond one gene-level split: k-fold by gene (split.folds) and a chromosome hold-out
(split.by: chromosome), in the library and through the extract rule's entry point."""

import json

import numpy as np
import polars as pl
import pytest

from workflow_scripts.command_line import path_flags
from workflow_scripts.config.split_checks import check_split_config
from workflow_scripts.config.types import SplitSection, complete_typed_section
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.data.splits import assign_gene_splits, assign_splits
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.rules.extract import main as extract_main

DEFAULT_SPLIT: SplitSection = complete_typed_section("split", {})


def split_section(**values) -> SplitSection:
    return complete_typed_section("split", values)


def uneven_genes(n_genes=300, seed=0) -> pl.DataFrame:
    """Genes with 1..20 rows each, rows in a shuffled order."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 21, n_genes)
    genes = np.repeat([f"g{i}" for i in range(n_genes)], rows)
    return pl.DataFrame({"gene_id": genes[rng.permutation(len(genes))]})


def fold_splits(frame: pl.DataFrame, k: int, **values) -> list[pl.DataFrame]:
    split = split_section(folds=k, **values)
    return [frame.with_columns(assign_splits(frame, split, fold, "calls.tsv")) for fold in range(1, k + 1)]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_folds_are_gene_disjoint_and_test_every_gene_once(k):
    frame = uneven_genes()
    folds = fold_splits(frame, k)
    tested = pl.concat([fold.filter(pl.col("split") == "test") for fold in folds])
    per_gene = tested.group_by("gene_id").agg(pl.len().alias("rows"))
    assert per_gene.height == frame["gene_id"].n_unique()  # every gene is tested ...
    assert tested.height == frame.height  # ... with all its rows, in exactly one fold
    for fold in folds:
        assert fold.group_by("gene_id").agg(pl.col("split").n_unique())["split"].max() == 1
        assert set(fold["split"]) == {"train", "val", "test"}
        shares = dict(fold["split"].value_counts(normalize=True).iter_rows())
        assert shares["test"] == pytest.approx(1 / k, abs=0.03)  # about equal row share
        # the other genes: train and val in the ratio fractions.train : fractions.val (8 : 1)
        assert shares["val"] / (shares["train"] + shares["val"]) == pytest.approx(1 / 9, abs=0.03)


def test_folds_depend_on_genes_and_seed_not_row_order():
    frame = uneven_genes(n_genes=100)
    first = fold_splits(frame, 3)[0]["split"]
    reversed_frame = frame.reverse()
    assert first.equals(fold_splits(reversed_frame, 3)[0]["split"].reverse())
    assert not first.equals(fold_splits(frame, 3, seed=1)[0]["split"])


def test_one_fold_is_the_fractions_split_as_before():
    frame = uneven_genes(n_genes=100)
    assert assign_splits(frame, DEFAULT_SPLIT, None, "x").equals(
        assign_gene_splits(frame["gene_id"], (0.8, 0.1, 0.1), DEFAULT_SPLIT.seed)
    )


def test_more_folds_than_genes_is_an_error_naming_the_file():
    frame = pl.DataFrame({"gene_id": ["a", "a", "b"]})
    with pytest.raises(InputError) as caught:
        assign_splits(frame, split_section(folds=3), 1, "calls.tsv")
    assert (caught.value.source, caught.value.field) == ("calls.tsv", "split.folds")
    assert "at least 3 genes; the windows have 2" in caught.value.message


def chromosome_frame() -> pl.DataFrame:
    chroms = ["chr1"] * 5 + ["chr2"] * 3 + ["chr3"] * 4 + ["4"] * 2
    return pl.DataFrame({"gene_id": [f"g{i // 2}" for i in range(len(chroms))], "chrom": chroms})


def test_chromosome_split_puts_whole_chromosomes_where_asked():
    frame = chromosome_frame()
    split = split_section(by="chromosome", test_chromosomes=["chr2"], val_chromosomes=[4])  # 4: YAML int
    frame = frame.with_columns(assign_splits(frame, split, None, "calls.tsv"))
    by_chrom = dict(frame.group_by("chrom").agg(pl.col("split").unique()).iter_rows())
    assert {chrom: sorted(splits) for chrom, splits in by_chrom.items()} == {
        "chr1": ["train"],
        "chr2": ["test"],
        "chr3": ["train"],
        "4": ["val"],
    }


@pytest.mark.parametrize(
    ("frame", "test", "val", "field", "message"),
    [
        (
            chromosome_frame(),
            ["chr9"],
            ["chr1"],
            "split.test_chromosomes",
            "'chr9' is not a chromosome of the windows",
        ),
        (chromosome_frame(), ["chr1"], ["chrX"], "split.val_chromosomes", "'chrX' is not a chromosome"),
        (
            pl.DataFrame({"gene_id": ["a", "b"], "chrom": ["NC_003070.9"] * 2}),
            ["NC_003070.9"],
            ["chr2"],
            "split.by",
            "the windows lie on 1 chromosome(s) (NC_003070.9); a chromosome hold-out needs at least 3",
        ),
        (
            chromosome_frame().filter(pl.col("chrom") != "4"),
            ["chr1", "chr2"],
            ["chr3"],
            "split.val_chromosomes",
            "every chromosome (chr1, chr2, chr3) is held out",
        ),
        (pl.DataFrame({"gene_id": ["a", "b", "c"]}), ["1"], ["2"], "split.by", "needs a 'chrom' column"),
    ],
)
def test_chromosome_split_errors_name_the_file_and_field(frame, test, val, field, message):
    split = split_section(by="chromosome", test_chromosomes=test, val_chromosomes=val)
    with pytest.raises(InputError) as caught:
        assign_splits(frame, split, None, "calls.tsv")
    assert (caught.value.source, caught.value.field) == ("calls.tsv", field)
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"test_chromosomes": ["chr1"]}, "split.test_chromosomes", "used only with split.by: chromosome"),
        (
            {"by": "chromosome", "val_chromosomes": ["chr1"]},
            "split.test_chromosomes",
            "at least one chromosome",
        ),
        (
            {"by": "chromosome", "test_chromosomes": ["chr1"]},
            "split.val_chromosomes",
            "at least one chromosome",
        ),
        (
            {"by": "chromosome", "test_chromosomes": ["chr1", "2"], "val_chromosomes": [2]},
            "split.val_chromosomes",
            "'2' is also in split.test_chromosomes",
        ),
        (
            {"by": "chromosome", "folds": 3, "test_chromosomes": ["a"], "val_chromosomes": ["b"]},
            "split.folds",
            "k-fold splits genes",
        ),
    ],
)
def test_split_config_mistakes_are_config_errors(values, field, message):
    with pytest.raises(InputError) as caught:
        check_split_config(split_section(**values))
    assert (caught.value.source, caught.value.field) == ("config", field)
    assert message in caught.value.message


# ---- through the extract rule's entry point ------------------------------------------------------
CHROMOSOMES = ("chr1", "chr2", "chr3", "chr4")
GENES_PER_CHROMOSOME = 12


@pytest.fixture(scope="module")
def genome_and_calls(tmp_path_factory):
    """Four 2-kb chromosomes, twelve genes on each with one FP and one TP call (and a TN)."""
    directory = tmp_path_factory.mktemp("splits")
    rng = np.random.default_rng(3)
    fasta = directory / "g.fa"
    fasta.write_text("".join(f">{name}\n{''.join(rng.choice(list('ACGT'), 2000))}\n" for name in CHROMOSOMES))
    load_fasta(fasta).save_cached(directory / "idx")
    lines = ["gene_id\tchrom\tposition\tstrand\tsplice_type\tpred_type"]
    for chrom in CHROMOSOMES:
        for gene in range(GENES_PER_CHROMOSOME):
            start = 100 + gene * 150
            for offset, pred_type in ((10, "FP"), (60, "TP"), (110, "TN")):
                lines.append(f"{chrom}_g{gene}\t{chrom}\t{start + offset}\t+\tdonor\t{pred_type}")
    calls = directory / "calls.tsv"
    calls.write_text("\n".join(lines) + "\n")
    return directory / "idx", calls


def extract(genome_and_calls, out, split: dict, experiment_extra=None):
    genome, calls = genome_and_calls
    experiment = {"name": "fp", "error_label": "FP", "correct_label": "TP", **(experiment_extra or {})}
    config = json.dumps({"experiment": experiment, "window": {"flank": 5}, "split": split})
    argv = ["--genome", str(genome), *path_flags({"calls": calls}, {"windows": out}), "--config", config]
    extract_main(argv)
    return pl.read_parquet(out)


def test_extract_folds_test_every_gene_once(genome_and_calls, tmp_path):
    tested = []
    for fold in (1, 2, 3):
        windows = extract(genome_and_calls, tmp_path / f"w{fold}.parquet", {"folds": 3}, {"fold": fold})
        assert windows.group_by("gene_id").agg(pl.col("split").n_unique())["split"].max() == 1
        tested += windows.filter(pl.col("split") == "test")["gene_id"].unique().to_list()
    assert sorted(tested) == sorted(f"{c}_g{g}" for c in CHROMOSOMES for g in range(GENES_PER_CHROMOSOME))


def test_extract_holds_out_whole_chromosomes(genome_and_calls, tmp_path):
    split = {"by": "chromosome", "test_chromosomes": ["chr2"], "val_chromosomes": ["chr4"]}
    windows = extract(genome_and_calls, tmp_path / "w.parquet", split)
    by_chrom = dict(windows.group_by("chrom").agg(pl.col("split").unique().sort()).iter_rows())
    assert by_chrom == {"chr1": ["train"], "chr2": ["test"], "chr3": ["train"], "chr4": ["val"]}


def test_extract_with_an_absent_chromosome_is_one_line_naming_file_and_field(
    genome_and_calls, tmp_path, capsys
):
    genome, calls = genome_and_calls
    split = {"by": "chromosome", "test_chromosomes": ["chr2"], "val_chromosomes": ["chrM"]}
    config = json.dumps(
        {"experiment": {"name": "fp", "error_label": "FP", "correct_label": "TP"}, "split": split}
    )
    out = tmp_path / "w.parquet"
    with pytest.raises(SystemExit) as exited:
        run_cli(
            extract_main,
            ["--genome", str(genome), *path_flags({"calls": calls}, {"windows": out}), "--config", config],
        )
    assert exited.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"errorseq: error: {calls}: split.val_chromosomes: 'chrM' is not a chromosome of the windows "
        "(chr1, chr2, chr3, chr4)"
    ]
    assert not out.exists()
