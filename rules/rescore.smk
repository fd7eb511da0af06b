# Corrected calls for a genome without an annotation (calling.start regions; docs/sites.md):
# genome (+ calling.regions, a BED) -> target_regions -> [score_base_model, one job per shard]
#   -> rescore_sites (sites.transfer: another genome's re-scorer) -> results/rescored/
# Its paths and helpers: workflow_scripts/workflow/rule_files.py (score_base_model reads
# files.scored_spans()).
rule target_regions:
    input:
        regions=files.calling_regions(),
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
    output:
        regions=layout.REGIONS_TABLE,
    log:
        "logs/target_regions.log",
    benchmark:
        "results/benchmarks/target_regions.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("target_regions"),
        inputs=user_input_digests(files.calling_regions()),
        genome=genome_args,
        paths=path_args("target_regions"),
    shell:
        "python -m workflow_scripts.rules.target_regions "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule rescore_sites:
    input:
        scores=files.scores_tables(),
        regions=layout.REGIONS_TABLE,
        index=layout.GENOME_INDEX,
        sequence=layout.GENOME_SEQUENCE,
        genome_record=layout.GENOME_RECORD,
        score_records=files.score_records(),
        transfer=files.site_transfer_inputs(),
    output:
        calls=f"{layout.RESCORED_DIR}/corrected_calls.parquet",
        bed=rescore_report_output("corrected_calls.bed"),
        gff3=f"{layout.RESCORED_DIR}/corrected_calls.gff3",
        report=rescore_report_output("report.json"),
        html=rescore_report_output("rescored.html"),
    log:
        "logs/rescore_sites.log",
    benchmark:
        "results/benchmarks/rescore_sites.tsv"
    conda:
        "../envs/train.yaml"
    # one thread, as site_calls: scikit-learn's and torch's threads spin on a busy machine
    threads: 1
    # memory grows with the nt scored: every candidate is held (workflow/resources.py)
    resources:
        mem_mb=files.rescore_mem_mb,
    params:
        code=rule_code("rescore_sites"),
        inputs=user_input_digests(files.site_transfer_manifest()),
        config=stage_config("rescore_sites"),
        genome=genome_args,
        paths=path_args("rescore_sites"),
    shell:
        "python -m workflow_scripts.rules.rescore_sites --config {params.config:q} "
        "{params.genome} {params.paths} --console-fd 3 3>&2 > {log:q} 2>&1"
