"""The loss over labelled positions and the validation pass of train_base.

Loss: cross-entropy (or focal) over the positions whose label is ≥ 0, averaged over them; with
`l2sp` > 0, L2-SP adds l2sp/2 · Σ ||w − w_start||² over the weights that train. Validation (after
each epoch, eval mode: batch norms use their running statistics): loss, and per site type
(acceptor, donor) OpenSpliceAI's top-k accuracy (k = the true sites) and the average precision,
over the first `val_max_blocks` validation blocks, every rank a share; and errorseq's site F1
(base_training/site_f1.py: peaks within ±2 nt, TP within ±2 nt) at 0.5 and at the threshold of
`THRESHOLDS` that gives the validation blocks their best site F1. Fine-tuning moves a model's
calibration (the same sites, scored higher or lower), so that threshold, picked on genes no test
saw, is the one to call the model's sites at (`calling.threshold`), not 0.5 by habit.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from workflow_scripts.base_training.site_f1 import best_threshold, f1_by_threshold
from workflow_scripts.metrics import average_precision
from workflow_scripts.training.base.blocks import IGNORE, Blocks, budget_batches
from workflow_scripts.training.distributed import DistContext

SITE_TYPES = {"acceptor": 1, "donor": 2}
SITE_WINDOW = PEAK_RADIUS = 2  # evaluate_base's site F1


def site_f1_summary(labels: np.ndarray, scores: np.ndarray, blocks: np.ndarray) -> dict:
    """{site_f1 (at 0.5), picked_threshold, picked_site_f1}: the best of THRESHOLDS, the lowest on a tie
    (positions: block cores in reading order, `blocks` naming each one's block)."""
    by_threshold = f1_by_threshold(labels, scores, blocks, SITE_WINDOW, PEAK_RADIUS)
    picked = best_threshold(by_threshold)
    return {"site_f1": by_threshold[0.5], "picked_threshold": picked, "picked_site_f1": by_threshold[picked]}


def position_loss(logits: torch.Tensor, labels: torch.Tensor, kind: str, gamma: float) -> torch.Tensor:
    """Mean over labelled positions (0 with none, still part of the graph)."""
    logits = logits.float()
    mask = labels != IGNORE
    count = int(mask.sum())
    if count == 0:
        return logits.sum() * 0.0
    if kind == "cross_entropy":
        return F.cross_entropy(logits, labels, ignore_index=IGNORE, reduction="sum") / count
    log_p = F.log_softmax(logits, dim=1)
    picked = log_p.gather(1, labels.clamp(min=0)[:, None, :])[:, 0]
    focal = -((1 - picked.exp()) ** gamma) * picked
    return focal[mask].sum() / count


class L2SP:
    """The start weights of the parameters that may train; the pull toward them."""

    def __init__(self, module: torch.nn.Module, strength: float):
        self.strength = strength
        self.start = {name: p.detach().clone() for name, p in module.named_parameters()} if strength else {}

    def penalty(self, module: torch.nn.Module) -> torch.Tensor | None:
        if not self.strength:
            return None
        terms = [
            (p - self.start[name]).pow(2).sum() for name, p in module.named_parameters() if p.requires_grad
        ]
        return 0.5 * self.strength * torch.stack(terms).sum() if terms else None


def top_k_accuracy(truth: np.ndarray, scores: np.ndarray) -> float | None:
    """Share of true sites among the k best-scored positions, k = the true sites."""
    k = int(truth.sum())
    if k == 0:
        return None
    best = np.argpartition(-scores, k - 1)[:k]
    return float(truth[best].sum() / k)


@torch.no_grad()
def validate(
    module: torch.nn.Module,
    blocks: Blocks,
    ctx: DistContext,
    token_budget: int,
    max_blocks: int,
    autocast,
) -> dict:
    """Collective. {val_loss, val_labelled, <type>_topk, <type>_auprc, site_f1, picked_threshold,
    picked_site_f1}."""
    chosen = np.arange(len(blocks) if max_blocks == 0 else min(max_blocks, len(blocks)))
    mine = chosen[ctx.rank :: ctx.world_size]
    batches = [[int(mine[i]) for i in b] for b in budget_batches(blocks.lengths[mine], token_budget)]
    rounds = int(ctx.all_reduce_max(len(batches)))  # sharded strategies gather in every forward
    was_training = module.training
    module.eval()
    loss_sum, count = 0.0, 0
    probabilities, truths, owners = [], [], []
    for index in range(rounds):
        keep = index < len(batches)
        indices = batches[index] if keep else (batches[-1] if batches else [0])
        x, y = blocks.batch(indices)
        x, y = x.to(ctx.device), y.to(ctx.device)
        with autocast():
            logits = module(x)
        if not keep:
            continue
        mask = y != IGNORE
        loss_sum += float(F.cross_entropy(logits.float(), y, ignore_index=IGNORE, reduction="sum"))
        count += int(mask.sum())
        probabilities.append(torch.softmax(logits.float(), dim=1).permute(0, 2, 1)[mask].cpu().numpy())
        truths.append(y[mask].cpu().numpy())
        owners.append(np.repeat(np.asarray(indices), mask.sum(dim=1).cpu().numpy()))
    module.train(was_training)
    total_loss, total_count = ctx.all_reduce_sum([loss_sum, float(count)])
    gathered = ctx.gather_objects(
        (
            np.concatenate(probabilities) if probabilities else np.zeros((0, 3), np.float32),
            np.concatenate(truths) if truths else np.zeros(0, np.int64),
            np.concatenate(owners) if owners else np.zeros(0, np.int64),
        )
    )
    scores = np.concatenate([g[0] for g in gathered])  # type: ignore[index]
    labels = np.concatenate([g[1] for g in gathered])  # type: ignore[index]
    owner = np.concatenate([g[2] for g in gathered])  # type: ignore[index]
    result: dict = {"val_loss": total_loss / max(total_count, 1.0), "val_labelled": int(total_count)}
    for name, channel in SITE_TYPES.items():
        truth = labels == channel
        result[f"{name}_topk"] = top_k_accuracy(truth, scores[:, channel])
        result[f"{name}_auprc"] = (
            average_precision(truth.astype(np.int64), scores[:, channel]) if truth.any() else None
        )
    if (labels > 0).any():
        result.update(site_f1_summary(labels, scores, owner))
    return result
