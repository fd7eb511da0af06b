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
        code=rule_code("demo_data"),
        config=stage_config("demo_data"),
        paths=path_args("demo_data"),
    shell:
        "python -m workflow_scripts.rules.demo_data --config {params.config:q} {params.paths} "
        "> {log:q} 2>&1"
