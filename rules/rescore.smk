# Corrected calls for a genome without an annotation (calling.start regions; docs/sites.md):
# genome (+ calling.regions, a BED) -> target_regions -> [score_base_model, one job per shard]
#   -> rescore_sites (sites.transfer: another genome's re-scorer) -> results/rescored/
# Included before calling.smk: score_base_model reads scored_spans().
REGIONS_TABLE = "results/regions/regions.parquet"
RESCORED_DIR = "results/rescored"


def scored_spans():
    """What score_base_model scores: the target regions (calling.start regions), else the
    annotation's genes."""
    if calling_start() == "regions":
        return REGIONS_TABLE
    return "results/annotation/genes.parquet"


def calling_regions():
    """calling.regions: the BED of the regions to score; [] = every chromosome."""
    path = config["calling"].get("regions")
    return [path] if path else []


def rescore_sites_config():
    """--config for rescore_sites: site_calls' calling keys, the sites section (the re-scorer's
    feature settings are checked against it) and evaluate's batch_size (its deep models).
    """
    calling = {key: config["calling"][key] for key in SITE_CALLS_KEYS}
    evaluate = {"batch_size": config["evaluate"]["batch_size"]}
    sections = {"calling": calling, "sites": config["sites"], "evaluate": evaluate}
    return json.dumps(sections, sort_keys=True)


def rescore_outputs():
    """rule all's targets with calling.start regions: the corrected calls and their report."""
    return list(rules.rescore_sites.output)


rule target_regions:
    input:
        regions=calling_regions(),
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
    output:
        regions=REGIONS_TABLE,
    log:
        "logs/target_regions.log",
    benchmark:
        "results/benchmarks/target_regions.tsv"
    conda:
        "../envs/data.yaml"
    params:
        code=rule_code("target_regions"),
        inputs=user_input_digests(calling_regions()),
        genome=genome_args,
        paths=path_args("regions"),
    shell:
        "python -m workflow_scripts.rules.target_regions "
        "{params.genome} {params.paths} > {log:q} 2>&1"


rule rescore_sites:
    input:
        scores=scores_tables(),
        regions=REGIONS_TABLE,
        index="results/genome/index.tsv",
        sequence="results/genome/sequence.npy",
        transfer=site_transfer_inputs(),
    output:
        calls=f"{RESCORED_DIR}/corrected_calls.parquet",
        bed=f"{RESCORED_DIR}/corrected_calls.bed",
        gff3=f"{RESCORED_DIR}/corrected_calls.gff3",
        report=f"{RESCORED_DIR}/report.json",
    log:
        "logs/rescore_sites.log",
    benchmark:
        "results/benchmarks/rescore_sites.tsv"
    conda:
        "../envs/train.yaml"
    # one thread, as site_calls: scikit-learn's and torch's threads spin on a busy machine
    threads: 1
    params:
        code=rule_code("rescore_sites"),
        inputs=user_input_digests(site_transfer_manifest()),
        config=rescore_sites_config(),
        genome=genome_args,
        paths=path_args("scores", "regions", "transfer"),
    shell:
        "python -m workflow_scripts.rules.rescore_sites --config {params.config:q} "
        "{params.genome} {params.paths} > {log:q} 2>&1"
