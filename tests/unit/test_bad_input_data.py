"""Wrong data that errorseq used to accept silently, data side (issue 17): each class is refused
with ONE line `errorseq: error: <file>: <field>: <message>`, exit status 2 and no output, or
(where the result still means something) accepted with a warning in the log and windows.parquet's
notes. The entry points run in-process through `run_cli`, as `python -m` runs them (one test runs
two cases as real subprocesses); tiny inputs, no Snakemake: the fast tier.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.calls_fixtures import extract_args, run_extract_program
from workflow_scripts.command_line import path_flags
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.data.quality import MIN_CLASS_WINDOWS, read_notes
from workflow_scripts.data.splits import SPLIT_NAMES, assign_gene_splits
from workflow_scripts.errors import InputError, run_cli
from workflow_scripts.rules import extract, index_genome
from workflow_scripts.workflow.preflight import check_input_files

HEADER = ["gene_id", "chrom", "position", "strand", "splice_type", "pred_type", "score"]
FLANK = 20
CONFIG = json.dumps(
    {
        "experiment": {"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"},
        "window": {"flank": FLANK},
    }
)
N_GENES = 30
N_BLOCK = 300  # chr3 starts with this many N


def genome_text() -> str:
    rng = np.random.default_rng(5)
    bases = {
        name: "".join(rng.choice(list("ACGT"), length)) for name, length in (("chr1", 3000), ("chr2", 2000))
    }
    bases["chr3"] = "N" * N_BLOCK + "".join(rng.choice(list("ACGT"), 300))
    return "".join(f">{name}\n{text}\n" for name, text in bases.items())


def call_rows(n_genes: int = N_GENES) -> list[list[str]]:
    """Every gene has one TP, FP, FN and TN call, so every split gets both classes."""
    rows = []
    for gene in range(n_genes):
        for i, pred in enumerate(("TP", "FP", "FN", "TN")):
            rows.append(
                [
                    f"g{gene}",
                    ("chr1", "chr2")[gene % 2],
                    str(200 + 60 * gene + 7 * i),
                    "+-"[gene % 2],
                    ("donor", "acceptor")[i % 2],
                    pred,
                    f"0.{i + 1}",
                ]
            )
    return rows


def tsv(rows, header=HEADER) -> str:
    return "\n".join("\t".join(row) for row in [header, *rows]) + "\n"


@pytest.fixture(scope="module")
def genome_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("genome")
    (folder / "genome.fa").write_text(genome_text())
    load_fasta(folder / "genome.fa").save_cached(folder / "index")
    return folder / "index"


def run_entry(module, argv: list[str], capsys) -> tuple[int, list[str]]:
    """Exit status and stderr lines of an entry point run as `python -m` runs it."""
    try:
        run_cli(module.main, argv)
        status = 0
    except SystemExit as stop:
        status = stop.code
    return status, capsys.readouterr().err.strip().splitlines()


def extract_calls(genome, calls: Path, capsys, config: str = CONFIG) -> tuple[int, list[str], Path]:
    out = calls.parent / "w.parquet"
    status, lines = run_entry(extract, extract_args(genome, calls, out, config), capsys)
    return status, lines, out


def assert_refused(status: int, lines: list[str], out: Path, line: str) -> None:
    assert (status, lines) == (2, [line])
    assert not out.exists() and not list(out.parent.glob(f".{out.name}*"))


def write(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text)
    return folder / name


# ---- columns named like errorseq's own, and duplicated headers ------------------------------------
RESERVED = "reserved name: errorseq derives a column of that name; rename or drop this column"


@pytest.mark.parametrize(
    "name", ["sequence", "label", "split", "length", "id", "site_offset", "prob", "__row", "__chrom_idx"]
)
def test_a_calls_column_named_like_a_derived_one(genome_dir, tmp_path, capsys, name):
    calls = write(tmp_path, "calls.tsv", tsv([row + ["x"] for row in call_rows()], HEADER + [name]))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    line = f"errorseq: error: {calls}: column '{name}': {RESERVED}"
    assert_refused(status, lines, out, line)
    with pytest.raises(InputError) as caught:  # the preflight says the same, before any job runs
        check_input_files(
            {
                "calling": section_defaults("calling"),
                "train": section_defaults("train"),
                "genome": str(genome_dir.parent / "genome.fa"),
                "calls": str(calls),
            }
        )
    assert f"errorseq: error: {caught.value}" == line


def test_a_sequences_column_named_like_a_derived_one(tmp_path, capsys):
    rows = [[f"s{i}", "ACGTACGT", str(i % 2), "train"] for i in range(40)]
    table = write(tmp_path, "seqs.tsv", tsv(rows, ["id", "sequence", "label", "split"]))
    out = tmp_path / "w.parquet"
    status, lines = run_entry(
        extract, [*path_flags({"sequences": table}, {"windows": out}), "--config", CONFIG], capsys
    )
    assert_refused(status, lines, out, f"errorseq: error: {table}: column 'split': {RESERVED}")


@pytest.mark.parametrize(
    "header, field, columns",
    [
        (HEADER + ["score"], "score", (7, 8)),
        (HEADER + [" score "], "score", (7, 8)),  # the same name once blanks are removed
        (["\ufeffgene_id", *HEADER[1:], "gene_id"], "gene_id", (1, 8)),  # and the byte-order mark
    ],
)
def test_duplicated_headers(genome_dir, tmp_path, capsys, header, field, columns):
    calls = write(tmp_path, "calls.tsv", tsv([row + ["0.5"] for row in call_rows()], header))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    line = (
        f"errorseq: error: {calls}: column '{field}': duplicated header: "
        f"columns {columns[0]} and {columns[1]} are both named '{field}'"
    )
    assert_refused(status, lines, out, line)
    with pytest.raises(InputError) as caught:
        check_input_files(
            {
                "calling": section_defaults("calling"),
                "train": section_defaults("train"),
                "calls": str(calls),
            }
        )
    assert f"errorseq: error: {caught.value}" == line


# ---- one call per site -------------------------------------------------------------------------
def repeat_first_row(change: dict) -> list[list[str]]:
    """The calls with row 1 repeated as row 6, changed in the given columns."""
    rows = call_rows()
    again = list(rows[0])
    for column, value in change.items():
        again[HEADER.index(column)] = value
    return rows[:5] + [again] + rows[5:]


@pytest.mark.parametrize(
    "change, field, message",
    [
        (
            {"pred_type": "FP"},
            "column 'pred_type' row 6",
            "site chr1:200 + donor is called FP here and TP in row 1: contradictory labels; keep one call per site",
        ),
        (
            {},
            "column 'position' row 6",
            "duplicate call: the same as row 1 in every column; keep one call per site",
        ),
        (
            {"gene_id": "g99"},
            "row 6",
            "site chr1:200 + donor is called again (first in row 1) with a different gene_id; keep one call per site",
        ),
        (
            {"score": "0.9"},
            "row 6",
            "site chr1:200 + donor is called again (first in row 1) with a different score; keep one call per site",
        ),
    ],
)
def test_a_site_called_twice(genome_dir, tmp_path, capsys, change, field, message):
    calls = write(tmp_path, "calls.tsv", tsv(repeat_first_row(change)))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert_refused(status, lines, out, f"errorseq: error: {calls}: {field}: {message}")


# ---- experiments that cannot give a meaningful result --------------------------------------------
def test_an_error_class_confined_to_one_gene(genome_dir, tmp_path, capsys):
    rows = [row for row in call_rows() if row[5] != "FP" or row[0] == "g3"]
    calls = write(tmp_path, "calls.tsv", tsv(rows))
    genes = pl.Series("gene_id", [row[0] for row in rows if row[5] in ("FP", "TP")])
    split_of_g3 = assign_gene_splits(genes, (0.8, 0.1, 0.1), 42).to_list()[genes.to_list().index("g3")]
    empty = next(split for split in SPLIT_NAMES if split != split_of_g3)
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert_refused(
        status,
        lines,
        out,
        (
            f"errorseq: error: {calls}: experiment 'fp_vs_tp' split '{empty}': no FP windows (error class): "
            "the FP windows lie in 1 gene(s) and each gene's windows go to one split; every split needs both "
            "classes (add calls from more genes, or change split.seed)"
        ),
    )


def test_a_tiny_experiment_is_kept_with_a_warning_in_the_log_and_the_notes(genome_dir, tmp_path, capsys):
    calls = write(tmp_path, "calls.tsv", tsv(call_rows()))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert status == 0 and out.exists()
    notes = read_notes(out)
    counts = notes["class_counts"]
    expected = [
        f"experiment 'fp_vs_tp': split '{split}' has {counts[split][role]} {name} windows ({role} class), "
        f"fewer than {MIN_CLASS_WINDOWS}: its metrics have wide intervals"
        for split in SPLIT_NAMES
        for role, name in (("error", "FP"), ("correct", "TP"))
        if counts[split][role] < MIN_CLASS_WINDOWS
    ]
    assert len(expected) == 4  # val and test hold ~3 windows of each class, train 24
    assert notes["warnings"] == expected
    assert [line for line in lines if "warning" in line] == [f"extract: warning: {text}" for text in expected]


def test_enough_windows_give_no_warning(genome_dir, tmp_path, capsys):
    rows = [
        [
            f"g{gene}",
            ("chr1", "chr2")[gene // 150],
            str(100 + 12 * (gene % 150) + 6 * i),
            "+",
            "donor",
            pred,
            "0.5",
        ]
        for gene in range(300)
        for i, pred in enumerate(("FP", "TP"))
    ]
    calls = write(tmp_path, "calls.tsv", tsv(rows))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert status == 0 and read_notes(out)["warnings"] == [] and not any("warning" in line for line in lines)


# ---- windows that are all N --------------------------------------------------------------------------
def n_block_rows(pred: str, count: int) -> list[list[str]]:
    return [[f"n{i}", "chr3", str(50 + 40 * i), "+", "donor", pred, "0.5"] for i in range(count)]


def test_windows_all_n_are_dropped_and_counted(genome_dir, tmp_path, capsys):
    calls = write(tmp_path, "calls.tsv", tsv(call_rows() + n_block_rows("FP", 3)))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert status == 0
    assert "extract: 3 windows without a single A, C, G or T (all N) dropped" in lines
    windows = pl.read_parquet(out)
    assert windows.height == 2 * N_GENES and not windows["gene_id"].str.starts_with("n").any()
    assert read_notes(out)["dropped"] == {"all_n_windows": 3}


def test_a_class_of_windows_all_n_is_refused(genome_dir, tmp_path, capsys):
    rows = [row for row in call_rows() if row[5] != "FP"] + n_block_rows("FP", 4)
    calls = write(tmp_path, "calls.tsv", tsv(rows))
    status, lines, out = extract_calls(genome_dir, calls, capsys)
    assert_refused(
        status,
        lines,
        out,
        (
            f"errorseq: error: {calls}: experiment 'fp_vs_tp': no FP windows "
            "(error class) left after dropping 4 windows that were all N"
        ),
    )


# ---- a FASTA's own faults are blamed on the FASTA ----------------------------------------------------
CR_ONLY = (
    "record 'chr1'",
    "lines end with a carriage return alone (old Mac line endings); convert them to "
    "newlines, e.g. tr '\\r' '\\n' < in.fa > out.fa",
)
EMPTY_RECORD = (
    "record 'chr2'",
    "empty record: no sequence lines after its header",
)  # chr2b holds chr2's bases


@pytest.mark.parametrize(
    "fasta, fault",
    [
        (genome_text().replace("\n", "\r"), CR_ONLY),
        (genome_text().replace(">chr2\n", ">chr2\n>chr2b\n"), EMPTY_RECORD),
    ],
)
def test_fasta_faults_name_the_fasta_record(tmp_path, capsys, fasta, fault):
    genome = write(tmp_path, "genome.fa", fasta)
    calls = write(tmp_path, "calls.tsv", tsv(call_rows()))
    line = f"errorseq: error: {genome}: {fault[0]}: {fault[1]}"
    status, lines, out = extract_calls(genome, calls, capsys)  # a FASTA parsed by extract itself
    assert_refused(status, lines, out, line)
    index = tmp_path / "index.tsv"
    status, lines = run_entry(
        index_genome,
        [
            *path_flags({"fasta": genome}, {"sequence": tmp_path / "s.npy", "index": index}),
            "--config",
            "{}",
        ],
        capsys,
    )
    assert_refused(status, lines, index, line)
    assert not (tmp_path / "s.npy").exists()


# ---- the preflight and extract read a header alike ---------------------------------------------------
def test_byte_order_mark_and_blanks_in_the_header_are_read_alike(genome_dir, tmp_path, capsys):
    plain = write(tmp_path, "plain.tsv", tsv(call_rows()))
    messy = write(
        tmp_path, "messy.tsv", tsv(call_rows(), ["\ufeffgene_id", " chrom", "position ", *HEADER[3:]])
    )
    check_input_files(
        {"calling": section_defaults("calling"), "train": section_defaults("train"), "calls": str(messy)}
    )  # accepted by the preflight ...
    status, _, out = extract_calls(genome_dir, messy, capsys)  # ... and by extract, as the plain table
    assert status == 0
    messy_windows = pl.read_parquet(out)
    out.rename(tmp_path / "messy.parquet")
    assert extract_calls(genome_dir, plain, capsys)[0] == 0
    assert messy_windows.equals(pl.read_parquet(out)) and "chrom" in messy_windows.columns


@pytest.mark.parametrize("case", ["reserved", "duplicated"])
def test_the_module_run_as_a_program_prints_the_same_line(genome_dir, tmp_path, case):
    header = HEADER + (["label"] if case == "reserved" else ["score "])
    calls = write(tmp_path, "calls.tsv", tsv([row + ["1"] for row in call_rows()], header))
    out = tmp_path / "w.parquet"
    result = run_extract_program(genome_dir, calls, out, CONFIG)
    field = "column 'label'" if case == "reserved" else "column 'score'"
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"errorseq: error: {calls}: {field}: ") and result.stderr.count("\n") == 1
    assert not out.exists()
