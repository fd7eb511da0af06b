import json

import numpy as np
import polars as pl
import pytest

from tests.calls_fixtures import extract_args, run_extract_program
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.types import ExperimentSection, complete_typed_section
from workflow_scripts.data.fasta import load_fasta, open_genome
from workflow_scripts.data.quality import read_notes
from workflow_scripts.data.splits import assign_gene_splits
from workflow_scripts.data.windows import split_windows, windows_from_calls
from workflow_scripts.errors import InputError
from workflow_scripts.rules.extract import main as extract_main

FP_VS_TP = {"name": "fp", "error_label": "FP", "correct_label": "TP"}
# chr1: 40 nt, chr2: 12 nt.
CHR1 = "AAAACCCCGGGGTTTTACGTACGTAAAACCCCGGGGTTTT"
CHR2 = "ACGTTGCAACGT"
HEADER = "gene_id\tchrom\tposition\tstrand\tsplice_type\tpred_type\tscore\tgene_start\tgene_end"
ROWS = [
    "g1\tchr1\t20\t+\tdonor\tFP\t0.9\t11\t30",
    "g1\tchr1\t25\t-\tacceptor\tTP\t0.8\t11\t30",
    "g2\tchr2\t2\t+\tdonor\tTP\t0.7\t1\t12",
    "g3\tchr2\t11\t-\tdonor\tFP\t0.6\t1\t12",
    "g4\tchr1\t5\t+\tdonor\tTN\t0.1\t1\t40",
]


@pytest.fixture
def genome_dir(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(f">chr1\n{CHR1}\n>chr2\n{CHR2}\n")
    load_fasta(fasta).save_cached(tmp_path / "idx")
    return tmp_path / "idx"


def extract_config(fractions=(0.8, 0.1, 0.1), experiment=FP_VS_TP, flank=3) -> str:
    split = {"fractions": dict(zip(("train", "val", "test"), fractions)), "seed": 42}
    return json.dumps({"experiment": experiment, "window": {"flank": flank}, "split": split})


def write_calls(tmp_path, rows, header=HEADER, name="calls.tsv"):
    path = tmp_path / name
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def run_extract(genome_dir, calls, out, config=None):
    extract_main(extract_args(genome_dir, calls, out, config or extract_config()))
    return pl.read_parquet(out)


def library_windows(genome_dir, calls, experiment=FP_VS_TP, flank=3) -> pl.DataFrame:
    """Windows before the split checks (the five-row fixture is too small to give every split
    both classes), in the output's column order, keyed by id."""
    window = complete_typed_section("window", {"flank": flank})
    windows = windows_from_calls(
        open_genome(genome_dir), calls, ExperimentSection.from_completed(experiment), window
    )
    split = {"fractions": {"train": 0.8, "val": 0.1, "test": 0.1}, "seed": 42}
    return split_windows(windows, complete_typed_section("split", split))


def revcomp(text):
    return text.translate(str.maketrans("ACGTN", "TGCAN"))[::-1]


def test_windows_centred_padded_and_reverse_complemented(genome_dir, tmp_path):
    windows = library_windows(genome_dir, write_calls(tmp_path, ROWS))
    derived = ["id", "gene_id", "split", "label", "sequence", "length", "site_offset"]
    calls_others = [column for column in HEADER.split("\t") if column not in derived]
    assert windows.columns == derived + calls_others  # the calls table's other columns in its order
    assert windows.schema["label"] == pl.Int8 and windows.schema["length"] == pl.Int32
    assert windows.schema["score"] == pl.Float64 and windows.schema["position"] == pl.Int64
    by_id = {row["id"]: row for row in windows.iter_rows(named=True)}
    assert set(by_id) == {"fp:1", "fp:2", "fp:3", "fp:4"}  # TN row dropped
    assert by_id["fp:1"]["sequence"] == CHR1[16:23] and by_id["fp:1"]["label"] == 1
    assert by_id["fp:2"]["sequence"] == revcomp(CHR1[21:28]) and by_id["fp:2"]["label"] == 0
    assert by_id["fp:3"]["sequence"] == "NN" + CHR2[0:5]  # N before the chromosome start
    assert by_id["fp:4"]["sequence"] == revcomp(CHR2[7:12] + "NN")  # N past the chromosome end
    assert set(windows["length"]) == {7} and set(windows["site_offset"]) == {3}
    assert by_id["fp:1"]["score"] == 0.9 and by_id["fp:3"]["gene_end"] == 12


def test_flank_and_labels_come_from_the_config(genome_dir, tmp_path):
    calls = write_calls(tmp_path, ROWS)
    tn_vs_fp = {"name": "x", "error_label": "FP", "correct_label": "TN"}
    windows = library_windows(genome_dir, calls, tn_vs_fp, flank=1)
    by_id = {row["id"]: row for row in windows.iter_rows(named=True)}
    assert set(by_id) == {"x:1", "x:4", "x:5"}  # FP rows 1 and 4, TN row 5; TP rows dropped
    assert by_id["x:1"]["sequence"] == CHR1[18:21] and by_id["x:5"]["label"] == 0


def test_sites_near_a_gene_edge_keep_the_length_and_the_site_at_the_centre(genome_dir, tmp_path):
    """Windows are not clipped to the gene span: the flank comes from the genome beyond it, so a
    site at its gene's first or last base has the window of any other site (no shape leak)."""
    rows = [
        "g1\tchr1\t11\t+\tdonor\tFP\t0.9\t11\t13",  # the gene's first base
        "g1\tchr1\t13\t-\tdonor\tTP\t0.9\t11\t13",  # its last base
        "g2\tchr1\t28\t-\tacceptor\tFP\t0.9\t28\t28",  # a one-base gene
        "g3\tchr1\t20\t+\tacceptor\tTP\t0.9\t2\t39",
    ]  # far from both gene edges
    windows = library_windows(genome_dir, write_calls(tmp_path, rows), flank=5).sort("id")
    assert windows["sequence"].to_list() == [
        CHR1[5:16],
        revcomp(CHR1[7:18]),
        revcomp(CHR1[22:33]),
        CHR1[14:25],
    ]
    assert set(windows["length"]) == {11} and set(windows["site_offset"]) == {5}
    for row in windows.iter_rows(named=True):
        base = CHR1[row["position"] - 1]
        assert row["sequence"][row["site_offset"]] == (base if row["strand"] == "+" else revcomp(base))


def test_windows_never_read_into_the_next_chromosome(genome_dir, tmp_path):
    rows = ["g1\tchr1\t39\t+\tdonor\tFP\t0.9\t\t", "g2\tchr2\t1\t-\tdonor\tTP\t0.9\t\t"]
    windows = library_windows(genome_dir, write_calls(tmp_path, rows), flank=3).sort("id")
    assert windows["sequence"].to_list() == [CHR1[35:40] + "NN", revcomp("NNN" + CHR2[0:4])]


def random_genome_dir(tmp_path, length=20_000, seed=0):
    rng = np.random.default_rng(seed)
    (tmp_path / "r.fa").write_text(">chr1\n" + "".join(rng.choice(list("ACGT"), length)) + "\n")
    load_fasta(tmp_path / "r.fa").save_cached(tmp_path / "ridx")
    return tmp_path / "ridx"


def many_gene_rows(n_genes: int) -> list[str]:
    """One FP and one TP call per gene, genes 60 nt apart on chr1, every call with a score."""
    return [
        f"g{gene}\tchr1\t{100 + 60 * gene + 10 * i}\t{'+-'[gene % 2]}\tdonor\t{pred}\t0.{gene % 9}\t\t"
        for gene in range(n_genes)
        for i, pred in enumerate(("FP", "TP"))
    ]


def test_every_call_column_is_kept_and_the_notes_describe_the_table(tmp_path):
    rows = [row + f"\tT{i}" for i, row in enumerate(many_gene_rows(200))]
    calls = write_calls(tmp_path, rows, HEADER + "\ttranscript_id")
    out = tmp_path / "w.parquet"
    windows = run_extract(random_genome_dir(tmp_path), calls, out)
    assert windows.columns[-4:] == ["score", "gene_start", "gene_end", "transcript_id"]
    assert windows["transcript_id"].to_list() == [f"T{i}" for i in range(400)]
    assert windows.schema["score"] == pl.Float64 and windows["gene_start"].null_count() == 400
    notes = read_notes(out)
    assert notes["window"] == {"flank": 3, "length": 7, "site_offset": 3} and notes["warnings"] == []
    assert notes["labels"] == {"error": "FP", "correct": "TP"}
    assert notes["dropped"] == {"all_n_windows": 0}
    counts = windows.group_by("split", "label").len()
    assert sum(notes["class_counts"][split]["error"] for split in ("train", "val", "test")) == 200
    assert (
        notes["class_counts"]["test"]["error"]
        == counts.filter((pl.col("split") == "test") & (pl.col("label") == 1))["len"][0]
    )


def test_csv_and_parquet_calls(tmp_path):
    genome_dir = random_genome_dir(tmp_path)
    tsv = pl.read_csv(write_calls(tmp_path, many_gene_rows(30)), separator="\t")
    tsv.write_csv(tmp_path / "calls.csv")
    tsv.write_parquet(tmp_path / "calls.parquet")
    expected = run_extract(genome_dir, tmp_path / "calls.tsv", tmp_path / "a.parquet")
    for name in ("calls.csv", "calls.parquet"):
        assert run_extract(genome_dir, tmp_path / name, tmp_path / "b.parquet").equals(expected)


def third_row(row: str, field: str, message: str) -> tuple:
    """A BAD_CALLS case: the first two rows of ROWS, then `row`."""
    return HEADER, ROWS[:2] + [row], field, message


BAD_CALLS = [
    (
        HEADER.replace("\tstrand", ""),
        [r.replace("\t+", "").replace("\t-", "") for r in ROWS],
        "column 'strand'",
        "missing",
    ),
    third_row("g2\tchr2\t2\t*\tdonor\tTP\t0.7\t1\t12", "column 'strand' row 3", "'\\*'"),
    third_row("g2\tchr2\t2\t+\texon\tTP\t0.7\t1\t12", "column 'splice_type' row 3", "exon"),
    third_row("g2\tchr2\t2\t+\tdonor\tXX\t0.7\t1\t12", "column 'pred_type' row 3", "XX"),
    third_row("g2\tchr2\t0\t+\tdonor\tTP\t0.7\t\t", "column 'position' row 3", "outside the chromosome"),
    third_row("g2\tchr2\t13\t+\tdonor\tTP\t0.7\t\t", "column 'position' row 3", "outside the chromosome"),
    third_row("g2\tchr2\tx1\t+\tdonor\tTP\t0.7\t1\t12", "column 'position' row 3", "not an integer"),
    third_row("g2\t2\t2\t+\tdonor\tTP\t0.7\t1\t12", "column 'chrom' row 3", "did you mean 'chr2'"),
    third_row("g2\tchr2\t2\t+\tdonor\tTP\t0.7\t5\t3", "column 'gene_start' row 3", "gene_start > gene_end"),
    third_row(ROWS[1], "row 3", "duplicate call"),
    (HEADER, [ROWS[1], ROWS[2]], "experiment 'fp'", "no FP rows \\(error class\\) in calls.tsv"),
    # 500 nt past the end: windows pad N past a chromosome end, but the site itself must lie on it
    third_row("g2\tchr2\t512\t-\tdonor\tTP\t0.7\t\t", "column 'position' row 3", "outside the chromosome"),
]


@pytest.mark.parametrize("header, rows, field, message", BAD_CALLS)
def test_bad_calls_raise_input_error(genome_dir, tmp_path, header, rows, field, message):
    calls = write_calls(tmp_path, rows, header)
    with pytest.raises(InputError, match=message) as caught:
        run_extract(genome_dir, calls, tmp_path / "w.parquet")
    assert "calls.tsv" in str(caught.value) and field in str(caught.value)
    assert not (tmp_path / "w.parquet").exists()


def test_unprefixed_chromosome_hint(tmp_path):
    fasta = tmp_path / "g.fa"
    fasta.write_text(">1\nACGTACGT\n")
    calls = write_calls(tmp_path, ["g\tchr1\t2\t+\tdonor\tFP\t1\t\t", "h\t1\t3\t+\tdonor\tTP\t1\t\t"])
    with pytest.raises(InputError, match="chromosome 'chr1' not in genome; did you mean '1'"):
        run_extract(fasta, calls, tmp_path / "w.parquet")


@pytest.mark.parametrize("bad_row", [1, 3, 9, 10])
def test_cli_exit_code_2_one_line_no_output(genome_dir, tmp_path, bad_row):
    header, rows, field, _ = BAD_CALLS[bad_row]
    calls = write_calls(tmp_path, rows, header)
    out = tmp_path / "w.parquet"
    result = run_extract_program(genome_dir, calls, out, extract_config())
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "calls.tsv" in lines[0] and field in lines[0]
    assert not out.exists() and not list(tmp_path.glob(".w.parquet*"))


@pytest.mark.parametrize(
    "config, field",
    [
        (extract_config((0.5, 0.5, 0.5)), "split.fractions"),
        (extract_config((-0.1, 0.6, 0.5)), "split.fractions.train"),
        (extract_config(flank=0), "window.flank"),
        (
            extract_config(experiment={"name": "x", "error_label": "TP", "correct_label": "TP"}),
            "experiment.error_label",
        ),
        (json.dumps({"window": {"flank": 3}}), "experiment.name"),
    ],
)
def test_bad_config_is_named(genome_dir, tmp_path, config, field):
    with pytest.raises(InputError) as caught:
        run_extract(genome_dir, write_calls(tmp_path, ROWS), tmp_path / "w.parquet", config)
    assert (caught.value.source, caught.value.field) == ("config", field)
    assert not (tmp_path / "w.parquet").exists()


@pytest.mark.parametrize(
    "inputs, flag",
    [
        ([], "--calls/--genome"),
        (["--calls", "c.tsv"], "--calls/--genome"),
        (["--sequences", "s.tsv", "--calls", "c.tsv"], "--sequences"),
    ],
)
def test_one_input_mode(tmp_path, inputs, flag):
    with pytest.raises(InputError) as caught:
        extract_main(
            [*inputs, *path_flags({}, {"windows": tmp_path / "w.parquet"}), "--config", extract_config()]
        )
    assert (caught.value.source, caught.value.field) == ("command line", flag)


def test_gene_split_disjoint_and_respects_fractions():
    genes = pl.Series("gene_id", [f"g{i % 500}" for i in range(5000)])
    split = assign_gene_splits(genes, (0.8, 0.1, 0.1), seed=42)
    frame = pl.DataFrame({"gene_id": genes, "split": split})
    assert frame.group_by("gene_id").agg(pl.col("split").n_unique())["split"].max() == 1
    shares = dict(frame["split"].value_counts(normalize=True).iter_rows())
    assert abs(shares["train"] - 0.8) < 0.02 and abs(shares["val"] - 0.1) < 0.02
    assert split.equals(assign_gene_splits(genes.reverse(), (0.8, 0.1, 0.1), seed=42).reverse())
    assert not split.equals(assign_gene_splits(genes, (0.8, 0.1, 0.1), seed=1))


def test_tiny_split_gives_every_split_a_gene():
    genes = pl.Series("gene_id", ["a", "a", "a", "a", "b", "c"])
    split = assign_gene_splits(genes, (0.8, 0.1, 0.1), seed=0)
    assert set(split) == {"train", "val", "test"}


def sequences_config() -> str:
    return extract_config(experiment={"name": "s", "error_label": "FP", "correct_label": "TP"})


def filler_sequences(n_genes=20) -> dict:
    """Rows that give every split both labels: genes f0.. with one window of each label."""
    return {
        "sequence": ["ACGTAC", "TTGACA"] * n_genes,
        "label": [1, 0] * n_genes,
        "gene_id": [f"f{i // 2}" for i in range(2 * n_genes)],
    }


def test_sequences_mode(tmp_path):
    filler = filler_sequences()
    table = pl.DataFrame(
        {
            "sequence": ["acgtn", "GGGG", "TTAA", "CCAT", *filler["sequence"], "nnnN"],
            "label": [1, 0, 1, 0, *filler["label"], 1],
            "gene_id": ["a", "a", "b", "c", *filler["gene_id"], "n"],
            "score": [0.5] * 45,
        }
    )
    table.write_csv(tmp_path / "seqs.csv")
    out = tmp_path / "w.parquet"
    extract_main(
        [*path_flags({"sequences": tmp_path / "seqs.csv"}, {"windows": out}), "--config", sequences_config()]
    )
    windows = pl.read_parquet(out)
    assert windows["sequence"].to_list()[:4] == ["ACGTN", "GGGG", "TTAA", "CCAT"]
    assert windows["id"].to_list()[:4] == ["s:1", "s:2", "s:3", "s:4"]
    assert windows["length"].to_list()[:4] == [5, 4, 4, 4] and windows["label"].dtype == pl.Int8
    assert windows.filter(pl.col("gene_id") == "a")["split"].n_unique() == 1
    assert windows.columns == ["id", "gene_id", "split", "label", "sequence", "length", "score"]
    assert windows.height == 44 and read_notes(out)["dropped"] == {"all_n_windows": 1}  # the all-N row
    assert read_notes(out)["window"] == {}


@pytest.mark.parametrize(
    "sequence, label, message",
    [("ACGR", 1, "column 'sequence' row 1"), ("", 1, "empty sequence"), ("ACGT", 2, "column 'label' row 1")],
)
def test_sequences_mode_bad_rows(tmp_path, sequence, label, message):
    pl.DataFrame({"sequence": [sequence, "ACGT"], "label": [label, 0]}).write_parquet(tmp_path / "s.parquet")
    with pytest.raises(InputError, match=message):
        extract_main(
            [
                *path_flags({"sequences": tmp_path / "s.parquet"}, {"windows": tmp_path / "o.parquet"}),
                "--config",
                sequences_config(),
            ]
        )
    assert not (tmp_path / "o.parquet").exists()


def test_sequences_mode_without_gene_id_groups_each_row(tmp_path):
    ids = [f"w{i}" for i in range(40)]
    pl.DataFrame({"sequence": ["AC", "GT"] * 20, "label": ["1", "0"] * 20, "id": ids}).write_parquet(
        tmp_path / "s.parquet"
    )
    out = tmp_path / "o.parquet"
    extract_main(
        [*path_flags({"sequences": tmp_path / "s.parquet"}, {"windows": out}), "--config", sequences_config()]
    )
    windows = pl.read_parquet(out)
    assert windows["gene_id"].to_list() == ids == windows["id"].to_list()
    assert "chrom" not in windows.columns and "site_offset" not in windows.columns


def test_missing_genome_index_names_the_path(tmp_path):
    calls = write_calls(tmp_path, ROWS)
    with pytest.raises(InputError, match="nowhere: genome: not found"):
        run_extract(tmp_path / "nowhere", calls, tmp_path / "w.parquet")


@pytest.mark.parametrize("name", ["calls.tsv", "calls.parquet"])
@pytest.mark.parametrize("column", ["chrom_length", "length_of_chrom", "chromosome_length"])
def test_a_users_chromosome_length_column_never_overrides_the_genome_index(
    genome_dir, tmp_path, name, column
):
    """Some tools add the chromosome's length to their calls: a wrong one (a call 500 nt past the
    end of chr1 made 'inside') is ignored, the genome index decides (issue 48)."""
    rows = [f"{row}\t100000" for row in ROWS[:2] + ["g9\tchr1\t540\t+\tdonor\tTP\t0.7\t\t"]]
    write_calls(tmp_path, rows, f"{HEADER}\t{column}")
    if name.endswith(".parquet"):
        pl.read_csv(tmp_path / "calls.tsv", separator="\t").write_parquet(tmp_path / name)
    with pytest.raises(InputError, match="position outside the chromosome") as caught:
        run_extract(genome_dir, tmp_path / name, tmp_path / "w.parquet")
    assert f"{name}: column 'position' row 3" in str(caught.value)
