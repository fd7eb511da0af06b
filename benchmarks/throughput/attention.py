"""The built-in transformer's training step on CPU: nn.TransformerEncoderLayer's own attention
dropout against errorseq's (models/dropout_attention.py), same weights and batches.

    python -m benchmarks.throughput.attention [--repeats 3] [--quick]

One thread (as each rank runs), the two timed in turn so that the machine's other jobs fall on
both; best of `--repeats`. Shapes: the demo's 401-nt windows and 768-token ones (nucleotide
tokens), the model at its default width and at twice it. The HF backbones' counterpart is the
last rows of benchmarks/peers/host.py.
"""

from __future__ import annotations

import argparse
import time

import torch

from benchmarks.tables import load_line, print_table
from workflow_scripts.config.sections import section_defaults
from workflow_scripts.models.builtin import TransformerBlock, build_model


def stock_layers(model: torch.nn.Module) -> None:
    """Make every block run nn.TransformerEncoderLayer's own forward, as before."""
    for block in model.modules():
        if isinstance(block, TransformerBlock):
            block.forward = lambda x, mask, layer=block.layer: layer(x, src_key_padding_mask=~mask)


def step_ms(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor, repeats: int) -> float:
    optimizer = torch.optim.AdamW(model.parameters())
    labels = torch.zeros(len(ids), dtype=torch.long)

    def step() -> None:
        torch.nn.functional.cross_entropy(model(ids, mask), labels).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - began)
    return 1000 * best


def row(d_model: int, length: int, batch: int, repeats: int) -> list:
    cfg = {"arch": "transformer", "d_model": d_model}
    ids = torch.randint(4, 8, (batch, length))
    mask = torch.ones(batch, length, dtype=torch.bool)
    mask[0, length // 2 :] = False
    torch.manual_seed(0)
    ours, theirs = build_model(cfg, 8, length).train(), build_model(cfg, 8, length).train()
    theirs.load_state_dict(ours.state_dict())
    stock_layers(theirs)
    best = {"stock": float("inf"), "errorseq": float("inf")}
    for _ in range(repeats):  # in turn
        best["stock"] = min(best["stock"], step_ms(theirs, ids, mask, 1))
        best["errorseq"] = min(best["errorseq"], step_ms(ours, ids, mask, 1))
    return [
        f"d{d_model}",
        f"{batch} × {length}",
        f"{best['stock']:.2f}",
        f"{best['errorseq']:.2f}",
        f"{best['stock'] / best['errorseq']:.2f}×",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small shapes: does it still run?")
    args = parser.parse_args(argv)
    width = section_defaults("model")["d_model"]
    shapes = [(16, 8)] if args.quick else [(401, 32), (768, 8)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        before = load_line()
        rows = [row(d, length, batch, args.repeats) for d in (width, 2 * width) for length, batch in shapes]
    finally:
        torch.set_num_threads(threads)
    print_table(
        f"Built-in transformer, one training step on CPU, ms ({before} before, {load_line()} after; "
        f"dropout {section_defaults('model')['dropout']}, {section_defaults('model')['n_layers']} layers)",
        [
            "width",
            "windows × tokens",
            "nn.TransformerEncoderLayer",
            "errorseq's attention dropout",
            "speed-up",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
