# Masked-LM pretraining of the encoder (docs/models.md): train's body with its own paths, the
# genome windows as an optional input, and the pretrain section in its config.
use rule train as pretrain with:
    input:
        windows="results/{experiment}/windows.parquet",
        manifest="results/{experiment}/buckets/manifest.parquet",
        bucket_summary="results/{experiment}/buckets/summary.json",
        genome_index=pretrain_genome_input,
        deepspeed_config=lookup(
            dpath="train/deepspeed_config", within=config, default=[]
        ),
    output:
        weights="results/{experiment}/pretrain/encoder.pt",
        config="results/{experiment}/pretrain/pretrain.json",
        steps="results/{experiment}/pretrain/steps.jsonl",
    log:
        "logs/{experiment}/pretrain.log",
    benchmark:
        "results/benchmarks/{experiment}/pretrain.tsv"
    params:
        program="pretrain",
        code=rule_code("pretrain"),
        config=run_rule_config("model", "train", "pretrain"),
        checkpoints=lambda wildcards: f"results/{wildcards.experiment}/pretrain/checkpoints",
        paths=path_args("windows", "manifest", "bucket_summary", "genome_index"),
