"""errorseq: train classifiers that tell a splice-site model's errors from its correct calls."""
