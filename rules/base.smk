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
