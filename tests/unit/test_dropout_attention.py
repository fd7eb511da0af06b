"""The built-in transformer's blocks in CPU training: nn.TransformerEncoderLayer's maths on the
same weights, the attention's dropout drawn four decisions per random word."""

import torch

from workflow_scripts.models import dropout_attention
from workflow_scripts.models.builtin import TransformerBlock, build_model


def block_and_batch(dropout: float = 0.1):
    torch.manual_seed(0)
    block = TransformerBlock(d_model=16, n_heads=4, ffn_multiplier=2, dropout=dropout).train()
    x = torch.randn(3, 9, 16, requires_grad=True)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:] = False  # the second window is 6 tokens long
    return block, x, mask


def test_without_dropout_it_is_the_layers_own_forward_in_value_and_gradient():
    block, x, mask = block_and_batch(dropout=0.0)
    block.layer.self_attn.dropout = 0.0
    ours = block.forward_cheap_dropout(x, mask)
    theirs = block.layer(x, src_key_padding_mask=~mask)
    torch.testing.assert_close(ours, theirs)
    grads = torch.autograd.grad(ours.sum(), [x, *block.parameters()])
    for mine, reference in zip(
        grads, torch.autograd.grad(theirs.sum(), [x, *block.parameters()]), strict=True
    ):
        torch.testing.assert_close(mine, reference)


def test_with_dropout_the_attention_is_the_layers_with_that_dropout_mask():
    block, x, mask = block_and_batch()
    for module in (block.layer.dropout, block.layer.dropout1, block.layer.dropout2):
        module.p = 0.0  # only the attention's dropout left
    torch.manual_seed(5)
    ours = block.forward_cheap_dropout(x, mask)
    torch.manual_seed(5)
    keep, keep_scale = dropout_attention.dropout_keep(torch.Size((3, 4, 9, 9)), 0.1)
    attention = block.layer.self_attn
    query, key, value = (
        part.view(3, 9, 4, 4).transpose(1, 2)
        for part in torch.nn.functional.linear(
            block.layer.norm1(x), attention.in_proj_weight, attention.in_proj_bias
        ).chunk(3, -1)
    )
    scores = (query @ key.transpose(-1, -2) / 2.0).masked_fill(~mask[:, None, None, :], float("-inf"))
    mixed = (torch.softmax(scores, -1) * keep * keep_scale @ value).transpose(1, 2).reshape(3, 9, 16)
    after_attention = x + attention.out_proj(mixed)
    layer = block.layer
    reference = after_attention + layer.linear2(layer.activation(layer.linear1(layer.norm2(after_attention))))
    assert not keep.all()
    torch.testing.assert_close(ours, reference)


def test_cpu_training_with_dropout_takes_it_and_evaluation_does_not(monkeypatch):
    drawn = []
    real = dropout_attention.dropout_keep
    monkeypatch.setattr(dropout_attention, "dropout_keep", lambda *a: drawn.append(a[0]) or real(*a))
    model = build_model({"arch": "transformer", "d_model": 16, "n_layers": 2, "n_heads": 4}, 8, 64)
    ids, mask = torch.randint(4, 8, (2, 20)), torch.ones(2, 20, dtype=torch.bool)
    model.train()(ids, mask).sum().backward()
    assert drawn == [torch.Size((2, 4, 20, 20))] * 2  # one per block
    with torch.no_grad():
        model.eval()(ids, mask)
    assert len(drawn) == 2


def test_gradient_checkpointing_recomputes_the_same_dropout():
    cfg = {"arch": "transformer", "d_model": 16, "n_layers": 2, "n_heads": 4}
    ids, mask = torch.randint(4, 8, (2, 20)), torch.ones(2, 20, dtype=torch.bool)
    grads = []
    for checkpointing in (False, True):
        torch.manual_seed(0)
        model = build_model({**cfg, "gradient_checkpointing": checkpointing}, 8, 64).train()
        torch.manual_seed(1)
        model(ids, mask).sum().backward()
        grads.append([p.grad for p in model.parameters()])
    for plain, recomputed in zip(*grads, strict=True):
        torch.testing.assert_close(plain, recomputed)
