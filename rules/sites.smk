# Site-level re-scored calls (calling.start scores | annotation; docs/sites.md): the base model's
# local score maxima called out of fold over gene clusters by the base model at its threshold, the
# base model with per-type thresholds tuned on training genes, a tree on the score profiles and a
# k-mer baseline on the sequence around each candidate (window.flank, evaluate.kmer_max_k);
# the folder rescorer/ (that tree and those thresholds on all genes, as plain data) is what
# sites.transfer applies elsewhere.


rule site_calls:
    input:
        scores=files.scores_tables(),
        sites=layout.ANNOTATION_SITES,
        genes=layout.ANNOTATION_GENES,
        gene_clusters=layout.ANNOTATION_GENE_CLUSTERS,
        regions=files.scored_regions(),  # calling.regions with start annotation: a whole-region scan
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
        fold_windows=files.site_model_inputs("windows"),
        fold_manifest=files.site_model_inputs("manifest"),
        fold_weights=files.site_model_inputs("weights"),
        fold_model_config=files.site_model_inputs("model_config"),
        fold_predictions=files.site_model_inputs("predictions"),
        genome_record=layout.GENOME_RECORD,
        annotation_summary=layout.ANNOTATION_SUMMARY,
        score_records=files.score_records(),
        made_by=files.scores_made_by(),  # start scores: the weights that made them (provenance)
        transfer=files.site_transfer_inputs(),
    # every output always declared, and all in rule all (common.smk: site_outputs)
    output:
        calls=layout.SITE_CORRECTED_CALLS,
        tree_bed=site_report_output("tree_calls.bed"),
        base_bed=site_report_output("base_calls.bed"),
        metrics=site_report_output("site_metrics.json"),
        rescorer=directory(layout.SITE_RESCORER),
        errorseq_bed=site_report_output("errorseq_calls.bed"),
        corrected_bed=f"{layout.SITES_DIR}/corrected_calls.bed",
        corrected_gff3=f"{layout.SITES_DIR}/corrected_calls.gff3",
    log:
        "logs/site_calls.log",
    benchmark:
        "results/benchmarks/site_calls.tsv"
    conda:
        "../envs/train.yaml"
    # One thread: scikit-learn's OpenMP threads spin on a busy machine (a fit measured 25x slower
    # with 2 threads than with 1 at load 11 on 2 cores); --set-threads site_calls=N on a free one.
    threads: 1
    params:
        code=rule_code("site_calls"),
        inputs=user_input_digests(files.scores_tables(), files.site_transfer_manifest()),
        config=stage_config("site_calls"),
        genome=genome_args,
        paths=path_args("site_calls"),
    shell:
        "python -m workflow_scripts.rules.site_calls --config {params.config:q} "
        "{params.genome} {params.paths} --console-fd 3 3>&2 > {log:q} 2>&1"


# sites.model (docs/sites.md): the candidates as windows, one windows.parquet per fold, for the runs
# site_candidates_fold<i> (bucket, train, evaluate as any run); site_calls reads their models.
rule site_windows:
    input:
        scores=files.scores_tables(),
        sites=layout.ANNOTATION_SITES,
        genes=layout.ANNOTATION_GENES,
        gene_clusters=layout.ANNOTATION_GENE_CLUSTERS,
        regions=files.scored_regions(),
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        windows=files.site_windows_outputs(),
    log:
        "logs/site_windows.log",
    benchmark:
        "results/benchmarks/site_windows.tsv"
    conda:
        "../envs/train.yaml"
    params:
        code=rule_code("site_windows"),
        inputs=user_input_digests(files.scores_tables()),
        config=stage_config("site_windows"),
        genome=genome_args,
        paths=path_args("site_windows"),
    shell:
        "python -m workflow_scripts.rules.site_windows --config {params.config:q} "
        "{params.genome} {params.paths} --console-fd 3 3>&2 > {log:q} 2>&1"


# The report's site-calls section (report/workflow.rst shows it): the answer, every predictor's
# precision, recall, F1 and PR-AUC, every compared pair's F1 difference with its interval, and
# where the results came from (workflow_scripts/sites/summary.py).
rule site_summary:
    input:
        metrics=layout.SITE_METRICS,
    output:
        html=site_report_output("site_summary.html"),
    log:
        "logs/site_summary.log",
    benchmark:
        "results/benchmarks/site_summary.tsv"
    conda:
        "../envs/plot.yaml"
    params:
        code=rule_code("site_summary"),
        paths=path_args("site_summary"),
    shell:
        "python -m workflow_scripts.rules.site_summary {params.paths} > {log:q} 2>&1"


# `snakemake sites`: the site-level results alone (no errorseq experiment), with the report's section.
rule sites:
    input:
        site_outputs(),
    localrule: True
