"""Training data for the base model (the SpliceAI-family network) from an annotated genome, and its
evaluation: the `base_data` and `evaluate_base` rules' library (docs/base_training.md).

- `blocks.py`: genes of one strand merged into blocks, their labelled cores cut to `max_core`;
- `splits.py`: train / validation / test by gene clusters (paralog-aware) or by chromosome;
- `arrays.py`: the flat sequence and label arrays (real flanking DNA, reverse complement on -);
- `layout_stats.py`: input nt per labelled nt and padding, errorseq's blocks beside OpenSpliceAI's
  windows on the same genes;
- `dataset.py`: the folder the trainer reads (BASE_DATA contract: blocks.parquet, sequence.npy,
  labels.npy, manifest.json), written and read back;
- `metrics.py`, `evaluate.py`: OpenSpliceAI's metrics on the held-out blocks.
"""
