rule evaluate:
    input:
        windows=layout.run_file(layout.WINDOWS),
        manifest=layout.run_file(layout.BUCKET_MANIFEST),
        model=layout.run_file(layout.MODEL_WEIGHTS),
        model_config=layout.run_file(layout.MODEL_CONFIG),
    output:
        predictions=layout.run_file(layout.PREDICTIONS),
        metrics=layout.run_file(layout.METRICS),
    log:
        "logs/{experiment}/evaluate.log",
    benchmark:
        "results/benchmarks/{experiment}/evaluate.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("evaluate"),
        config=stage_config("evaluate"),
        paths=path_args("evaluate"),
    shell:
        "python -m workflow_scripts.rules.evaluate --config {params.config:q} {params.paths} "
        "--experiment {wildcards.experiment} > {log:q} 2>&1"
