"""Base-model training against the peer (issue 46, item 6): OpenSpliceAI's own `create-data` +
`transfer --unfreeze-all` and errorseq's `train_base` on the same genes, flank, start weights and
epochs; labelled nt per CPU-second of training, peak memory, held-out top-k and AUPRC per epoch.

`compare.py` is the benchmark (`python -m benchmarks run base-training`), `peer.py` runs
OpenSpliceAI (its CLI in a process of its own, `osai_worker.py`), `sides.py` says what either side
hands back, `errorseq.py` runs errorseq's `base_data` + `train_base` (SideNotAvailable where they
are missing), `genes.py` picks the genes and writes
the annotation OpenSpliceAI can read, `layout.py` is OpenSpliceAI's window arithmetic, `heldout.py`
scores every epoch's checkpoint on the same held-out windows, `osai_logs.py` reads OpenSpliceAI's logs.
"""
