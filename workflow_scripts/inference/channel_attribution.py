"""Attribution of the score channels (models/score_channels.py): how much the base model's donor
and acceptor score at each base pushes a model trained with them towards "error".

gradient × input per base and channel: the gradient of the logit margin (logit_error -
logit_correct) with respect to the base's own score (a k-mer token took the mean of its k bases'
scores, so its gradient is shared by them, 1/k each) times that score. The reference is 0, no
splice signal. Aligned on the site and averaged per splice type and class like the sequence's
importance: attribution.tsv's `donor_scores` and `acceptor_scores` columns (empty for a model
without score channels, and with in_silico_mutagenesis, which perturbs bases only).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import torch

from workflow_scripts.inference.attribution import nucleotide_scores
from workflow_scripts.models.score_channels import SCORE_CHANNEL_COLUMNS
from workflow_scripts.training.batches import BatchCollator, SplitData, inputs_on, sorted_batches


def channel_gradient_x_input(
    model: torch.nn.Module, data: SplitData, collator: BatchCollator, batch_size: int, device: torch.device
) -> list[np.ndarray]:
    """Per-base gradient × score, [length, channels] per window of `data`, in its order."""
    assert data.profiles is not None  # a model with score channels
    model.to(device).eval()
    result: list[np.ndarray] = [np.zeros((0, 0))] * len(data)
    for indices in sorted_batches(data, batch_size):
        gradients = score_gradients(model, inputs_on(collator(indices), device))
        for row, index in enumerate(indices):
            length, profile = int(data.lengths[index]), data.profiles.window(index)
            per_base = [
                nucleotide_scores(
                    gradients[row, :, c], length, collator.tokenizer.k, collator.max_nucleotides
                )
                for c in range(profile.shape[1])
            ]
            result[index] = np.stack(per_base, axis=1) * profile
    return result


def score_gradients(model: torch.nn.Module, inputs: tuple[torch.Tensor | None, ...]) -> np.ndarray:
    """d(logit margin) / d(token scores), [B, T, channels], for one batch."""
    ids, mask, features, scores = inputs
    assert scores is not None
    scores.requires_grad_(True)
    model.zero_grad(set_to_none=True)
    logits = model(ids, mask, features, scores).float()
    (logits[:, 1] - logits[:, 0]).sum().backward()
    assert scores.grad is not None
    return scores.grad.detach().cpu().numpy()


def with_channel_means(
    means: pl.DataFrame, scores: list[np.ndarray] | None, lengths: list[int], offsets: np.ndarray
) -> pl.DataFrame:
    """`means` (explain.aligned_means of the same windows) with the channels' mean attribution at
    each of its positions; null columns where there is none."""
    if scores is None:
        return means.with_columns(pl.lit(None, pl.Float64).alias(name) for name in SCORE_CHANNEL_COLUMNS)
    reach = max(max(int(o), n - int(o)) for n, o in zip(lengths, offsets))
    total, count = np.zeros((2 * reach + 1, len(SCORE_CHANNEL_COLUMNS))), np.zeros(2 * reach + 1)
    for score, length, offset in zip(scores, lengths, offsets):
        at = np.arange(length) - int(offset) + reach
        total[at] += score
        count[at] += 1
    rows = means["position"].to_numpy() + reach
    mean = total[rows] / count[rows, None]
    return means.with_columns(pl.Series(name, mean[:, c]) for c, name in enumerate(SCORE_CHANNEL_COLUMNS))


def strongest_channel_positions(attribution: pl.DataFrame, n: int = 3) -> str:
    """The log's line: per score channel and splice type, its attribution in error windows summed
    over positions and the positions where it pushes most towards "error"; "" without channel
    attribution."""
    errors = attribution.filter(pl.col("class") == "error")
    parts = []
    for name in SCORE_CHANNEL_COLUMNS:
        if errors[name].null_count() == errors.height:
            continue
        for splice_type, rows in errors.group_by("splice_type", maintain_order=True):
            top = rows.sort(name, descending=True, nulls_last=True).head(n)["position"].to_list()
            parts.append(f"{name} in {splice_type[0]} windows {rows[name].sum():+.3g} in all, most at {top}")
    return "; ".join(parts)
