rule explain:
    input:
        windows="results/{experiment}/windows.parquet",
        model="results/{experiment}/model/model.pt",
        config="results/{experiment}/model/model.json",
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
        config=rule_config("explain"),
    shell:
        "python -m workflow_scripts.rules.explain --config {params.config:q} "
        "--windows {input.windows:q} --model {input.model:q} --model-config {input.config:q} "
        "--experiment {wildcards.experiment} --out-attribution {output.attribution:q} "
        "--out-kmers {output.kmers:q} --out-dir results/{wildcards.experiment}/explain "
        "> {log:q} 2>&1"
