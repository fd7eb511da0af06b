rule pretrain:
    input:
        windows="results/{experiment}/windows.parquet",
        manifest="results/{experiment}/buckets/manifest.parquet",
        summary="results/{experiment}/buckets/summary.json",
        genome=pretrain_genome_input,
        deepspeed_config=lookup(
            dpath="train/deepspeed_config", within=config, default=[]
        ),
    output:
        encoder="results/{experiment}/pretrain/encoder.pt",
        config="results/{experiment}/pretrain/pretrain.json",
        steps="results/{experiment}/pretrain/steps.jsonl",
    log:
        "logs/{experiment}/pretrain.log",
    benchmark:
        "results/benchmarks/{experiment}/pretrain.tsv"
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        gpu=0,
        cpu_procs=2,
        nodes=1,
    params:
        code=rule_code("pretrain"),
        inputs=user_input_digests(config["train"].get("deepspeed_config", [])),
        config=run_rule_config("model", "train", "pretrain"),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/pretrain/checkpoints",
        genome=optional_input_flag("--genome-index", "genome"),
    shell:
        "python -m workflow_scripts.rules.pretrain --config {params.config:q} "
        "--windows {input.windows:q} --manifest {input.manifest:q} "
        "--bucket-summary {input.summary:q} {params.genome} "
        "--checkpoint-dir {params.checkpoints:q} --out-encoder {output.encoder:q} "
        "--out-config {output.config:q} --out-steps {output.steps:q} "
        "--experiment {wildcards.experiment} --gpus {resources.gpu} "
        "--cpu-procs {resources.cpu_procs} --threads {threads} --nodes {resources.nodes} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"
