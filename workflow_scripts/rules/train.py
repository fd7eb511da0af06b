"""The `train` rule: train the experiment's classifier with torchrun, one worker per GPU (or
`--cpu-procs` CPU processes with gloo when `--gpus` is 0).

`--config` holds the sections model and train (cluster too, else the workflow's
ERRORSEQ_CLUSTER_ENV); `--gpus`, `--cpu-procs`, `--threads` and `--nodes` are the rule's resources.
`--init-encoder` is the pretrain rule's encoder.pt, when pretrain.enabled.
"""

from __future__ import annotations

from workflow_scripts.config.stages.train import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.training.entry import run_spec, start_run


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    spec = run_spec(paths, paths.out_weights, init_encoder=paths.init_encoder)
    start_run("classification", paths, cfg.sections(), spec)


if __name__ == "__main__":
    run_cli(main)
