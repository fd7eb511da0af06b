# Calls made by the pipeline (calling.start scores | annotation; docs/calling.md):
# annotation -> annotate_sites -> [score_base_model, one job per shard] -> make_calls
#   -> results/calls/calls.parquet; annotate_sites -> cluster_genes -> make_calls (paralogs)


rule annotate_sites:
    input:
        annotation=calling_annotation(),
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
    output:
        sites="results/annotation/sites.parquet",
        genes="results/annotation/genes.parquet",
        exons="results/annotation/exons.parquet",
        summary="results/annotation/summary.json",
    log:
        "logs/annotate_sites.log",
    benchmark:
        "results/benchmarks/annotate_sites.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("annotate_sites"),
        inputs=user_input_digests(calling_annotation()),
        config=calling_config(ANNOTATE_SITES_KEYS),
        genome=genome_args,
        paths=path_args("annotation"),
    shell:
        "python -m workflow_scripts.rules.annotate_sites --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule cluster_genes:
    input:
        exons="results/annotation/exons.parquet",
        genes="results/annotation/genes.parquet",
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
    output:
        gene_clusters="results/annotation/gene_clusters.parquet",
    log:
        "logs/cluster_genes.log",
    benchmark:
        "results/benchmarks/cluster_genes.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("cluster_genes"),
        config=calling_config(CLUSTER_GENES_KEYS),
        genome=genome_args,
        paths=path_args("exons", "genes"),
    shell:
        "python -m workflow_scripts.rules.cluster_genes --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule score_base_model:
    input:
        genes=scored_spans(),  # the annotation's genes, or calling.start regions' spans
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
        weights=base_model_weights(),
    output:
        scores=SCORE_SHARD,
        regions=SCORE_SHARD_RECORD,
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
        gpu=GPU_ON_THIS_MACHINE,
    params:
        code=rule_code("score_base_model"),
        inputs=user_input_digests(base_model_weights()),
        config=calling_config(SCORE_BASE_MODEL_KEYS),
        genome=genome_args,
        paths=path_args("genes", "weights"),
    shell:
        "python -m workflow_scripts.rules.score_base_model --config {params.config:q} "
        "{params.genome} {params.paths} --shard {wildcards.shard} --shards {wildcards.shards} "
        "--console-fd 3 3>&2 > {log:q} 2>&1"


rule make_calls:
    input:
        scores=scores_tables(),
        sites="results/annotation/sites.parquet",
        genes="results/annotation/genes.parquet",
        gene_clusters="results/annotation/gene_clusters.parquet",
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
    output:
        calls="results/calls/calls.parquet",
        summary="results/calls/summary.json",
    log:
        "logs/make_calls.log",
    benchmark:
        "results/benchmarks/make_calls.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("make_calls"),
        inputs=user_input_digests(scores_tables()),
        config=calling_config(MAKE_CALLS_KEYS),
        genome=genome_args,
        paths=path_args("scores", "sites", "genes", "gene_clusters"),
    shell:
        "python -m workflow_scripts.rules.make_calls --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"
