# train_base (docs/train_base.md): base_data's blocks -> one SpliceAI-family model per seed
# (train_base.seeds: N jobs, side by side on SLURM), in OpenSpliceAI's format, in the
# folder that calling.base_model.weights may name (results/train_base/models).
rule train_base:
    input:
        blocks=layout.BASE_DATA_BLOCKS,
        bases=layout.BASE_DATA_SEQUENCE,
        labels=layout.BASE_DATA_LABELS,
        data_manifest=layout.BASE_DATA_MANIFEST,
        init_weights=files.train_base_init(),
    output:
        model=layout.TRAIN_BASE_MODEL,
        provenance=layout.TRAIN_BASE_PROVENANCE,
        card=layout.TRAIN_BASE_CARD,
    log:
        "logs/train_base/model_{context}nt_rs{seed}.log",
    benchmark:
        "results/benchmarks/train_base/model_{context}nt_rs{seed}.tsv"
    wildcard_constraints:
        seed=r"[0-9]+",
        context=str(config["train_base"]["context"]),
    conda:
        "../envs/train.yaml"
    threads: 2
    resources:
        gpu=0,
        cpu_procs=2,
        nodes=1,
    params:
        code=rule_code("train_base"),
        inputs=user_input_digests(files.train_base_init()),
        config=stage_config("train_base"),
        run_dir=lambda wildcards: layout.TRAIN_BASE_RUN.format(seed=wildcards.seed),
        paths=path_args("train_base"),
    shell:
        "python -m workflow_scripts.rules.train_base --config {params.config:q} "
        "{params.paths} --run-dir {params.run_dir:q} --seed {wildcards.seed} "
        "--gpus {resources.gpu} --cpu-procs {resources.cpu_procs} --threads {threads} "
        "--nodes {resources.nodes} --console-fd 3 3>&2 > {log:q} 2>&1"
