"""errorseq's train_base timed: `run.time_train_base` (one seed, the rule's own entry point under
torchrun, per epoch what the training steps cost) for the OpenSpliceAI comparison
(benchmarks/base_training) and `ranks` (one rank against DDP on two, same cores)."""
