"""Which unlabeled windows `pretrain` learns from (pretrain.source), without training."""

import json

import numpy as np
import pytest

from tests.train_fixtures import make_training_inputs
from workflow_scripts.config.types import complete_typed_section
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import load_tokenizer
from workflow_scripts.training.pretrain_data import unlabeled_data


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pretrain_data")
    paths = make_training_inputs(directory)
    rng = np.random.default_rng(3)
    chromosomes = {"chr1": 5000, "chr2": 300, "chrUn_gap": 4000}  # the last is all N
    sequence = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, sum(chromosomes.values()))].copy()
    sequence[5300:] = ord("N")
    sequence[1000:2000] = ord("N")  # and a gap inside chr1
    Genome(list(chromosomes), np.array(list(chromosomes.values())), sequence).save_cached(
        directory / "genome"
    )
    return paths, directory / "genome"


def windows_for(inputs, source: str, genome_windows: int = 50):
    paths, genome_dir = inputs
    summary = json.loads(paths["summary"].read_text())
    pretrain = complete_typed_section("pretrain", {"source": source, "genome_windows": genome_windows})
    return unlabeled_data(
        str(paths["windows"]),
        str(paths["manifest"]),
        pretrain,
        str(genome_dir),
        summary,
        load_tokenizer(summary["tokenizer"]),
        seed=0,
    )


def test_train_windows_and_all_windows_sources(inputs):
    train_only, val = windows_for(inputs, "train_windows")
    everything, same_val = windows_for(inputs, "all_windows")
    assert len(train_only) == 192 and len(val) == 24 and len(everything) == 240
    assert set(train_only.ids) < set(everything.ids) and set(val.ids) <= set(everything.ids)
    assert same_val.ids == val.ids


def test_genome_source_draws_random_windows_with_train_lengths(inputs):
    train_only, _ = windows_for(inputs, "train_windows")
    genome, _ = windows_for(inputs, "genome", genome_windows=50)
    assert len(genome) == 50 and not set(genome.ids) & set(train_only.ids)
    assert set(genome.lengths) <= set(train_only.lengths)
    assert all(len(seq) == length for seq, length in zip(genome.sequences, genome.lengths))
    assert all(seq.count("N") <= 0.1 * len(seq) for seq in genome.sequences)  # gaps are drawn again
    assert (genome.token_lengths == genome.lengths + 1).all()  # nucleotide tokens + CLS
    assert len(set(genome.sequences)) == 50
    again, _ = windows_for(inputs, "genome", genome_windows=50)
    assert again.sequences == genome.sequences  # seeded


def test_a_genome_of_gaps_is_one_clear_error(inputs, tmp_path):
    paths, _ = inputs
    Genome(["chrN"], np.array([3000]), np.full(3000, ord("N"), np.uint8)).save_cached(tmp_path)
    with pytest.raises(InputError, match="pretrain.source: found only 0 of 10 random windows"):
        windows_for((paths, tmp_path), "genome", genome_windows=10)


def test_genome_source_without_a_genome_is_one_clear_error(inputs):
    paths, _ = inputs
    summary = json.loads(paths["summary"].read_text())
    with pytest.raises(InputError, match="pretrain.source: genome needs the genome index"):
        unlabeled_data(
            str(paths["windows"]),
            str(paths["manifest"]),
            complete_typed_section("pretrain", {"source": "genome"}),
            None,
            summary,
            load_tokenizer(summary["tokenizer"]),
            seed=0,
        )
