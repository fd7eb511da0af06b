# train and pretrain (pretrain.smk: `use rule train as pretrain`) share this body: the same
# inputs, resources and command line; what differs is in params (program, paths, config, code,
# checkpoints) and the paths.
rule train:
    input:
        windows="results/{experiment}/windows.parquet",
        manifest="results/{experiment}/buckets/manifest.parquet",
        bucket_summary="results/{experiment}/buckets/summary.json",
        deepspeed_config=lookup(
            dpath="train/deepspeed_config", within=config, default=[]
        ),
        init_encoder=pretrained_encoder_input,
    output:
        weights="results/{experiment}/model/model.pt",
        config="results/{experiment}/model/model.json",
        steps="results/{experiment}/model/steps.jsonl",
    log:
        "logs/{experiment}/train.log",
    benchmark:
        "results/benchmarks/{experiment}/train.tsv"
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        gpu=0,
        cpu_procs=2,
        nodes=1,
    params:
        program="train",
        code=rule_code("train"),
        inputs=user_input_digests(config["train"].get("deepspeed_config", [])),
        config=run_rule_config("model", "train"),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/model/checkpoints",
        paths=path_args("windows", "manifest", "bucket_summary", "init_encoder"),
    shell:
        "python -m workflow_scripts.rules.{params.program:q} --config {params.config:q} "
        "{params.paths} --checkpoint-dir {params.checkpoints:q} "
        "--experiment {wildcards.experiment} --gpus {resources.gpu} "
        "--cpu-procs {resources.cpu_procs} --threads {threads} --nodes {resources.nodes} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"
