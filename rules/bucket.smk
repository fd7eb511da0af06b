rule bucket:
    input:
        windows="results/{experiment}/windows.parquet",
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
        k=config["tokenizer"]["k"],
        boundaries=bucket_list("boundaries"),
        batch_sizes=bucket_list("batch_sizes"),
        max_length=config["bucket"]["max_length"],
    shell:
        "python -m workflow_scripts.bucket --windows {input.windows:q} --k {params.k} "
        "--boundaries {params.boundaries} --batch-sizes {params.batch_sizes} "
        "--max-length {params.max_length} --out-manifest {output.manifest:q} "
        "--out-summary {output.summary:q} > {log:q} 2>&1"
