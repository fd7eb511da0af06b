import numpy as np
import pytest
import torch

from workflow_scripts.tokenization.tokenizers import CLS_ID, PAD_ID, NucleotideTokenizer


def test_k1_ids_are_cls_then_bases():
    tokenizer = NucleotideTokenizer(k=1)
    assert tokenizer.vocab_size == 7
    np.testing.assert_array_equal(tokenizer.encode("ACGTN"), [1, 2, 3, 4, 5, 6])
    assert tokenizer.encode("ACGTN").dtype == np.int64


def test_k3_ids_are_overlapping_base5_kmers():
    tokenizer = NucleotideTokenizer(k=3)
    assert tokenizer.vocab_size == 2 + 125
    # ACG = 0*25 + 1*5 + 2 = 7; CGT = 25 + 10 + 3 = 38; GTN = 50 + 15 + 4 = 69
    np.testing.assert_array_equal(tokenizer.encode("ACGTN"), [CLS_ID, 9, 40, 71])
    # NNN is the last k-mer: 4*25 + 4*5 + 4 = 124
    np.testing.assert_array_equal(tokenizer.encode("NNN"), [CLS_ID, 2 + 124])
    assert tokenizer.encode("AAAA").tolist() == [CLS_ID, 2, 2]


def test_sequence_shorter_than_k_is_filled_with_n():
    tokenizer = NucleotideTokenizer(k=3)
    # "A" -> "ANN" = 0 + 4*5 + 4 = 24
    assert tokenizer.encode("A").tolist() == [CLS_ID, 26]
    assert tokenizer.encode("").tolist() == [CLS_ID, 2 + 124]


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_token_lengths_match_encoded_lengths(k):
    tokenizer = NucleotideTokenizer(k=k)
    rng = np.random.default_rng(k)
    lengths = np.array([0, 1, 2, 5, 17, 100])
    seqs = ["".join(rng.choice(list("ACGTN"), size=n)) for n in lengths]
    expected = [len(tokenizer.encode(seq)) for seq in seqs]
    np.testing.assert_array_equal(tokenizer.token_lengths(lengths), expected)


def test_token_lengths_formula():
    tokenizer = NucleotideTokenizer(k=3)
    np.testing.assert_array_equal(tokenizer.token_lengths(np.array([1, 3, 4, 401])), [2, 2, 3, 400])


def test_n_is_a_real_token_never_pad():
    tokenizer = NucleotideTokenizer(k=1)
    ids, mask = tokenizer.encode_batch(["NNNN"])
    assert PAD_ID not in ids.tolist()[0]
    assert mask.all()


@pytest.mark.parametrize("bad, char", [("ACGX", "X"), ("acgt", "a"), ("AC GT", " "), ("ACé", "é")])
def test_invalid_character_is_named(bad, char):
    with pytest.raises(ValueError, match=repr(char)):
        NucleotideTokenizer(k=2).encode(bad)


def test_encode_batch_pads_to_batch_max_with_mask():
    tokenizer = NucleotideTokenizer(k=1)
    ids, mask = tokenizer.encode_batch(["AC", "GTNA", ""])
    assert ids.dtype == torch.int64 and mask.dtype == torch.bool
    assert ids.tolist() == [[1, 2, 3, 0, 0], [1, 4, 5, 6, 2], [1, 6, 0, 0, 0]]
    assert mask.tolist() == [
        [True, True, True, False, False],
        [True] * 5,
        [True, True, False, False, False],
    ]


def test_encode_batch_truncates_to_max_length():
    ids, mask = NucleotideTokenizer(k=1).encode_batch(["ACGT", "A"], max_length=3)
    assert ids.tolist() == [[1, 2, 3], [1, 2, 0]]
    assert mask.sum().item() == 5


def test_config_round_trip():
    tokenizer = NucleotideTokenizer(k=4)
    assert tokenizer.to_dict() == {"kind": "nucleotide", "k": 4}
    restored = NucleotideTokenizer.from_dict(tokenizer.to_dict())
    assert restored.k == 4 and restored.vocab_size == tokenizer.vocab_size


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k_rejected(k):
    with pytest.raises(ValueError):
        NucleotideTokenizer(k=k)


def test_from_dict_rejects_other_kind():
    with pytest.raises(ValueError):
        NucleotideTokenizer.from_dict({"kind": "bpe", "k": 1})
