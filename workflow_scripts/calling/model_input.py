"""A SpliceAI-family model's input made on its own device from the genome's bytes.

A batch of chunks travels to the device as the genome's uint8 ASCII bases (1 byte per nt, not the
16 of a float32 one-hot) and becomes there the (batch, 4, length) one-hot the models read:
channels A, C, G, T, and N (or any other byte) all zeros, lower case read as upper case.
A minus-strand chunk is read reverse-complemented, as the model was trained on transcripts: its
bytes are reversed and compared with T, G, C, A instead of A, C, G, T, so no one-hot is made twice.
"""

from __future__ import annotations

import functools

import torch

FORWARD_BASES = b"ACGT"  # the one-hot's channels, in order (spliceai.BASES)
COMPLEMENT_BASES = b"TGCA"  # what each channel reads on the other strand
UPPER_CASE = 0xDF  # clears ASCII's lower-case bit: a, c, g, t read as A, C, G, T


@functools.lru_cache(maxsize=8)
def channel_bases(device: torch.device) -> torch.Tensor:
    """(2, 4) uint8 on `device`: the bases of the four channels on the plus and the minus strand.
    Made once per device: a small copy from pageable memory would wait for the device's queue."""
    return torch.tensor([list(FORWARD_BASES), list(COMPLEMENT_BASES)], dtype=torch.uint8, device=device)


def one_hot_strands(
    codes: torch.Tensor, minus: torch.Tensor, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """(batch, length) uint8 ASCII bases in genome order and (batch,) bool, True where the chunk is
    read on the minus strand → (batch, 4, length) one-hot in the model's reading order."""
    flip = minus[:, None]
    bases = torch.where(flip, codes.flip(1), codes).bitwise_and_(UPPER_CASE)
    letters = channel_bases(codes.device)[minus.long()]  # (batch, 4)
    return (bases[:, None, :] == letters[:, :, None]).to(dtype)
