"""Helpers that the tests and the benchmarks both use (neither imports the other).

- rule_commands: the train and evaluate entry points' path arguments, spelled once.
- slurm_cluster: a throw-away one-node SLURM cluster on loopback (root).
- node_network, multinode_cluster: a two-node SLURM cluster in network namespaces (root).
"""
