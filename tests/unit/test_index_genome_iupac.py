"""index_genome.iupac: IUPAC codes are refused by default, or turned into N and counted."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workflow_scripts.command_line import path_flags
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import run_cli
from workflow_scripts.rules import index_genome

FASTA = ">chrA\nACGTKMRS\nacgtwy\n>chrB\nNNACyT\n"


def run_index(tmp_path, config: dict):
    fasta = tmp_path / "iupac.fa"
    fasta.write_text(FASTA)
    out = tmp_path / "index"
    run_cli(
        index_genome.main,
        [
            *path_flags({"fasta": fasta}, {"sequence": out / "sequence.npy", "index": out / "index.tsv"}),
            "--config",
            json.dumps(config),
        ],
    )
    return fasta, out


def test_to_n_turns_codes_into_n_and_counts_them(tmp_path, capsys):
    _, out = run_index(tmp_path, {"index_genome": {"iupac": "to_n"}})
    log = capsys.readouterr().err
    assert "index_genome: 7 IUPAC codes turned into N (K 1, M 1, R 1, S 1, W 1, Y 2)" in log
    genome = Genome.open_cached(out)
    assert genome.chromosome("chrA") == "ACGTNNNNACGTNN"
    assert genome.chromosome("chrB") == "NNACNT"
    assert int(np.sum(genome.sequence == ord("N"))) == 7 + 2


@pytest.mark.parametrize("config", [{}, {"index_genome": {"iupac": "refuse"}}], ids=["default", "refuse"])
def test_refuse_is_the_default_and_names_the_first_code(tmp_path, capsys, config):
    with pytest.raises(SystemExit) as exit_info:
        run_index(tmp_path, config)
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"errorseq: error: {tmp_path / 'iupac.fa'}: chromosome 'chrA' position 5: invalid character 'K'; "
        "only A, C, G, T, N are allowed (to turn IUPAC codes into N, set index_genome: {iupac: to_n})"
    ]
