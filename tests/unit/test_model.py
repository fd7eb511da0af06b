import pytest
import torch

from workflow_scripts.config.sections import section_defaults
from workflow_scripts.errors import InputError
from workflow_scripts.models.builtin import build_model, count_parameters
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer

TOKENIZER = NucleotideTokenizer(k=1)


def encode(seqs):
    return TOKENIZER.encode_batch(seqs)


@pytest.mark.parametrize("arch", ["cnn", "transformer"])
def test_padding_does_not_change_the_prediction(arch):
    torch.manual_seed(0)
    model = build_model({"arch": arch, "d_model": 16, "n_layers": 2, "n_heads": 2}, TOKENIZER.vocab_size, 64)
    model.eval()
    short, long = "ACGTNACGTA", "ACGTACGTACGTACGTACGTAAAC"
    ids_alone, mask_alone = encode([short])
    ids_batch, mask_batch = encode([short, long])
    assert ids_batch.shape[1] > ids_alone.shape[1]
    with torch.no_grad():
        alone = model(ids_alone, mask_alone)
        batched = model(ids_batch, mask_batch)
    assert alone.shape == (1, 2)
    torch.testing.assert_close(alone[0], batched[0], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("arch", ["cnn", "transformer"])
def test_gradient_checkpointing_gives_the_same_gradients(arch):
    cfg = {"arch": arch, "d_model": 16, "n_layers": 2, "n_heads": 2, "dropout": 0.0}
    ids, mask = encode(["ACGTACGTAC", "GGGTTTAAACCC"])
    grads = []
    for checkpointing in (False, True):
        torch.manual_seed(0)
        model = build_model({**cfg, "gradient_checkpointing": checkpointing}, TOKENIZER.vocab_size, 64)
        model(ids, mask).sum().backward()
        grads.append(model.embed.weight.grad.clone())
    torch.testing.assert_close(grads[0], grads[1])


def test_unknown_arch_is_rejected():
    with pytest.raises(InputError, match="config: model.arch: 'lstm' is not one of"):
        build_model({"arch": "lstm"}, TOKENIZER.vocab_size, 64)
    with pytest.raises(InputError, match="config: model.n_heads: must divide model.d_model"):
        build_model({"arch": "transformer", "d_model": 30, "n_heads": 4}, TOKENIZER.vocab_size, 64)


def test_missing_keys_take_the_schema_defaults():
    defaults = section_defaults("model")
    model = build_model({}, TOKENIZER.vocab_size, 64)
    assert model.embed.embedding_dim == defaults["d_model"] and len(model.blocks) == defaults["n_layers"]
    assert model.arch == defaults["arch"]


def test_size_follows_the_config():
    small = build_model({"d_model": 16, "n_layers": 1}, TOKENIZER.vocab_size, 64)
    large = build_model({"d_model": 32, "n_layers": 3}, TOKENIZER.vocab_size, 64)
    assert count_parameters(large) > 3 * count_parameters(small)


def test_the_typed_section_and_its_dict_build_the_same_model():
    """The library reads the typed model: section; a plain dict (model.json's) is typed first."""
    from workflow_scripts.config.types import ModelSection, complete_typed_section

    values = {"arch": "transformer", "d_model": 16, "n_layers": 2, "n_heads": 2, "dropout": 0.0}
    typed = complete_typed_section("model", values)
    assert isinstance(typed, ModelSection)
    torch.manual_seed(0)
    from_typed = build_model(typed, TOKENIZER.vocab_size, 64).state_dict()
    torch.manual_seed(0)
    from_dict = build_model(typed.to_completed(), TOKENIZER.vocab_size, 64).state_dict()
    assert from_typed.keys() == from_dict.keys()
    assert all(torch.equal(from_typed[key], from_dict[key]) for key in from_typed)
