"""GPU step time when every batch has a new sequence length, as bucketed batches do.

    python -m benchmarks.gpu.shapes [--steps 40] [--tokens 12800]

errorseq's batches hold ~12,800 tokens at many different padded lengths T (sorted windows), so
on a GPU nearly every step can meet a shape it has not run before. This times forward +
backward + AdamW of the medium built-in transformer and a small BERT (SDPA attention) for
`--steps` batches: all at one T, at `--steps` new T values, the same T values again (warm), and
new T values with cuDNN's attention backend switched off. Needs CUDA; prints one table.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from benchmarks.tables import print_table


def models():
    from workflow_scripts.models.builtin import build_model

    yield (
        "transformer d512 L8",
        lambda: build_model(
            {"arch": "transformer", "d_model": 512, "n_layers": 8, "n_heads": 8, "dropout": 0.1}, 6, 1024
        ),
    )
    try:
        import transformers
    except ImportError:
        return
    from workflow_scripts.models.hf import HFSequenceClassifier

    def bert():
        config = transformers.BertConfig(
            vocab_size=256,
            hidden_size=256,
            num_hidden_layers=4,
            num_attention_heads=4,
            intermediate_size=1024,
            max_position_embeddings=512,
            num_labels=2,
        )
        return HFSequenceClassifier(transformers.AutoModelForSequenceClassification.from_config(config))

    yield "BERT 256x4 (HF, sdpa)", bert


def batch(t: int, tokens: int, vocab: int, generator: torch.Generator, device) -> tuple:
    b = max(1, tokens // t)
    lengths = torch.randint(max(2, int(t * 0.9)), t + 1, (b,), generator=generator)
    lengths[0] = t
    mask = torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)
    ids = torch.randint(5, vocab, (b, t), generator=generator) * mask
    return ids.to(device), mask.to(device), torch.randint(0, 2, (b,), generator=generator).to(device)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_steps(model, optimizer, lengths, tokens, dtype, vocab, device) -> float:
    generator = torch.Generator().manual_seed(0)
    batches = [batch(t, tokens, vocab, generator, device) for t in lengths]
    sync(device)
    began = time.perf_counter()
    for ids, mask, labels in batches:
        with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            logits = model(ids, mask)
        F.cross_entropy(logits.float(), labels).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    sync(device)
    return 1000 * (time.perf_counter() - began) / len(lengths)


NEW_LENGTHS = range(200, 512)  # every "new" T is used once per model and precision


def shape_row(name: str, make, label: str, dtype, args: argparse.Namespace, device: torch.device) -> list:
    """ms per step of one model and precision: one T, new Ts, the same Ts again, new Ts without cuDNN attention."""
    vocab = 6 if name.startswith("transformer") else 256
    torch.manual_seed(0)
    model = make().to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def ms(lengths) -> float:
        return time_steps(model, optimizer, list(lengths), args.tokens, dtype, vocab, device)

    ms([128] * 5)  # CUDA warm-up
    fixed = ms([384] * args.steps)
    fresh, others = NEW_LENGTHS[: args.steps], NEW_LENGTHS[args.steps : 2 * args.steps]
    new, warm = ms(fresh), ms(fresh)
    torch.backends.cuda.enable_cudnn_sdp(False)
    no_cudnn = ms(others)
    torch.backends.cuda.enable_cudnn_sdp(True)
    return [name, label, f"{fixed:.1f}", f"{new:.1f}", f"{warm:.1f}", f"{no_cudnn:.1f}"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--tokens", type=int, default=12800)
    parser.add_argument("--device", default="cuda", help="cpu only to check that the script runs")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    rows = []
    for name, make in models():
        for label, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
            rows.append(shape_row(name, make, label, dtype, args, device))  # its model freed on return
            print(" | ".join(map(str, rows[-1])), flush=True)
            if device.type == "cuda":
                torch.cuda.empty_cache()
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    print_table(
        f"step ms, {args.tokens:,} tokens per batch, {args.steps} steps each ({name}, "
        f"torch {torch.__version__})",
        [
            "model",
            "precision",
            "one T (384)",
            "a new T every step",
            "same T values again",
            "new T, cuDNN attention off",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
