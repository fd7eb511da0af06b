rule summarize:
    input:
        **files.provenance_inputs(),
        metrics=expand(layout.run_file(layout.METRICS), experiment=EXPERIMENTS),
        calls_summary=files.calls_summary_input(),
        # provenance.json names them with their sha256 (a config file added or edited reruns summarize)
        config_files=workflow.configfiles,
    output:
        table=report(
            f"{layout.SUMMARY_DIR}/summary.tsv",
            caption="../report/summary_table.rst",
            category="Summary",
            labels=summary_label("summary.tsv"),
        ),
        plot=report(
            f"{layout.SUMMARY_DIR}/summary.png",
            caption="../report/summary_plot.rst",
            category="Summary",
            labels=summary_label("summary.png"),
        ),
        html=report(
            f"{layout.SUMMARY_DIR}/summary.html",
            caption="../report/summary_html.rst",
            category="Summary",
            labels=summary_label("summary.html"),
        ),
        provenance=report(
            f"{layout.SUMMARY_DIR}/provenance.json",
            caption="../report/provenance.rst",
            category="Summary",
            labels=summary_label("provenance.json"),
        ),
    log:
        "logs/summary/summarize.log",
    benchmark:
        "results/benchmarks/summary/summarize.tsv"
    conda:
        "../envs/plot.yaml"
    params:
        code=rule_code("summarize"),
        config=stage_config("summarize"),
        inputs=user_input_digests(files.given_tables()),
        paths=path_args("summarize"),
    shell:
        "python -m workflow_scripts.rules.summarize --config {params.config:q} {params.paths} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"
