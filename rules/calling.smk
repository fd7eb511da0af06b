# Calls made by the pipeline (calling.start scores | annotation; docs/calling.md):
# annotation -> annotate_sites -> [score_base_model, one job per shard] -> make_calls
#   -> results/calls/calls.parquet; annotate_sites -> cluster_genes -> make_calls (paralogs)


rule annotate_sites:
    input:
        annotation=files.calling_annotation(),
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        sites=layout.ANNOTATION_SITES,
        genes=layout.ANNOTATION_GENES,
        exons=layout.ANNOTATION_EXONS,
        summary=layout.ANNOTATION_SUMMARY,
    log:
        "logs/annotate_sites.log",
    benchmark:
        "results/benchmarks/annotate_sites.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("annotate_sites"),
        inputs=user_input_digests(files.calling_annotation()),
        config=stage_config("annotate_sites"),
        genome=genome_args,
        paths=path_args("annotate_sites"),
    shell:
        "python -m workflow_scripts.rules.annotate_sites --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule cluster_genes:
    input:
        exons=layout.ANNOTATION_EXONS,
        genes=layout.ANNOTATION_GENES,
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        gene_clusters=layout.ANNOTATION_GENE_CLUSTERS,
    log:
        "logs/cluster_genes.log",
    benchmark:
        "results/benchmarks/cluster_genes.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("cluster_genes"),
        config=stage_config("cluster_genes"),
        genome=genome_args,
        paths=path_args("cluster_genes"),
    shell:
        "python -m workflow_scripts.rules.cluster_genes --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule score_base_model:
    input:
        genes=files.scored_spans(),  # the annotation's genes, or calling.start regions' spans
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
        weights=files.base_model_weights(),
    output:
        scores=layout.SCORE_SHARD,
        regions=layout.SCORE_SHARD_RECORD,
    log:
        "logs/score_base_model/{shard}-of-{shards}.log",
    benchmark:
        "results/benchmarks/score_base_model/{shard}-of-{shards}.tsv"
    wildcard_constraints:
        shard=r"[1-9][0-9]*",
        shards=r"[1-9][0-9]*",
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        gpu=local_gpu_resource,
    params:
        code=rule_code("score_base_model"),
        inputs=user_input_digests(files.base_model_weights()),
        config=stage_config("score_base_model"),
        genome=genome_args,
        paths=path_args("score_base_model"),
    shell:
        "python -m workflow_scripts.rules.score_base_model --config {params.config:q} "
        "{params.genome} {params.paths} --shard {wildcards.shard} --shards {wildcards.shards} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"


rule make_calls:
    input:
        scores=files.scores_tables(),
        sites=layout.ANNOTATION_SITES,
        genes=layout.ANNOTATION_GENES,
        gene_clusters=layout.ANNOTATION_GENE_CLUSTERS,
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        calls=layout.CALLS_TABLE,
        summary=layout.CALLS_SUMMARY,
    log:
        "logs/make_calls.log",
    benchmark:
        "results/benchmarks/make_calls.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("make_calls"),
        inputs=user_input_digests(files.scores_tables()),
        config=stage_config("make_calls"),
        genome=genome_args,
        paths=path_args("make_calls"),
    shell:
        "python -m workflow_scripts.rules.make_calls --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"
