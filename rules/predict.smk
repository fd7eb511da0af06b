# Score a new calls table with each experiment's trained model (README: Use a trained model):
#   snakemake --cores all predict --config predict='{calls: new_calls.tsv}'
# writes results/<experiment>/predictions/<predict.name>.parquet for every experiment.


rule predict:
    input:
        files.prediction_outputs,


rule predict_calls:
    input:
        unpack(files.predict_inputs),
    output:
        predictions="results/{experiment}/predictions/{name}.parquet",
    log:
        "logs/{experiment}/predict_calls/{name}.log",
    benchmark:
        "results/benchmarks/{experiment}/predict_calls/{name}.tsv"
    wildcard_constraints:
        name="[A-Za-z0-9_.-]+",
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("predict_calls"),
        inputs=user_input_digests(files.predict_inputs),
        config=stage_config("predict_calls"),
        genome=genome_args,
        paths=path_args("predict_calls"),
    shell:
        "python -m workflow_scripts.rules.predict_calls --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"
