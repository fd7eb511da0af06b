rule bucket:
    input:
        windows=layout.run_file(layout.WINDOWS),
        tokenizer=files.bucket_tokenizer_input,
    output:
        manifest=layout.run_file(layout.BUCKET_MANIFEST),
        summary=layout.run_file(layout.BUCKET_SUMMARY),
    log:
        "logs/{experiment}/bucket.log",
    benchmark:
        "results/benchmarks/{experiment}/bucket.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("bucket"),
        config=stage_config("bucket"),
        paths=path_args("bucket"),
    shell:
        "python -m workflow_scripts.rules.bucket --config {params.config:q} {params.paths} "
        "> {log:q} 2>&1"
