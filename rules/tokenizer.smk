rule tokenizer:
    input:
        windows=layout.run_file(layout.WINDOWS),
    output:
        tokenizer=directory(layout.run_file(layout.TOKENIZER_DIR)),
    log:
        "logs/{experiment}/tokenizer.log",
    benchmark:
        "results/benchmarks/{experiment}/tokenizer.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("tokenizer"),
        config=stage_config("tokenizer"),
        paths=path_args("tokenizer"),
    shell:
        "python -m workflow_scripts.rules.tokenizer --config {params.config:q} {params.paths} "
        "> {log:q} 2>&1"
