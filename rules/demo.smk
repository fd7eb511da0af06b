rule demo_data:
    output:
        genome="results/demo/genome.fa.gz",
        calls="results/demo/calls.tsv",
    log:
        "logs/demo_data.log",
    benchmark:
        "results/benchmarks/demo_data.tsv"
    conda:
        "../envs/data.yaml"
    params:
        seed=config["demo"]["seed"],
        n_genes=config["demo"]["n_genes"],
        calls_per_gene=config["demo"]["calls_per_gene"],
    shell:
        "python -m workflow_scripts.data.demo --genome {output.genome:q} --calls {output.calls:q} "
        "--seed {params.seed} --n-genes {params.n_genes} "
        "--calls-per-gene {params.calls_per_gene} > {log:q} 2>&1"
