rule plot:
    input:
        predictions="results/{experiment}/evaluation/predictions.parquet",
        metrics="results/{experiment}/evaluation/metrics.json",
        steps="results/{experiment}/model/steps.jsonl",
        bucket_summary="results/{experiment}/buckets/summary.json",
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
        paths=path_args(
            "predictions", "metrics", "steps", "bucket_summary", "manifest", outputs=()
        ),
        plots_dir=output_dir("plots"),
    shell:
        "python -m workflow_scripts.rules.plot {params.paths} --out-dir {params.plots_dir:q} "
        "> {log:q} 2>&1"
