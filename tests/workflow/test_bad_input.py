"""The bad-input corpus: every case fails with a non-zero exit, ONE line
`errorseq: error: <file>: <field>: <message>` naming the file and the field/row, and no output.

Most cases run the real `snakemake` in a temporary working directory the way a user meets them
(a bad config override or bad input files, then a plain `snakemake`): config mistakes and
unusable files stop while the workflow is parsed (config_checks + preflight), bad FASTA content
stops in index_genome, bad calls/sequences rows stop in extract, fp16 on CPU stops in the train
launcher before torchrun starts. Representatives of each kind run through Snakemake; the other
extract mistakes run the extract entry point in-process on the same files, and a few cases call
a module's CLI directly where Snakemake would have to train first. The Snakemake cases run two
at a time (they are mostly start-up time).
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from testkit.rule_commands import evaluate_args, train_path_args
from tests.train_fixtures import ROOT, make_training_inputs, subprocess_env
from tests.workflow_helpers import HANG_GUARD_S, snakemake
from workflow_scripts.command_line import path_flags
from workflow_scripts.data.fasta import load_fasta
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import extract

ERROR_PREFIX = "errorseq: error:"
CHROM_LENGTHS = {"chr1": 3000, "chr2": 2000}
HEADER = ["gene_id", "chrom", "position", "strand", "splice_type", "pred_type"]
BASE_CONFIG = {
    "genome": "genome.fa",
    "calls": "calls.tsv",
    "experiments": [{"name": "fp_vs_tp", "error_label": "FP", "correct_label": "TP"}],
    "model": {"d_model": 8, "n_layers": 1},
    "train": {"epochs": 1},
}


# ---- the inputs every case starts from -------------------------------------------------------
def genome_text() -> str:
    rng = np.random.default_rng(1)
    return "".join(
        f">{name}\n{''.join(rng.choice(list('ACGT'), length))}\n" for name, length in CHROM_LENGTHS.items()
    )


def call_rows() -> list[list[str]]:
    rows = []
    for gene in range(24):
        chrom = "chr1" if gene % 2 else "chr2"
        for i, pred in enumerate(("TP", "FP", "FN", "TN")):
            position = 300 + 50 * gene + 7 * i
            rows.append(
                [f"g{gene}", chrom, str(position), "+-"[gene % 2], ("donor", "acceptor")[i % 2], pred]
            )
    return rows


def tsv(rows: list[list[str]], header: list[str] = HEADER) -> str:
    return "\n".join("\t".join(row) for row in [header, *rows]) + "\n"


def sequences_tsv(rows: list[tuple[str, str, str]]) -> str:
    return tsv([list(r) for r in rows], ["id", "sequence", "label"])


GOOD_SEQUENCES = [(f"s{i}", "ACGTACGTAC" * 3, str(i % 2)) for i in range(12)]


@pytest.fixture(scope="module")
def genome_index(tmp_path_factory) -> Path:
    """results/genome/ of the good genome, made once and copied into each case."""
    folder = tmp_path_factory.mktemp("index")
    (folder / "genome.fa").write_text(genome_text())
    load_fasta(folder / "genome.fa").save_cached(folder / "results" / "genome")
    return folder / "results" / "genome"


# ---- a case -------------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    expect: tuple[str, ...]  # substrings of the one error line: the file, the field/row, the problem
    config: dict = field(default_factory=dict)  # merged over BASE_CONFIG
    files: dict = field(default_factory=dict)  # name -> text or bytes, over the good inputs
    indexed: bool = True  # copy the good genome index in (the case is not about the genome)
    gone: tuple[str, ...] = ()  # outputs that must not exist afterwards


def mutate(row_index: int, column: str, value: str) -> str:
    rows = call_rows()
    rows[row_index][HEADER.index(column)] = value
    return tsv(rows)


def without_pred(pred: str) -> str:
    return tsv([row for row in call_rows() if row[-1] != pred])


WINDOWS = ("results/fp_vs_tp/windows.parquet",)
INDEX = ("results/genome/sequence.npy", "results/genome/index.tsv")
TRAIN = ("results/fp_vs_tp/model/model.pt", "results/fp_vs_tp/model/model.json")
SEQUENCES = {"sequences": "seqs.tsv"}

SNAKEMAKE_CASES = [
    # config: stops while the workflow is parsed. Two representatives end to end; every config
    # mistake is tested on the validator directly (tests/unit/test_config_checks.py).
    Case("mistyped nested key", ("config: train.epoch: unknown key",), {"train": {"epoch": 2}}),
    Case(
        "shell metacharacters in an experiment name",
        ("config: experiments.0.name: 'a;touch x' does not match",),
        {"experiments": [{"name": "a;touch x", "error_label": "FP", "correct_label": "TP"}]},
    ),
    # input files: stops while the workflow is parsed (preflight). Two representatives end to
    # end; every unusable file (empty, not FASTA, corrupt gzip, missing calls or DeepSpeed JSON)
    # is tested on the pre-flight check directly (tests/unit/test_preflight.py).
    Case("genome missing", ("nope.fa: genome: file not found",), {"genome": "nope.fa"}),
    Case(
        "calls missing a column",
        ("calls.tsv: column 'strand': required column missing",),
        files={"calls.tsv": tsv([r[:3] + r[4:] for r in call_rows()], HEADER[:3] + HEADER[4:])},
    ),
    # FASTA content: stops in index_genome
    Case(
        "gzip that is corrupt (truncated)",
        ("genome.fa.gz: FASTA: corrupt gzip data",),
        {"genome": "genome.fa.gz"},
        files={"genome.fa.gz": gzip.compress(genome_text().encode())[:-300]},
        indexed=False,
        gone=INDEX,
    ),
    Case(
        "FASTA characters outside ACGTN",
        ("genome.fa: chromosome 'chr2' position 5: invalid character 'R'",),
        files={"genome.fa": ">chr1\nACGT\n>chr2\nACGTRACGT\n"},
        indexed=False,
        gone=INDEX,
    ),
    # calls rows: stops in extract. Representatives end to end (a row, a hint, a class); the
    # other extract mistakes run on the entry point directly (EXTRACT_CASES below).
    Case(
        "bad strand",
        ("calls.tsv: column 'strand' row 6: strand must be '+' or '-'",),
        files={"calls.tsv": mutate(5, "strand", "*")},
        gone=WINDOWS,
    ),
    Case(
        "chromosome '2' where the FASTA says 'chr2'",
        ("calls.tsv: column 'chrom' row 1:", "did you mean 'chr2'?"),
        files={"calls.tsv": mutate(0, "chrom", "2")},
        gone=WINDOWS,
    ),
    Case(
        "experiment whose error class has no rows",
        ("calls.tsv: experiment 'fp_vs_tp': no FP rows (error class)",),
        files={"calls.tsv": without_pred("FP")},
        gone=WINDOWS,
    ),
    # a sequences table: stops in extract
    Case(
        "sequences with an empty sequence",
        ("seqs.tsv: column 'sequence' row 3: empty sequence",),
        SEQUENCES,
        files={"seqs.tsv": sequences_tsv(GOOD_SEQUENCES[:2] + [("s2", "", "1")] + GOOD_SEQUENCES[3:])},
        gone=WINDOWS,
    ),
    # train: stops in the launcher, before torchrun starts its ranks
    Case(
        "fp16 where unsupported (CPU)",
        ("config: train.precision: fp16 needs a CUDA GPU",),
        {"train": {"epochs": 1, "precision": "fp16"}},
        gone=TRAIN,
    ),
]


# The rest of the extract mistakes: the same files, the extract entry point in this process (what
# the rule runs, through run_cli as `python -m` runs it); Snakemake's side is the cases above.
EXTRACT_CASES = [
    Case(
        "position 0",
        ("calls.tsv: column 'position' row 3: position outside the chromosome",),
        files={"calls.tsv": mutate(2, "position", "0")},
        gone=WINDOWS,
    ),
    Case(
        "position past the chromosome end",
        ("calls.tsv: column 'position' row 4: position outside the chromosome",),
        files={"calls.tsv": mutate(3, "position", "2001")},
        gone=WINDOWS,
    ),  # chr2 has 2000 nt
    Case(
        "chromosome absent from the FASTA",
        ("calls.tsv: column 'chrom' row 1: chromosome 'chrUn' not in genome", "genome has chr1, chr2"),
        files={"calls.tsv": mutate(0, "chrom", "chrUn")},
        gone=WINDOWS,
    ),
    Case(
        "duplicate calls",
        ("calls.tsv: column 'position' row 2: duplicate call",),
        files={"calls.tsv": tsv([call_rows()[0]] + call_rows())},
        gone=WINDOWS,
    ),
    Case(
        "calls header only",
        ("calls.tsv: rows: table has no data rows",),
        files={"calls.tsv": tsv([])},
        gone=WINDOWS,
    ),
    Case(
        "experiment whose correct class has no rows",
        ("calls.tsv: experiment 'fp_vs_tp': no TP rows (correct class)",),
        files={"calls.tsv": without_pred("TP")},
        gone=WINDOWS,
    ),
    Case(
        "sequences with characters outside ACGTN",
        ("seqs.tsv: column 'sequence' row 2: sequence has characters",),
        SEQUENCES,
        files={"seqs.tsv": sequences_tsv(GOOD_SEQUENCES[:1] + [("s1", "ACGU", "0")] + GOOD_SEQUENCES[2:])},
        gone=WINDOWS,
    ),
    Case(
        "sequences with duplicate ids",
        ("seqs.tsv: column 'id' row 4: duplicate id",),
        SEQUENCES,
        files={"seqs.tsv": sequences_tsv(GOOD_SEQUENCES[:3] + [("s0", "ACGT", "1")] + GOOD_SEQUENCES[4:])},
        gone=WINDOWS,
    ),
]


def prepare(case: Case, workdir: Path, genome_index: Path) -> set[str]:
    workdir.mkdir(parents=True)
    (workdir / "genome.fa").write_text(genome_text())
    (workdir / "calls.tsv").write_text(tsv(call_rows()))
    (workdir / "seqs.tsv").write_text(sequences_tsv(GOOD_SEQUENCES))
    for name, content in case.files.items():
        path = workdir / name
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    if case.indexed:
        shutil.copytree(
            genome_index, workdir / "results" / "genome", copy_function=shutil.copy
        )  # newer than the FASTA
    config = {**BASE_CONFIG, **case.config, "train": {**BASE_CONFIG["train"], **case.config.get("train", {})}}
    (workdir / "case.yaml").write_text(yaml.safe_dump(config))
    return files_under(workdir / "results")


def files_under(folder: Path) -> set[str]:
    return (
        {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()
    )


def run_case(case: Case, workdir: Path, genome_index: Path) -> dict:
    before = prepare(case, workdir, genome_index)
    began = time.monotonic()
    result = snakemake(workdir, "--configfile", str(workdir / "case.yaml"), timeout=300)
    seconds = time.monotonic() - began
    logs = {
        str(p.relative_to(workdir)): p.read_text(errors="replace") for p in (workdir / "logs").rglob("*.log")
    }
    return {
        "result": result,
        "before": before,
        "after": files_under(workdir / "results"),
        "logs": logs,
        "seconds": seconds,
    }


@pytest.fixture(scope="module")
def snakemake_runs(genome_index, tmp_path_factory):
    """Start every Snakemake case, two at a time; each test waits for its own."""
    root = tmp_path_factory.mktemp("cases")
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {
        case.name: pool.submit(run_case, case, root / f"case{i}", genome_index)
        for i, case in enumerate(SNAKEMAKE_CASES)
    }
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(ERROR_PREFIX)]


def assert_one_clear_line(console: str, expect: tuple[str, ...], logs: dict[str, str] | None = None) -> str:
    shown = sorted(set(error_lines(console)))
    assert len(shown) == 1, f"want one error line, got {shown}\n{console[-3000:]}"
    line = shown[0]
    for part in expect:
        assert part in line, f"{part!r} not in {line!r}"
    for name, text in (logs or {}).items():
        assert set(error_lines(text)) <= {line}, f"{name} has other error lines: {error_lines(text)}"
    assert "Traceback" not in console and all("Traceback" not in t for t in (logs or {}).values())
    return line


@pytest.mark.parametrize("case", SNAKEMAKE_CASES, ids=[c.name for c in SNAKEMAKE_CASES])
def test_bad_input_fails_with_one_line_and_no_output(case, snakemake_runs):
    if "CPU" in case.name and torch.cuda.is_available():
        pytest.skip("fp16 is supported on this machine's GPU")
    run = snakemake_runs[case.name].result()
    result = run["result"]
    assert result.returncode != 0
    line = assert_one_clear_line(result.stdout + result.stderr, case.expect, run["logs"])
    print(f"\n{run['seconds']:5.1f} s  {case.name}: {line}")
    # what the steps before the failing one may write: index_genome (its record.json is new to a
    # copied run, so it reruns), extract and bucket
    assert run["after"] <= run["before"] | {
        "genome/record.json",
        "genome/sequence.npy",
        "genome/index.tsv",
        "benchmarks/index_genome.tsv",
        "fp_vs_tp/windows.parquet",
        "fp_vs_tp/buckets/manifest.parquet",
        "fp_vs_tp/buckets/summary.json",
    } | {f"benchmarks/fp_vs_tp/{rule}.tsv" for rule in ("extract", "bucket")}
    for output in case.gone:
        assert not (Path(result.args[result.args.index("--directory") + 1]) / output).exists(), output
    leftovers = [p for p in run["after"] if p.endswith((".tmp", ".partial")) or "/." in f"/{p}"]
    assert not leftovers, leftovers


def extract_args(case: Case, workdir: Path) -> list[str]:
    """The extract rule's arguments for a prepared case, as the rule would give them."""
    experiment = {"experiment": BASE_CONFIG["experiments"][0]}
    outputs = {"windows": workdir / WINDOWS[0]}
    if "sequences" in case.config:
        paths = path_flags({"sequences": workdir / case.config["sequences"]}, outputs)
    else:
        paths = [
            "--genome",
            str(workdir / "results" / "genome"),
            *path_flags({"calls": workdir / "calls.tsv"}, outputs),
        ]
    return [*paths, "--config", json.dumps(experiment)]


@pytest.mark.parametrize("case", EXTRACT_CASES, ids=[c.name for c in EXTRACT_CASES])
def test_bad_rows_fail_in_extract_with_one_line_and_no_output(case, genome_index, tmp_path, capsys):
    workdir = tmp_path / "work"
    before = prepare(case, workdir, genome_index)
    with pytest.raises(SystemExit) as stop:
        run_cli(extract.main, extract_args(case, workdir))
    assert stop.value.code == 2
    assert_one_clear_line(capsys.readouterr().err, case.expect)
    assert files_under(workdir / "results") == before
    assert not [p for p in (workdir / "results").rglob("*") if p.name.startswith(".")]


# ---- cases where Snakemake would have to train first: the module's CLI directly -----------------
def run_module(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


@pytest.fixture(scope="module")
def training_inputs(tmp_path_factory):
    return make_training_inputs(tmp_path_factory.mktemp("train"), n=60)


def evaluate_fp_vs_tp_args(inputs: dict, model: Path, out: Path) -> list[str]:
    """The evaluate rule on `model` and its .json twin, its outputs under `out`."""
    model_config = model.with_suffix(".json")
    return evaluate_args(
        inputs, model, model_config, "fp_vs_tp", out / "predictions.parquet", out / "metrics.json"
    )


def test_a_model_path_that_does_not_exist(training_inputs, tmp_path):
    result = run_module(evaluate_fp_vs_tp_args(training_inputs, tmp_path / "model.pt", tmp_path), tmp_path)
    assert result.returncode == 2
    assert_one_clear_line(result.stderr, (f"{tmp_path / 'model.pt'}: model: file does not exist",))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_model_file_that_is_not_a_state_dict(training_inputs, tmp_path):
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "model.json").write_text(
        json.dumps(
            {
                "model": {"arch": "cnn", "d_model": 8, "n_layers": 1},
                "tokenizer": {"kind": "nucleotide", "k": 1},
                "max_tokens": 128,
            }
        )
    )
    result = run_module(evaluate_fp_vs_tp_args(training_inputs, tmp_path / "model.pt", tmp_path), tmp_path)
    assert result.returncode == 2
    assert_one_clear_line(result.stderr, ("model.pt: model: not a readable PyTorch file",))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.json", "model.pt"]


GPU_PRETEND = (
    "import sys, torch; torch.cuda.is_available = lambda: True; torch.cuda.device_count = lambda: {visible}; "
    "from workflow_scripts.errors import run_cli; from workflow_scripts.rules.train import main; "
    "run_cli(main, sys.argv[1:])"
)


def train_args(inputs: dict, out: Path, train: dict | None = None) -> list[str]:
    """The train rule's arguments (paths, --config) without the resources."""
    return [
        *train_path_args(inputs, out, "fp_vs_tp", model_name="m"),
        "--config",
        json.dumps({"train": train or {}}),
    ]


def test_more_gpus_asked_than_present(training_inputs, tmp_path):
    """The launcher compares resources.gpu with the visible CUDA devices. A CPU-only torch cannot
    see GPUs at all: there `gpu > 0` runs CPU ranks with a warning (documented), so this test
    stands in a machine with one visible GPU."""
    command = ["-c", GPU_PRETEND.format(visible=1), "--gpus", "2", *train_args(training_inputs, tmp_path)]
    result = run_module(command, ROOT)
    assert result.returncode == 2
    assert_one_clear_line(result.stderr, ("resources: gpu: asks for 2 GPUs but only 1 are visible",))
    assert "torch.distributed.run" not in result.stderr and not list(tmp_path.iterdir())


def test_fp16_with_fsdp_stops_in_the_launcher_on_any_machine(training_inputs, tmp_path):
    train = {"strategy": "fsdp", "precision": "fp16"}
    result = run_module(
        [
            "-m",
            "workflow_scripts.rules.train",
            "--cpu-procs",
            "2",
            *train_args(training_inputs, tmp_path, train),
        ],
        ROOT,
    )
    assert result.returncode == 2
    assert_one_clear_line(result.stderr, ("config: train.precision: fsdp trains in fp32 or bf16",))
    assert "torch.distributed.run" not in result.stderr and not list(tmp_path.iterdir())
