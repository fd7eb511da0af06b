rule evaluate:
    input:
        windows="results/{experiment}/windows.parquet",
        manifest="results/{experiment}/buckets/manifest.parquet",
        model="results/{experiment}/model/model.pt",
        model_config="results/{experiment}/model/model.json",
    output:
        predictions="results/{experiment}/evaluation/predictions.parquet",
        metrics="results/{experiment}/evaluation/metrics.json",
    log:
        "logs/{experiment}/evaluate.log",
    benchmark:
        "results/benchmarks/{experiment}/evaluate.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("evaluate"),
        config=run_rule_config("evaluate", "train"),
        paths=path_args("windows", "manifest", "model", "model_config"),
    shell:
        "python -m workflow_scripts.rules.evaluate --config {params.config:q} {params.paths} "
        "--experiment {wildcards.experiment} > {log:q} 2>&1"
