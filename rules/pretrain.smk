# Masked-LM pretraining of the encoder (docs/models.md): train's body with its own paths, the
# genome windows as an optional input, and the pretrain section in its config.
use rule train as pretrain with:
    input:
        windows=layout.run_file(layout.WINDOWS),
        manifest=layout.run_file(layout.BUCKET_MANIFEST),
        bucket_summary=layout.run_file(layout.BUCKET_SUMMARY),
        genome_index=files.pretrain_genome_input,
        deepspeed_config=lookup(
            dpath="train/deepspeed_config", within=config, default=[]
        ),
    output:
        weights=layout.run_file(layout.PRETRAINED_ENCODER),
        config="results/{experiment}/pretrain/pretrain.json",
        steps="results/{experiment}/pretrain/steps.jsonl",
    log:
        "logs/{experiment}/pretrain.log",
    benchmark:
        "results/benchmarks/{experiment}/pretrain.tsv"
    params:
        program="pretrain",
        code=rule_code("pretrain"),
        config=stage_config("pretrain"),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/pretrain/checkpoints",
        paths=path_args("pretrain"),
