"""Validation after each epoch: the objective's metrics over the whole validation split, in
batches cut by training's largest per-rank batch in tokens, combined across ranks."""

from __future__ import annotations

import numpy as np
import torch

from workflow_scripts.training.batches import SplitData, budget_batches, model_inputs
from workflow_scripts.training.distributed import DistContext
from workflow_scripts.training.objectives.base import Objective
from workflow_scripts.training.strategies.base import Engine


class Validator:
    """`batch_tokens`: training's largest per-rank batch in tokens (batches.training_batch_tokens),
    so that validation never needs more memory than a training step's forward pass."""

    def __init__(
        self,
        objective: Objective,
        ctx: DistContext,
        data: SplitData,
        collator,
        batch_tokens: int,
        max_tokens: int,
    ):
        self.objective, self.ctx, self.data, self.collator = objective, ctx, data, collator
        self.batch_tokens = batch_tokens
        self.token_lengths = np.minimum(data.token_lengths, max_tokens)

    @torch.no_grad()
    def validate(self, engine: Engine) -> dict:
        """The objective's validation metrics over the whole split, combined across ranks."""
        module = engine.eval_model()
        module.eval()
        scores = []
        for indices, keep in self.padded_batches():
            host_batch = self.collator(indices)
            batch = {key: value.to(self.ctx.device, non_blocking=True) for key, value in host_batch.items()}
            with engine.autocast():
                logits = module(*model_inputs(batch)).float()
            if keep:
                scores.append(self.objective.score_batch(logits, batch))
        module.train()
        return self.objective.summarise(scores, self.ctx)

    def padded_batches(self) -> list[tuple[list[int], bool]]:
        """This rank's batches, padded with discarded repeats so that every rank runs as many
        forward passes (sharded strategies gather parameters collectively in forward)."""
        batches = budget_batches(self.token_lengths, self.batch_tokens, self.ctx.rank, self.ctx.world_size)
        longest = int(self.ctx.all_reduce_max(len(batches)))
        filler = batches[-1] if batches else [0]
        return [(b, True) for b in batches] + [(filler, False)] * (longest - len(batches))
