"""errorseq against the tools users would pick instead (issue 18): the same BERT fine-tuned on the
same windows by errorseq's train rule, the transformers Trainer and the MetaSpliceAI recipe.

- compare: the benchmark (`python -m benchmarks.peers.compare`): the three peers one after
  another on each data set, then every table.
- inputs: the windows (the demo's, made by the workflow; a long tail), the BERT, the bucket rule.
- batching: the recipe's sampler and collator, errorseq's batches replayed, the token accounting
  and the settings that match the peers' steps to errorseq's.
- runs: one peer's run and what it measured, and the one test ROC-AUC scorer.
- trainer: the Trainer peers' torchrun entry point.
- watch: a run watched from outside (RSS, CPU seconds, step log) and its time split into phases.
- host: host time per step (`python -m benchmarks.peers.host`).
- order: what each peer's batches do to learning, in one bare loop (`python -m benchmarks.peers.order`).
- tables: the Markdown tables.
"""
