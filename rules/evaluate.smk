rule evaluate:
    input:
        windows="results/{experiment}/windows.parquet",
        manifest="results/{experiment}/buckets/manifest.parquet",
        model="results/{experiment}/model/model.pt",
        config="results/{experiment}/model/model.json",
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
    shell:
        "python -m workflow_scripts.rules.evaluate --config {params.config:q} "
        "--windows {input.windows:q} --manifest {input.manifest:q} "
        "--model {input.model:q} --model-config {input.config:q} "
        "--experiment {wildcards.experiment} --out-predictions {output.predictions:q} "
        "--out-metrics {output.metrics:q} > {log:q} 2>&1"
