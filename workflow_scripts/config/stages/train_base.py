"""The declaration of the rule train_base (config/stage.py); its program: rules/train_base.py.

One job per seed. Every path enters as a declared input or output (the start weights too: the key
train_base.init_weights is the `init_weights` input, not part of --config); `seeds` and `enabled`
shape the workflow, not a job, so a new seed trains that seed alone."""

from __future__ import annotations

from workflow_scripts.config.stage import Input, Option, Output, Stage
from workflow_scripts.config.stages.shared import CONSOLE

JOB_KEYS = (
    "context",
    "strategy",
    "zero_stage",
    "precision",
    "epochs",
    "max_steps",
    "lr",
    "weight_decay",
    "adam_beta2",
    "decay_all_parameters",
    "warmup_fraction",
    "min_lr_ratio",
    "grad_clip",
    "grad_accumulation",
    "token_budget",
    "batch_mixing",
    "packing",
    "flank_n",
    "trainable_units",
    "l2sp",
    "batch_norm",
    "loss",
    "focal_gamma",
    "val_max_blocks",
    "export",
    "checkpoint_every_steps",
    "log_every_steps",
    "tensorboard",
)

STAGE = Stage(
    "train_base",
    "Train one SpliceAI-family base model (one seed) on base_data's blocks with torchrun.",
    inputs=(
        Input("blocks", "blocks.parquet (base_data)"),
        Input("bases", "sequence.npy (base_data); not `sequence`, the genome index's input name"),
        Input("labels", "labels.npy (base_data)"),
        Input("data_manifest", "manifest.json (base_data)"),
        Input(
            "init_weights",
            "the start: an OpenSpliceAI .pt or SpliceAI .h5 (train_base.init_weights)",
            required=False,
        ),
    ),
    outputs=(
        Output("model", "model_<context>nt_rs<seed>.pt: the state dict in OpenSpliceAI's format"),
        Output("provenance", "its provenance JSON"),
        Output("card", "its model card (markdown)"),
    ),
    config={"train_base": JOB_KEYS},
    optional_config=("cluster",),
    options=(
        Option("seed", "the model's seed (the {seed} wildcard)", type=int, required=True),
        Option(
            "run_dir", "the run's folder: checkpoints, steps.jsonl, curves.png, tensorboard", required=True
        ),
        CONSOLE,
        Option("gpus", "GPUs given to this job (resources.gpu)", type=int, default=0),
        Option("cpu_procs", "processes when there is no GPU (resources.cpu_procs)", type=int, default=2),
        Option("threads", "CPU cores of the job (threads)", type=int, default=1),
        Option("nodes", "nodes of the job (resources.nodes)", type=int, default=1),
    ),
)
