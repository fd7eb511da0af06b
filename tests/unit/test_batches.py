"""Batches cut from windows tokenised once (training/batches.BatchCollator, tokenization/packed.py)
are byte for byte the batches of tokenising each batch's strings (the tokenizers' encode_batch)."""

import numpy as np
import pytest
import torch

from workflow_scripts.tokenization import packed
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer
from workflow_scripts.training.batches import BatchCollator, SplitData, pin_batches_for


def centre_crop(sequence: str, max_nucleotides: int) -> str:
    """The reference: a window's centre max_nucleotides bases, as the collator cropped strings
    before it tokenised once."""
    excess = max(len(sequence) - max_nucleotides, 0)
    return sequence[excess // 2 : excess // 2 + max_nucleotides]


def random_sequences(rng: np.random.Generator, count: int, longest: int) -> list[str]:
    """Mixed lengths: empty, shorter than any k, around the crop, far beyond it; N included."""
    lengths = np.concatenate([[0, 1, 2, 3, 5], rng.integers(0, longest, count - 5)])
    return ["".join(rng.choice(list("ACGTN"), int(n), p=[0.24, 0.24, 0.24, 0.24, 0.04])) for n in lengths]


def split_of(sequences: list[str]) -> SplitData:
    n = len(sequences)
    lengths = np.array([len(s) for s in sequences], dtype=np.int64)
    return SplitData(
        ids=[str(i) for i in range(n)],
        gene_ids=[""] * n,
        sequences=sequences,
        labels=np.arange(n, dtype=np.int64) % 2,
        lengths=lengths,
        token_lengths=lengths + 1,
        buckets=np.zeros(n, dtype=np.int64),
        features=np.arange(2 * n, dtype=np.float32).reshape(n, 2),
    )


def batch_index_lists(rng: np.random.Generator, n: int) -> list[list[int]]:
    return [
        list(range(n)),  # every window at once (a chunk boundary inside)
        rng.permutation(n)[:17].tolist(),  # unsorted
        [3, 3, 0],  # repeated (validation's filler batches)
        [1],
        [],
    ]


def assert_same(new: tuple[torch.Tensor, torch.Tensor], old: tuple[torch.Tensor, torch.Tensor]) -> None:
    for made, expected in zip(new, old):
        assert made.dtype == expected.dtype and made.shape == expected.shape
        assert torch.equal(made, expected)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("max_tokens", [2, 7, 40])
def test_nucleotide_batches_equal_tokenising_each_batch(monkeypatch, k, max_tokens):
    monkeypatch.setattr(packed, "CHUNK_WINDOWS", 23)  # several chunks
    rng = np.random.default_rng(k * 100 + max_tokens)
    sequences = random_sequences(rng, 90, 80)
    tokenizer = NucleotideTokenizer(k)
    collator = BatchCollator(split_of(sequences), tokenizer, max_tokens)
    for indices in batch_index_lists(rng, len(sequences)):
        cropped = [centre_crop(sequences[i], collator.max_nucleotides) for i in indices]
        assert_same(collator.encode(indices), tokenizer.encode_batch(cropped))
        batch = collator(indices)
        assert torch.equal(batch["labels"], torch.as_tensor(collator.data.labels[indices], dtype=torch.long))
        assert torch.equal(batch["index"], torch.as_tensor(indices, dtype=torch.long))
        assert torch.equal(batch["features"], torch.as_tensor(collator.data.features[indices]))


def test_windows_are_stored_in_the_smallest_integer_type():
    sequences = ["ACGTN" * 9, "GATTACA"]
    assert BatchCollator(split_of(sequences), NucleotideTokenizer(3), 64).tokens.flat.dtype == np.uint8
    assert BatchCollator(split_of(sequences), NucleotideTokenizer(4), 64).tokens.flat.dtype == np.uint16


def test_a_character_outside_acgtn_is_named_when_the_split_is_tokenised():
    with pytest.raises(ValueError, match="invalid character 'X'"):
        BatchCollator(split_of(["ACGT", "ACXG"]), NucleotideTokenizer(1), 64)


def test_batches_are_page_locked_only_for_a_cuda_device():
    collator = BatchCollator(split_of(["ACGT", "ACG"]), NucleotideTokenizer(1), 64)
    pin_batches_for(collator, torch.device("cpu"))
    assert not collator.pin_memory and not collator([0, 1])["ids"].is_pinned()
    pin_batches_for(collator, torch.device("cuda"))
    assert collator.pin_memory == torch.cuda.is_available()
    if torch.cuda.is_available():
        assert all(tensor.is_pinned() for tensor in collator([0, 1]).values())


@pytest.fixture(scope="module")
def bpe_tokenizer(tmp_path_factory):
    pytest.importorskip("transformers")
    from workflow_scripts.models.hf import HFTokenizer
    from workflow_scripts.tokenization.bpe import save_hf_tokenizer, train_bpe

    rng = np.random.default_rng(0)
    corpus = random_sequences(rng, 300, 400)
    directory = tmp_path_factory.mktemp("bpe")
    save_hf_tokenizer(train_bpe(corpus, vocab_size=60, min_frequency=2), directory)
    return HFTokenizer(str(directory))


@pytest.mark.parametrize("max_tokens", [2, 3, 9, 500])
def test_hugging_face_batches_equal_tokenising_each_batch(monkeypatch, bpe_tokenizer, max_tokens):
    monkeypatch.setattr(packed, "CHUNK_WINDOWS", 23)
    rng = np.random.default_rng(max_tokens)
    sequences = random_sequences(rng, 90, 200)
    collator = BatchCollator(split_of(sequences), bpe_tokenizer, max_tokens)
    assert collator.tokens.flat.dtype == np.uint8
    for indices in batch_index_lists(rng, len(sequences)):
        if not indices:  # the tokenizer itself refuses an empty list
            assert_same(collator.encode(indices), (torch.zeros(0, 0).long(), torch.zeros(0, 0).bool()))
            continue
        expected = bpe_tokenizer.encode_batch([sequences[i] for i in indices], max_tokens)
        assert_same(collator.encode(indices), expected)
