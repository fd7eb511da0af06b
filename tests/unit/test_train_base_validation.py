"""train_base's validation pass: site F1 at 0.5 and at the threshold the validation blocks pick,
through the real `validate` on real Blocks, and the model card's line that says which threshold
to call the model's sites at."""

import contextlib
import math

import numpy as np
import torch

from workflow_scripts.training.base.blocks import IGNORE, Blocks
from workflow_scripts.training.base.export import threshold_advice
from workflow_scripts.training.base.objective import site_f1_summary, validate
from workflow_scripts.training.distributed import DistContext

CONTEXT = 4
SITE_P = 0.3  # every true acceptor's probability: below 0.5, above the picked threshold


class ReadsTheBase(torch.nn.Module):
    """Acceptor probability SITE_P where the input base is A, ~0 elsewhere; the core only."""

    def forward(self, x):
        core = x[:, :, CONTEXT // 2 : x.shape[2] - CONTEXT // 2]
        acceptor_logit = math.log(SITE_P / (1 - SITE_P))
        neither = torch.zeros_like(core[:, 0])
        acceptor = torch.where(core[:, 0] > 0, acceptor_logit, -20.0)
        return torch.stack([neither, acceptor, torch.full_like(neither, -20.0)], dim=1)


def blocks_with_sites(cores: list[str]) -> Blocks:
    """One block per core: `a` an acceptor site (base A), `A` an A that is no site, `G` neither;
    N flanks."""
    codes = {"a": 0, "A": 0, "G": 2}
    sequence: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    starts: list[int] = []
    for core in cores:
        starts.append(int(sum(len(part) for part in sequence)))
        flank = [4] * (CONTEXT // 2)
        sequence.append(np.array(flank + [codes[base] for base in core] + flank, np.uint8))
        core_labels = [1 if base == "a" else 0 for base in core]
        labels.append(np.array([IGNORE] * (CONTEXT // 2) + core_labels + [IGNORE] * (CONTEXT // 2), np.int8))
    return Blocks(
        np.concatenate(sequence),
        np.concatenate(labels),
        np.array(starts),
        np.array([len(part) for part in sequence]),
        CONTEXT,
    )


def test_validation_picks_the_threshold_that_calls_the_sites_and_the_card_says_it():
    """Each block starts with a false A and ends with a site: batched side by side, a call never
    reaches into the other block (else a false A would hide behind an equal site: F1 0.889)."""
    cores = ["A" + "G" * 10 + "a" + "G" * 5 + "a", "A" + "G" * 8 + "a" + "G" * 12 + "a"]
    ctx = DistContext(0, 0, 1, torch.device("cpu"), None)
    result = validate(ReadsTheBase(), blocks_with_sites(cores), ctx, 10_000, 0, contextlib.nullcontext)
    assert result["site_f1"] == 0.0  # at 0.5 nothing is called
    assert result["picked_threshold"] == 0.05  # the lowest of the equally best
    assert result["picked_site_f1"] == 0.8  # TP 4, FP 2 (the two false A)
    (line,) = threshold_advice(result)
    assert "best at 0.05 (0.800; at 0.5 0.000)" in line and "calling.threshold: 0.05" in line
    assert threshold_advice({"val_loss": 0.1}) == []  # no sites in the validation blocks: no advice


def test_a_peak_at_a_block_end_is_not_hidden_by_the_next_blocks_first_position():
    """Two blocks side by side in the flat arrays: the site ending block 0 (0.4) stays a peak
    beside block 1's higher first position (0.9, a false call), which stays one too."""
    labels = np.array([0, 0, 1, 0, 0, 0])
    blocks = np.array([0, 0, 0, 1, 1, 1])
    scores = np.zeros((6, 3))
    scores[:, 0] = 1.0
    scores[2, 1], scores[3, 1] = 0.4, 0.9
    summary = site_f1_summary(labels, scores, blocks)
    assert summary["picked_threshold"] == 0.05 and summary["picked_site_f1"] == 2 / 3  # TP 1, FP 1
    assert summary["site_f1"] == 0.0  # at 0.5 only the false call
