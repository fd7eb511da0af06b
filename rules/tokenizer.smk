rule tokenizer:
    input:
        windows="results/{experiment}/windows.parquet",
    output:
        tokenizer=directory("results/{experiment}/tokenizer"),
    log:
        "logs/{experiment}/tokenizer.log",
    benchmark:
        "results/benchmarks/{experiment}/tokenizer.tsv"
    conda:
        "../envs/train.yaml"
    params:
        extra=tokenizer_cli_args(),
    shell:
        "python -m workflow_scripts.tokenization.bpe --windows {input.windows:q} {params.extra} "
        "--out-dir {output.tokenizer:q} > {log:q} 2>&1"
