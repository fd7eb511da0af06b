"""Batches of chunks run on the model's device while the host prepares the next ones.

The host writes a batch's bases (the genome's uint8 bytes) and strands into a staging slot; the
batch is copied to the device, made into the one-hot there (model_input.py), run through the
ensemble, and its acceptor and donor probabilities are copied back into the slot. On a GPU the
slots are page-locked and both copies asynchronous: `launch` returns as soon as the work is queued,
so the host gathers the next batch and scatters an earlier one's scores while the device computes,
and `depth` batches stay in flight. A batch's scores are read only after its CUDA event has fired,
and a slot is refilled only after the batch that last used it was read (depth + 1 slots, used in
turn), so no copy ever reads or writes a buffer the host is using. On a CPU the same code runs with
plain memory, nothing in flight and one slot: the forward is the host's own work there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from workflow_scripts.calling.model_input import one_hot_strands
from workflow_scripts.calling.spliceai import ACCEPTOR, DONOR
from workflow_scripts.calling.stage_times import StageTimes

assert DONOR == ACCEPTOR + 1  # the two channels copied back are one slice: acceptor, donor
SCORED_CHANNELS = slice(ACCEPTOR, DONOR + 1)
DEPTH_ON_CUDA = 2  # batches queued on a GPU ahead of the one the host reads
DEPTH_ON_CPU = 0  # on a CPU the forward is the host's own work: nothing to queue


@dataclass
class Slot:
    """Host memory for one batch: bases, strands and the scores copied back (flat, sized for the
    largest batch; a batch uses a prefix)."""

    codes: torch.Tensor  # uint8
    minus: torch.Tensor  # bool
    scores: torch.Tensor  # float32


@dataclass
class Launched:
    """A batch queued on the device; `scores` are valid once `wait` has returned it."""

    chunks: list  # the caller's description of the batch's chunks, in row order
    scores: np.ndarray  # (chunks, 2, scored nt): acceptor, donor, in the model's reading order
    minus: np.ndarray  # (chunks,) bool
    input_nt: int
    done: torch.cuda.Event | None


class BatchRunner:
    """Runs batches of up to `max_chunks` chunks and `max_input_nt` bases through `ensemble`, which
    scores all but `context` nt of its input, `depth` batches in flight."""

    def __init__(
        self,
        ensemble: nn.Module,
        context: int,
        device: torch.device,
        dtype: torch.dtype,
        max_chunks: int,
        max_input_nt: int,
        depth: int,
        times: StageTimes | None = None,
    ):
        self.ensemble, self.context, self.device = ensemble, context, device
        self.dtype, self.depth = dtype, depth
        self.times = times or StageTimes()
        self.on_cuda = device.type == "cuda"
        pin = self.on_cuda
        self.slots = [
            Slot(
                torch.empty(max_input_nt, dtype=torch.uint8, pin_memory=pin),
                torch.empty(max_chunks, dtype=torch.bool, pin_memory=pin),
                torch.empty(2 * max_input_nt, dtype=torch.float32, pin_memory=pin),
            )
            for _ in range(depth + 1)
        ]
        self.in_flight: deque[Launched] = deque()
        self.launched = 0

    @property
    def slot(self) -> Slot:
        return self.slots[self.launched % len(self.slots)]

    def stage(self, chunks: int, input_length: int) -> tuple[np.ndarray, np.ndarray]:
        """The next batch's host arrays to fill: bases (chunks, input_length) uint8 in genome
        order, and minus (chunks,) bool."""
        slot = self.slot
        codes = slot.codes[: chunks * input_length].numpy().reshape(chunks, input_length)
        return codes, slot.minus[:chunks].numpy()

    def launch(self, chunks: list, input_length: int) -> list[Launched]:
        """Queue the staged batch; return the batches that must be read now to keep `depth` in
        flight (oldest first, their scores ready)."""
        slot, rows = self.slot, len(chunks)
        scored = input_length - self.context
        scores = slot.scores[: rows * 2 * scored].view(rows, 2, scored)
        reduced = self.dtype != torch.float32
        with torch.inference_mode():
            with self.times("one-hot"):
                codes = slot.codes[: rows * input_length].view(rows, input_length)
                minus = slot.minus[:rows].to(self.device, non_blocking=True)
                x = one_hot_strands(codes.to(self.device, non_blocking=True), minus)
            with self.times("forward"), torch.autocast(self.device.type, self.dtype, enabled=reduced):
                probabilities = self.ensemble(x)
            with self.times("copy back"):
                scores.copy_(probabilities[:, SCORED_CHANNELS], non_blocking=True)
                done = None
                if self.on_cuda:
                    done = torch.cuda.Event()
                    done.record()
        self.in_flight.append(
            Launched(chunks, scores.numpy(), slot.minus[:rows].numpy(), rows * input_length, done)
        )
        self.launched += 1
        return [self.wait() for _ in range(len(self.in_flight) - self.depth)]

    def drain(self) -> list[Launched]:
        """Every batch still in flight, oldest first, their scores ready."""
        return [self.wait() for _ in range(len(self.in_flight))]

    def wait(self) -> Launched:
        launched = self.in_flight.popleft()
        if launched.done is not None:
            with self.times("waiting for the device"):
                launched.done.synchronize()
        return launched
