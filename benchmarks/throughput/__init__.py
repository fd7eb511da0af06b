"""How fast does training run on CPU?

- training: real tokens per second of one epoch by batching scheme, and the Trainer's overhead
  against a bare PyTorch loop.
- attention: the built-in transformer's step with PyTorch's attention dropout against errorseq's.
"""
