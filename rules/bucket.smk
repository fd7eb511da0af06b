rule bucket:
    input:
        windows="results/{experiment}/windows.parquet",
        tokenizer=bucket_tokenizer_input,
    output:
        manifest="results/{experiment}/buckets/manifest.parquet",
        summary="results/{experiment}/buckets/summary.json",
    log:
        "logs/{experiment}/bucket.log",
    benchmark:
        "results/benchmarks/{experiment}/bucket.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("bucket"),
        config=rule_config("bucket", "tokenizer", "model"),
        paths=path_args("windows", "tokenizer"),
    shell:
        "python -m workflow_scripts.rules.bucket --config {params.config:q} {params.paths} "
        "> {log:q} 2>&1"
