"""What a trained model learnt (the explain rule's library): attribution over the window and k-mers.

1. Attribution (attribution.py) on the TEST windows (held out from training), at most
   `max_windows` per splice type and class (error / correct, randomly chosen with `seed`),
   scored by evaluate's own model loading, tokenisation and batching (predict_calls.TrainedModel).
2. Each window's per-nucleotide scores are aligned on its splice site (position 0 =
   `site_offset`, the window centre when the table has no site_offset) and averaged per splice
   type and class: attribution.tsv (artifacts.ATTRIBUTION_COLUMNS). `importance` is the mean
   score of the windows that reach that position; A, C, G, T split it by the base present
   (summing to the importance where no window holds N there): the letters of the sequence logo.
   A model trained with score channels also gets their attribution, gradient × score per base
   (channel_attribution.py), averaged the same way.
3. k-mer enrichment (kmers.py) of error against correct windows over EVERY split: kmers.tsv.
4. The plots (explain_plots.py): artifacts.EXPLAIN_PLOTS.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from workflow_scripts.artifacts import ATTRIBUTION_COLUMNS, EVALUATED_SPLIT
from workflow_scripts.config.types import ExplainSection
from workflow_scripts.inference.attribution import BASES, gradient_x_input, in_silico_mutagenesis
from workflow_scripts.inference.channel_attribution import (
    channel_gradient_x_input,
    strongest_channel_positions,
    with_channel_means,
)
from workflow_scripts.inference.explain_plots import FEW_WINDOWS, plot_explanations, top_positions
from workflow_scripts.inference.kmers import kmer_enrichment
from workflow_scripts.inference.predict_calls import TrainedModel
from workflow_scripts.io_utils import write_text
from workflow_scripts.models.call_inputs import CALL_INPUT_COLUMNS
from workflow_scripts.models.score_channels import SCORE_CHANNEL_COLUMNS
from workflow_scripts.training.batches import BatchCollator

METHODS = {"gradient_x_input": gradient_x_input, "in_silico_mutagenesis": in_silico_mutagenesis}
CLASSES = {1: "error", 0: "correct"}
ALL_TYPES = "all"  # the splice_type of every window when the table has no splice_type column


@dataclass(frozen=True)
class ExplainPaths:
    windows: str
    model: str
    model_config: str
    out_attribution: str
    out_kmers: str
    out_dir: str  # the plots


def read_windows(path: str) -> pl.DataFrame:
    """sequence, label, split, length, splice_type and site_offset (ALL_TYPES / the centre where
    absent), and the call inputs and score channels the table carries."""
    frame = pl.read_parquet(path)
    if "splice_type" not in frame.columns:
        frame = frame.with_columns(pl.lit(ALL_TYPES).alias("splice_type"))
    if "site_offset" not in frame.columns:
        frame = frame.with_columns((pl.col("length") // 2).alias("site_offset"))
    inputs = [name for name in CALL_INPUT_COLUMNS if name in frame.columns and name != "splice_type"]
    inputs += [name for name in SCORE_CHANNEL_COLUMNS if name in frame.columns]
    return frame.select("id", "split", "label", "sequence", "length", "splice_type", "site_offset", *inputs)


def chosen_windows(windows: pl.DataFrame, max_windows: int, seed: int) -> pl.DataFrame:
    """Test windows, at most max_windows of each splice type and class, in table order."""
    test = windows.filter(pl.col("split") == EVALUATED_SPLIT).with_row_index("__order")
    shuffled = test.sample(fraction=1.0, shuffle=True, seed=seed)
    kept = shuffled.filter(pl.int_range(pl.len()).over("splice_type", "label") < max_windows)
    return kept.sort("__order").drop("__order")


def aligned_means(scores: list[np.ndarray], sequences: list[str], offsets: np.ndarray) -> pl.DataFrame:
    """importance and per-base shares at each position relative to the site (ATTRIBUTION_COLUMNS' tail)."""
    reach = max(max(int(o), len(s) - int(o)) for s, o in zip(sequences, offsets))
    total, squares, count = np.zeros(2 * reach + 1), np.zeros(2 * reach + 1), np.zeros(2 * reach + 1)
    by_base = np.zeros((len(BASES), 2 * reach + 1))
    for score, sequence, offset in zip(scores, sequences, offsets):
        at = np.arange(len(sequence)) - int(offset) + reach
        total[at] += score
        squares[at] += np.square(score)
        count[at] += 1
        bases = np.frombuffer(sequence.encode(), np.uint8)
        for b, base in enumerate(BASES.encode()):
            by_base[b, at] += np.where(bases == base, score, 0.0)
    covered = count > 0
    n, mean = count[covered], total[covered] / count[covered]
    variance = np.clip(squares[covered] / n - mean**2, 0, None) * n / np.maximum(n - 1, 1)
    columns = {
        "position": np.arange(-reach, reach + 1)[covered],
        "importance": mean,
        "importance_se": np.sqrt(variance / n),
    }
    columns |= {base: by_base[b, covered] / count[covered] for b, base in enumerate(BASES)}
    return pl.DataFrame({**columns, "n_windows": count[covered].astype(np.int64)})


def attribution_table(
    chosen: pl.DataFrame, scores: list[np.ndarray], channel_scores: list[np.ndarray] | None = None
) -> pl.DataFrame:
    """attribution.tsv: the aligned means of every splice type and class (and score channel)."""
    parts = []
    frame = chosen.with_row_index("__index")
    for (splice_type, label), group in frame.group_by("splice_type", "label", maintain_order=True):
        rows, offsets = group["__index"].to_list(), group["site_offset"].to_numpy()
        means = aligned_means([scores[i] for i in rows], group["sequence"].to_list(), offsets)
        channels = None if channel_scores is None else [channel_scores[i] for i in rows]
        means = with_channel_means(means, channels, group["length"].to_list(), offsets)
        parts.append(
            means.with_columns(
                pl.lit(str(splice_type)).alias("splice_type"), pl.lit(CLASSES[int(label)]).alias("class")
            )
        )
    return pl.concat(parts).sort("splice_type", "class", "position").select(ATTRIBUTION_COLUMNS)


def window_scores(
    chosen: pl.DataFrame, paths: ExplainPaths, cfg: ExplainSection
) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
    """Per-base attribution of each window, and of its score channels (gradient × input only)."""
    model = TrainedModel.from_files(paths.model, paths.model_config, cfg.batch_size)
    features = model.features(chosen, paths.windows)
    profiles = model.profiles(chosen, paths.windows)
    data = model.as_split(chosen["sequence"].to_list(), chosen["length"].to_numpy(), features, profiles)
    collator = BatchCollator(data, model.tokenizer, model.saved["max_tokens"])
    method = resolved_method(cfg.method, model.tokenizer)
    scores = METHODS[method](model.model, data, collator, cfg.batch_size, model.device)
    if profiles is None or method != "gradient_x_input":
        return scores, None
    return scores, channel_gradient_x_input(model.model, data, collator, cfg.batch_size, model.device)


def resolved_method(method: str, tokenizer) -> str:
    """`auto`: gradient × input where tokens map to bases (nucleotide k-mers), else mutagenesis."""
    if method != "auto":
        return method
    return "in_silico_mutagenesis" if getattr(tokenizer, "needs_sequences", False) else "gradient_x_input"


def explain(paths: ExplainPaths, cfg: ExplainSection, experiment: str) -> dict[str, pl.DataFrame]:
    """Write attribution.tsv, kmers.tsv and the explain plots; return the two tables."""
    windows = read_windows(paths.windows)
    chosen = chosen_windows(windows, cfg.max_windows, cfg.seed)
    attribution = attribution_table(chosen, *window_scores(chosen, paths, cfg))
    kmers = kmer_enrichment(windows["sequence"].to_list(), windows["label"].to_numpy(), cfg.kmer_k)
    write_text(paths.out_attribution, attribution.write_csv(separator="\t"))
    write_text(paths.out_kmers, kmers.write_csv(separator="\t"))
    plot_explanations(attribution, kmers, cfg.top_positions, cfg.top_kmers, Path(paths.out_dir), experiment)
    log(
        f"explain: {experiment}: {cfg.method} on {chosen.height} test windows "
        f"({', '.join(f'{t} {CLASSES[int(c)]} {n}' for t, c, n in chosen.group_by('splice_type', 'label').len().sort('splice_type', 'label').iter_rows())})"
    )
    for splice_type, label, n in few_windows(chosen):
        log(
            f"explain: {experiment}: warning: only {n} {splice_type} {CLASSES[label]} windows "
            f"(under {FEW_WINDOWS}); their mean attribution is noisy: read it with its interval (importance_se)"
        )
    log(
        f"explain: {experiment}: most important positions in error windows: {top_positions_line(attribution)}"
    )
    if channels := strongest_channel_positions(attribution):
        log(f"explain: {experiment}: score channels pushing towards error most: {channels}")
    top = kmers.head(3).iter_rows(named=True)
    log(
        f"explain: {experiment}: top {cfg.kmer_k}-mers in error windows: "
        + "; ".join(
            f"{r['kmer']} ({r['error_windows']} error vs {r['correct_windows']} correct windows, q={r['q_value']:.2g})"
            for r in top
        )
    )
    return {"attribution": attribution, "kmers": kmers}


def few_windows(chosen: pl.DataFrame) -> list[tuple[str, int, int]]:
    """(splice type, class label, windows) of every group averaged over fewer than FEW_WINDOWS."""
    counts = chosen.group_by("splice_type", "label").len().sort("splice_type", "label")
    return [(str(t), int(c), int(n)) for t, c, n in counts.iter_rows() if n < FEW_WINDOWS]


def top_positions_line(attribution: pl.DataFrame) -> str:
    return "; ".join(
        f"{t}: {top_positions(attribution, t, 5)['position'].to_list()}"
        for t in attribution["splice_type"].unique(maintain_order=True)
    )


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
