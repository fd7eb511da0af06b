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
        model=section_json("model"),
        train=pretrain_train_json(),
        extra=pretrain_cli_args(),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/pretrain/checkpoints",
    shell:
        "python -m workflow_scripts.training.launch --module workflow_scripts.training.pretrain "
        "--gpus {resources.gpu} --cpu-procs {resources.cpu_procs} --threads {threads} "
        "--nodes {resources.nodes} -- "
        "--windows {input.windows:q} --manifest {input.manifest:q} "
        "--bucket-summary {input.summary:q} --model-config {params.model:q} "
        "--train-config {params.train:q} {params.extra} --checkpoint-dir {params.checkpoints:q} "
        "--out-encoder {output.encoder:q} --out-config {output.config:q} "
        "--out-steps {output.steps:q} --experiment {wildcards.experiment} > {log:q} 2>&1"
