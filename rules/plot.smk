rule plot:
    input:
        predictions="results/{experiment}/evaluation/predictions.parquet",
        metrics="results/{experiment}/evaluation/metrics.json",
        steps="results/{experiment}/model/steps.jsonl",
        summary="results/{experiment}/buckets/summary.json",
        manifest="results/{experiment}/buckets/manifest.parquet",
    output:
        plots=plot_report_outputs(),
    log:
        "logs/{experiment}/plot.log",
    benchmark:
        "results/benchmarks/{experiment}/plot.tsv"
    conda:
        "../envs/plot.yaml"
    params:
        code=rule_code("plot"),
    shell:
        "python -m workflow_scripts.rules.plot --predictions {input.predictions:q} "
        "--metrics {input.metrics:q} --steps {input.steps:q} --bucket-summary {input.summary:q} "
        "--manifest {input.manifest:q} --out-dir results/{wildcards.experiment}/plots "
        "> {log:q} 2>&1"
