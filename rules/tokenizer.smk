rule tokenizer:
    input:
        windows="results/{experiment}/windows.parquet",
    output:
        tokenizer=directory("results/{experiment}/tokenizer"),
    log:
        "logs/{experiment}/tokenizer.log",
    benchmark:
        "results/benchmarks/{experiment}/tokenizer.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("tokenizer"),
        config=rule_config("tokenizer", "split"),
    shell:
        "python -m workflow_scripts.rules.tokenizer --config {params.config:q} "
        "--windows {input.windows:q} --out-dir {output.tokenizer:q} > {log:q} 2>&1"
