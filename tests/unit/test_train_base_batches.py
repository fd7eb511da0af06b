"""What a training batch holds. train_base.packing: a batch's blocks joined end to end in one row;
the cores' logits are each block's own (no position reads another block), the labels line up
with them, the budget counts real nt, and the batch-norm statistics come from real DNA only.
train_base.flank_n: a drawn share of the blocks read N in their flanks, labels unchanged."""

from __future__ import annotations

import numpy as np
import torch

from tests.base_data_fixtures import write_base_data
from workflow_scripts.training.base.blocks import (
    blank_flanks,
    budget_batches,
    load_blocks,
    mixed_batches,
    padding_share,
)
from workflow_scripts.training.base.network import build_network


def test_a_packed_row_gives_each_blocks_own_core_logits(tmp_path):
    blocks = load_blocks(write_base_data(tmp_path, context=400, blocks=12), "train", 400)
    network, _ = build_network(400, None, seed=5)
    network.eval()
    indices = [0, 3, 1]
    x, y, spans = blocks.packed(indices)
    assert x.shape == (1, 4, sum(spans)) and y.shape == (1, sum(spans) - 400 * len(spans))
    with torch.no_grad():
        packed = network(x, spans)
        alone = [network(*blocks.batch([index])[:1]) for index in indices]
    assert packed.shape == y.shape[:1] + (3,) + y.shape[1:]
    assert torch.allclose(packed, torch.cat(alone, dim=2), atol=1e-5)
    labels = np.concatenate([blocks.core_labels(index) for index in indices])
    assert np.array_equal(y[0].numpy(), labels)


def test_packed_batch_statistics_come_from_real_dna_not_padding(tmp_path):
    """In training mode a padded batch of a short and a long block normalises over the short one's
    N padding too; packed, only over the two blocks' DNA (the first unit's statistics = those of
    its input's positions, whatever order the blocks come in)."""
    blocks = load_blocks(write_base_data(tmp_path, context=400, blocks=12), "train", 400)
    order = np.argsort(blocks.lengths)
    short, long = int(order[0]), int(order[-1])
    network, _ = build_network(400, None, seed=5)
    means = []
    norm = network.residual_units[0].batchnorm1
    hook = norm.register_forward_hook(lambda module, args, out: means.append(args[0].mean(dim=(0, 2))))
    with torch.no_grad():
        for indices in ([short, long], [long, short]):
            x, _, spans = blocks.packed(indices)
            network(x, spans)
        network(blocks.batch([short, long])[0])
    hook.remove()
    assert torch.allclose(means[0], means[1], atol=1e-5)  # the same positions, either order
    assert not torch.allclose(means[0], means[2], atol=1e-4)  # padded: the N positions count too


def test_packed_budgets_count_real_nt_and_any_order_costs_no_padding():
    lengths = np.array([300, 310, 320, 330, 340, 350, 360, 370, 380, 390, 1200])
    batches = budget_batches(lengths, 1000, packed=True)
    assert sorted(i for b in batches for i in b) == list(range(11))
    assert all(lengths[b].sum() <= 1000 or len(b) == 1 for b in batches)
    assert [10] in batches and padding_share(lengths, batches, packed=True) == 0.0
    mixed = mixed_batches(lengths, 1000, 1.0, seed=2, epoch=0, packed=True)
    assert all(lengths[b].sum() <= 1000 or len(b) == 1 for b in mixed)
    assert len(budget_batches(lengths, 1000)) >= len(batches)  # padding never packs tighter


def test_flank_n_blanks_the_flanks_of_the_drawn_blocks_only_and_keeps_their_labels(tmp_path):
    blocks = load_blocks(write_base_data(tmp_path, context=400, blocks=24), "train", 80)
    drawn = blank_flanks(len(blocks), 0.5, seed=3, epoch=1)
    assert drawn == blank_flanks(len(blocks), 0.5, seed=3, epoch=1)  # every rank draws the same
    assert drawn != blank_flanks(len(blocks), 0.5, seed=3, epoch=2) and 0 < len(drawn) < len(blocks)
    assert blank_flanks(len(blocks), 0.0, seed=3, epoch=1) == frozenset()
    assert blank_flanks(len(blocks), 1.0, seed=3, epoch=1) == frozenset(range(len(blocks)))
    real = {index: blocks.batch([index]) for index in range(len(blocks))}
    blocks.blank_flanks = drawn
    for index in range(len(blocks)):
        x, y = blocks.batch([index])
        assert torch.equal(y, real[index][1])  # labels: the core's, unchanged
        assert torch.equal(x[:, :, 40:-40], real[index][0][:, :, 40:-40])  # the core's DNA kept
        flanks = torch.cat([x[:, :, :40], x[:, :, -40:]], dim=2)
        assert (flanks.sum() == 0) == (index in drawn)  # N (all-zero one-hot) in both flanks
        packed, _, _ = blocks.packed([index])
        assert torch.equal(packed, x)
