"""What do training's strategies and precisions cost on a GPU (CUDA only)?

- cases: every case as data (model, train overrides, inputs, launcher, GPUs).
- inputs: the demo windows, buckets and BPE tokenizer the cases train on.
- run: one case through the train rule's entry point, and what its step log says.
- check: the runner (`python -m benchmarks.gpu.check`, `check.sh` adds an environment report).
- shapes: step time when every batch has a new padded length.
"""
