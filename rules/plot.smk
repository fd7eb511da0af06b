rule plot:
    input:
        predictions=layout.run_file(layout.PREDICTIONS),
        metrics=layout.run_file(layout.METRICS),
        steps=layout.run_file(layout.MODEL_STEPS),
        bucket_summary=layout.run_file(layout.BUCKET_SUMMARY),
        manifest=layout.run_file(layout.BUCKET_MANIFEST),
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
        paths=path_args("plot"),
        plots_dir=output_dir("plots"),
    shell:
        "python -m workflow_scripts.rules.plot {params.paths} --out-dir {params.plots_dir:q} "
        "> {log:q} 2>&1"
