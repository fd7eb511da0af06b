# train and pretrain (pretrain.smk: `use rule train as pretrain`) share this body: the same
# inputs, resources and command line; what differs is in params (program, paths, config, code,
# checkpoints) and the paths.
rule train:
    input:
        windows=layout.run_file(layout.WINDOWS),
        manifest=layout.run_file(layout.BUCKET_MANIFEST),
        bucket_summary=layout.run_file(layout.BUCKET_SUMMARY),
        deepspeed_config=lookup(
            dpath="train/deepspeed_config", within=config, default=[]
        ),
        init_encoder=files.pretrained_encoder_input,
    output:
        weights=layout.run_file(layout.MODEL_WEIGHTS),
        config=layout.run_file(layout.MODEL_CONFIG),
        steps=layout.run_file(layout.MODEL_STEPS),
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
        config=stage_config("train"),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/model/checkpoints",
        paths=path_args("train"),
    shell:
        "python -m workflow_scripts.rules.{params.program:q} --config {params.config:q} "
        "{params.paths} --checkpoint-dir {params.checkpoints:q} "
        "--experiment {wildcards.experiment} --gpus {resources.gpu} "
        "--cpu-procs {resources.cpu_procs} --threads {threads} --nodes {resources.nodes} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"
