"""errorseq's attention for HF backbones: the same maths as transformers' sdpa, the dropout drawn
four decisions per random word on CPU in training, transformers' own code everywhere else."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from tests.hf_fixtures import save_remote_code_model, save_tiny_bert  # noqa: E402
from workflow_scripts.errors import InputError  # noqa: E402
from workflow_scripts.models import dropout_attention, hf_attention  # noqa: E402
from workflow_scripts.models.builtin import build_model  # noqa: E402
from workflow_scripts.tokenization.tokenizers import load_tokenizer  # noqa: E402

SEQUENCES = ["ACGTTGCAAGGT" * 6, "GATTACAGATTACA" * 4, "TTGACCAGT" * 9] * 4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    model_dir = save_tiny_bert(tmp_path_factory.mktemp("bert") / "tiny_bert", SEQUENCES)
    tokenizer = load_tokenizer({"kind": "hf", "path": str(model_dir)})
    ids, mask = tokenizer.encode_batch(SEQUENCES[:3], 128)  # rows of different lengths: padding
    return model_dir, tokenizer.vocab_size, ids, mask


def classifier(tiny, **model_cfg):
    model_dir, vocab_size, _, _ = tiny
    torch.manual_seed(0)
    return build_model({"backbone": "hf", "path": str(model_dir), **model_cfg}, vocab_size, 128)


def attention_name(model) -> str:
    return model.hf.config._attn_implementation


def test_auto_takes_errorseqs_attention_and_sdpa_or_eager_keep_transformers_own(tiny):
    assert attention_name(classifier(tiny)) == hf_attention.NAME
    assert attention_name(classifier(tiny, hf_attention="sdpa")) == "sdpa"
    assert attention_name(classifier(tiny, hf_attention="eager")) == "eager"


def test_out_of_training_it_is_transformers_sdpa(tiny):
    _, _, ids, mask = tiny
    ours, sdpa = classifier(tiny).eval(), classifier(tiny, hf_attention="sdpa").eval()
    with torch.no_grad():
        torch.testing.assert_close(ours(ids, mask), sdpa(ids, mask))


def test_training_without_dropout_matches_sdpa_in_value_and_gradient(tiny):
    _, _, ids, mask = tiny
    ours, sdpa = classifier(tiny).train(), classifier(tiny, hf_attention="sdpa").train()
    for model in (ours, sdpa):
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
    ours(ids, mask).sum().backward()
    sdpa(ids, mask).sum().backward()
    for (name, mine), theirs in zip(ours.named_parameters(), sdpa.parameters(), strict=True):
        torch.testing.assert_close(mine.grad, theirs.grad, msg=name)


def reference_attention(query, key, value, mask, keep, keep_scale):
    scores = query @ key.transpose(-1, -2) / query.shape[-1] ** 0.5
    scores = scores.masked_fill(~mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) * keep * keep_scale @ value).transpose(1, 2)


def test_the_fast_path_is_attention_with_its_dropout_mask_in_value_and_gradient():
    torch.manual_seed(1)
    query, key, value = (torch.randn(2, 3, 7, 8, requires_grad=True) for _ in range(3))
    mask = torch.ones(2, 1, 7, 7, dtype=torch.bool)
    mask[0, :, :, 5:] = False  # the first window is 5 tokens long
    module = torch.nn.Module().train()
    torch.manual_seed(2)
    ours, none = hf_attention.attention_forward(module, query, key, value, mask, dropout=0.25)
    torch.manual_seed(2)  # the same draws again
    keep, keep_scale = dropout_attention.dropout_keep(torch.Size((2, 3, 7, 7)), 0.25)
    reference = reference_attention(query, key, value, mask, keep, keep_scale)
    assert none is None and not keep.all() and keep_scale == 4 / 3
    torch.testing.assert_close(ours, reference)
    grads = torch.autograd.grad(ours.sum(), (query, key, value))
    for mine, theirs in zip(grads, torch.autograd.grad(reference.sum(), (query, key, value)), strict=True):
        torch.testing.assert_close(mine, theirs)


def test_training_on_cpu_with_dropout_takes_the_fast_path(tiny, monkeypatch):
    _, _, ids, mask = tiny
    drawn = []
    real = dropout_attention.dropout_keep
    monkeypatch.setattr(dropout_attention, "dropout_keep", lambda *a: drawn.append(a[0]) or real(*a))
    model = classifier(tiny).train()
    model(ids, mask).sum().backward()
    assert len(drawn) == 2  # one per layer of the tiny BERT
    model.eval()(ids, mask)
    assert len(drawn) == 2


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_drops_p_of_the_weights_from_every_lane_and_keeps_the_mean(p):
    torch.manual_seed(3)
    keep, keep_scale = dropout_attention.dropout_keep(torch.Size((4, 250_000)), p)
    dropped = ~keep
    assert abs(dropped.float().mean().item() - p) < 0.003
    lanes = dropped.view(-1, 4).float().mean(dim=0)  # each 16-bit lane of the random words
    assert (lanes - p).abs().max().item() < 0.005
    assert abs((keep * keep_scale).mean().item() - 1.0) < 0.005
    torch.manual_seed(3)
    assert torch.equal(keep, dropout_attention.dropout_keep(torch.Size((4, 250_000)), p)[0])


def test_a_model_whose_code_fixes_its_attention_keeps_it(tmp_path):
    model_dir = save_remote_code_model(tmp_path / "alibi_bert", SEQUENCES)
    vocab_size = load_tokenizer({"kind": "hf", "path": str(model_dir)}).vocab_size
    cfg = {"backbone": "hf", "path": str(model_dir), "trust_remote_code": True}
    model = build_model(cfg, vocab_size, 64)
    assert attention_name(model) != hf_attention.NAME
    with pytest.raises(InputError, match="model.hf_attention"):
        build_model({**cfg, "hf_attention": "sdpa"}, vocab_size, 64)
