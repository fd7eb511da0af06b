rule explain:
    input:
        windows=layout.run_file(layout.WINDOWS),
        model=layout.run_file(layout.MODEL_WEIGHTS),
        model_config=layout.run_file(layout.MODEL_CONFIG),
    output:
        attribution="results/{experiment}/explain/attribution.tsv",
        kmers="results/{experiment}/explain/kmers.tsv",
        plots=explain_report_outputs(),
    log:
        "logs/{experiment}/explain.log",
    benchmark:
        "results/benchmarks/{experiment}/explain.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("explain"),
        config=stage_config("explain"),
        paths=path_args("explain"),
        plots_dir=output_dir("plots"),
    shell:
        "python -m workflow_scripts.rules.explain --config {params.config:q} {params.paths} "
        "--out-dir {params.plots_dir:q} --experiment {wildcards.experiment} > {log:q} 2>&1"
