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
        extra=bucket_cli_args(),
        tokenizer=bucket_tokenizer_args,
    shell:
        "python -m workflow_scripts.bucketing.assign --windows {input.windows:q} {params.extra} "
        "{params.tokenizer} "
        "--out-manifest {output.manifest:q} --out-summary {output.summary:q} > {log:q} 2>&1"
