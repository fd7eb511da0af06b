rule summarize:
    input:
        metrics=expand(
            "results/{experiment}/evaluation/metrics.json", experiment=EXPERIMENTS
        ),
    output:
        table=report(
            f"{SUMMARY_DIR}/summary.tsv",
            caption="../report/summary_table.rst",
            category="Summary",
        ),
        plot=report(
            f"{SUMMARY_DIR}/summary.png",
            caption="../report/summary_plot.rst",
            category="Summary",
        ),
        html=report(
            f"{SUMMARY_DIR}/summary.html",
            caption="../report/summary_html.rst",
            category="Summary",
        ),
    log:
        "logs/summary/summarize.log",
    benchmark:
        "results/benchmarks/summary/summarize.tsv"
    conda:
        "../envs/plot.yaml"
    params:
        code=rule_code("summarize"),
        config=rule_config("experiments", "split", "train"),
    shell:
        "python -m workflow_scripts.rules.summarize --config {params.config:q} "
        "--metrics {input.metrics:q} "
        "--out-table {output.table:q} --out-plot {output.plot:q} "
        "--out-html {output.html:q} > {log:q} 2>&1"
