"""Per-nucleotide attribution of a trained model's P(error), for windows scored the way evaluate
scores them (evaluation/predict.py's batching and the model's own tokenizer and crop).

* gradient × input: the gradient of the error logit margin (logit_error - logit_correct) with
  respect to the input embeddings, times the embeddings' difference from the reference (the mean
  embedding of the k-mers of A, C, G, T), summed over the embedding dimensions: one score per
  token, spread evenly over the k nucleotides of a k-mer token. Against the raw embeddings the
  sign would be arbitrary (an embedding is no "absence of input"); against the mean base it says
  whether the base present pushes towards error more than an average base would. One backward
  pass per batch; needs a nucleotide tokenizer (tokens map to known nucleotides).
* in-silico mutagenesis: P(error) of the window minus the mean P(error) over the three windows
  with that base replaced by each other base. Works with any tokenizer; 3 × length forward passes
  per window.

Both give an array per window, one value per nucleotide: positive where the base present pushes
the model towards "error".
"""

from __future__ import annotations

import numpy as np
import torch

from workflow_scripts.evaluation.predict import predict
from workflow_scripts.tokenization.tokenizers import N_SPECIAL
from workflow_scripts.training.batches import BatchCollator, SplitData, inputs_on, sorted_batches

BASES = "ACGT"


def input_embedding(model: torch.nn.Module) -> torch.nn.Module:
    """The module that turns token ids into vectors (Hugging Face models name it; ours is the first Embedding)."""
    getter = getattr(model, "get_input_embeddings", None)
    if callable(getter) and getter() is not None:
        return getter()
    return next(module for module in model.modules() if isinstance(module, torch.nn.Embedding))


def base_token_ids(k: int) -> np.ndarray:
    """Ids of the k-mers made of A, C, G, T only (NucleotideTokenizer: 2 + base-5 value, N = 4)."""
    values = np.arange(5**k)
    digits = (values[:, None] // 5 ** np.arange(k)) % 5
    return N_SPECIAL + values[(digits < 4).all(axis=1)]


def token_scores(
    model: torch.nn.Module, inputs: tuple[torch.Tensor | None, ...], reference: torch.Tensor
) -> np.ndarray:
    """gradient × (input - reference) per token [B, T] for one batch (`inputs`: ids, mask[, features])."""
    captured: list[torch.Tensor] = []

    def keep(_module, _inputs, output):
        output.retain_grad()
        captured.append(output)

    handle = input_embedding(model).register_forward_hook(keep)
    try:
        model.zero_grad(set_to_none=True)
        logits = model(*inputs).float()
        (logits[:, 1] - logits[:, 0]).sum().backward()
    finally:
        handle.remove()
    embedded = captured[0]
    assert embedded.grad is not None  # the hook kept it (retain_grad)
    return (embedded.grad * (embedded - reference)).sum(-1).detach().cpu().numpy()


def nucleotide_scores(scores: np.ndarray, length: int, k: int, max_nucleotides: int | None) -> np.ndarray:
    """One window's token scores (CLS first) as per-nucleotide scores over its whole length:
    token j covers nucleotides j-1 .. j+k-2 of the centre crop; outside the crop, 0."""
    crop_left = max(length - max_nucleotides, 0) // 2 if max_nucleotides else 0
    kept = length if not max_nucleotides else min(length, max_nucleotides)
    per_nucleotide = np.zeros(length)
    n_tokens = max(kept - k + 1, 1)
    for offset in range(k):
        end = min(n_tokens, kept - offset)
        per_nucleotide[crop_left + offset : crop_left + offset + end] += scores[1 : 1 + end] / k
    return per_nucleotide


def gradient_x_input(
    model: torch.nn.Module, data: SplitData, collator: BatchCollator, batch_size: int, device: torch.device
) -> list[np.ndarray]:
    """Per-nucleotide gradient × input for every window of `data`, in its order."""
    if getattr(collator.tokenizer, "needs_sequences", False):
        raise ValueError(
            "gradient_x_input needs a nucleotide tokenizer (tokens mapped to bases); "
            "use explain.method in_silico_mutagenesis"
        )
    model.to(device).eval()
    weight = input_embedding(model).weight
    assert isinstance(weight, torch.Tensor)
    reference = weight[torch.as_tensor(base_token_ids(collator.tokenizer.k), device=device)].mean(0).detach()
    result: list[np.ndarray] = [np.zeros(0)] * len(data)
    for indices in sorted_batches(data, batch_size):
        batch = collator(indices)
        inputs = inputs_on(batch, device)
        scores = token_scores(model, inputs, reference)
        for row, index in enumerate(indices):
            result[index] = nucleotide_scores(
                scores[row], int(data.lengths[index]), collator.tokenizer.k, collator.max_nucleotides
            )
    return result


def mutants(sequence: str) -> list[str]:
    """Every single-base substitution of `sequence`, position by position, bases in ACGT order."""
    return [
        sequence[:i] + base + sequence[i + 1 :]
        for i in range(len(sequence))
        for base in BASES
        if base != sequence[i]
    ]


def in_silico_mutagenesis(
    model: torch.nn.Module, data: SplitData, collator: BatchCollator, batch_size: int, device: torch.device
) -> list[np.ndarray]:
    """Per-nucleotide P(window) - mean P(window with that base replaced) for every window."""
    result = []
    for index, sequence in enumerate(data.sequences):
        variants = [sequence, *mutants(sequence)]
        length = int(data.lengths[index])
        batch = SplitData(
            ids=[""] * len(variants),
            gene_ids=[""] * len(variants),
            sequences=variants,
            labels=np.zeros(len(variants), dtype=np.int64),
            lengths=np.full(len(variants), length),
            buckets=np.zeros(len(variants), dtype=np.int64),
            token_lengths=np.full(len(variants), int(data.token_lengths[index])),
            features=None
            if data.features is None
            else np.repeat(data.features[index : index + 1], len(variants), 0),
            profiles=None if data.profiles is None else data.profiles.repeated(index, len(variants)),
        )
        probs = predict(
            model, batch, BatchCollator(batch, collator.tokenizer, collator.max_tokens), batch_size, device
        )
        result.append(probs[0] - mutant_means(sequence, probs[1:]))
    return result


def mutant_means(sequence: str, probs: np.ndarray) -> np.ndarray:
    """Mean P(error) of each position's substitutions (mutants() order); a base outside ACGT has 4."""
    counts = np.array([4 - (base in BASES) for base in sequence])
    ends = np.cumsum(counts)
    return np.add.reduceat(probs, ends - counts) / counts if len(sequence) else np.zeros(0)
