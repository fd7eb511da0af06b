# The base model's own training data (docs/base_training.md, BASE_DATA_CONTRACT.md):
# annotate_sites + cluster_genes + the genome index -> base_data -> results/base_data/


rule base_data:
    input:
        sites=layout.ANNOTATION_SITES,
        genes=layout.ANNOTATION_GENES,
        gene_clusters=layout.ANNOTATION_GENE_CLUSTERS,
        annotation=files.calling_annotation(),
        fasta=files.genome_fasta(),
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        blocks=layout.BASE_DATA_BLOCKS,
        sequence=layout.BASE_DATA_SEQUENCE,
        labels=layout.BASE_DATA_LABELS,
        manifest=layout.BASE_DATA_MANIFEST,
    log:
        "logs/base_data.log",
    benchmark:
        "results/benchmarks/base_data.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("base_data"),
        inputs=user_input_digests(files.calling_annotation(), files.genome_fasta()),
        config=stage_config("base_data"),
        genome=genome_args,
        paths=path_args("base_data"),
    shell:
        "python -m workflow_scripts.rules.base_data --config {params.config:q} "
        "{params.genome} {params.paths} --console-fd 3 3>&2 > {log:q} 2>&1"


rule evaluate_base:
    input:
        blocks=layout.BASE_DATA_BLOCKS,
        bases=layout.BASE_DATA_SEQUENCE,
        labels=layout.BASE_DATA_LABELS,
        manifest=layout.BASE_DATA_MANIFEST,
        weights=files.evaluate_base_weights(),
    output:
        metrics=layout.BASE_EVAL_METRICS,
        plot=layout.BASE_EVAL_PLOT,
    log:
        "logs/evaluate_base.log",
    benchmark:
        "results/benchmarks/evaluate_base.tsv"
    conda:
        "../envs/train.yaml"
    threads: 2
    params:
        code=rule_code("evaluate_base"),
        inputs=user_input_digests(files.evaluate_base_weights()),
        config=stage_config("evaluate_base"),
        paths=path_args("evaluate_base"),
    shell:
        "python -m workflow_scripts.rules.evaluate_base --config {params.config:q} "
        "{params.paths} --console-fd 3 3>&2 > {log:q} 2>&1"
