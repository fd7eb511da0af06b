rule index_genome:
    input:
        fasta=config.get("genome", []),
    output:
        sequence=layout.GENOME_SEQUENCE,
        index=layout.GENOME_INDEX,
        record=layout.GENOME_RECORD,
    log:
        "logs/index_genome.log",
    benchmark:
        "results/benchmarks/index_genome.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("index_genome"),
        inputs=user_input_digests(config.get("genome", [])),
        config=stage_config("index_genome"),
        paths=path_args("index_genome"),
    shell:
        "python -m workflow_scripts.rules.index_genome --config {params.config:q} "
        "{params.paths} > {log:q} 2>&1"


rule extract:
    input:
        unpack(files.extract_inputs),
    output:
        windows=layout.run_file(layout.WINDOWS),
    log:
        "logs/{experiment}/extract.log",
    benchmark:
        "results/benchmarks/{experiment}/extract.tsv"
    # the experiments' runs only: sites.model's windows come from site_windows (rules/sites.smk)
    wildcard_constraints:
        experiment=runs_pattern(EXPERIMENTS),
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("extract"),
        inputs=user_input_digests(files.extract_inputs),
        config=stage_config("extract"),
        genome=genome_args,
        paths=path_args("extract"),
    shell:
        "python -m workflow_scripts.rules.extract --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"
