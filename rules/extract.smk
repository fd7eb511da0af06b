rule index_genome:
    input:
        fasta=config.get("genome", []),
    output:
        sequence="results/genome/sequence.npy",
        index="results/genome/index.tsv",
    log:
        "logs/index_genome.log",
    benchmark:
        "results/benchmarks/index_genome.tsv"
    conda:
        "../envs/data.yaml"
    shell:
        "python -m workflow_scripts.data.genome --fasta {input.fasta:q} --out-dir results/genome "
        "> {log:q} 2>&1"


rule extract:
    input:
        unpack(extract_inputs),
    output:
        windows="results/{experiment}/windows.parquet",
    log:
        "logs/{experiment}/extract.log",
    benchmark:
        "results/benchmarks/{experiment}/extract.tsv"
    conda:
        "../envs/data.yaml"
    params:
        source=extract_source_args,
        fractions=split_fractions(),
        seed=config["split"]["seed"],
    shell:
        "python -m workflow_scripts.data.windows {params.source} --experiment {wildcards.experiment} "
        "--split-fractions {params.fractions} --split-seed {params.seed} "
        "--out {output.windows:q} > {log:q} 2>&1"
