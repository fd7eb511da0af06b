"""The `train_base` rule: one SpliceAI-family base model (one seed) trained on base_data's blocks
with torchrun, one worker per GPU (or `--cpu-procs` CPU processes with gloo when `--gpus` is 0).

`--config` holds train_base's job keys (cluster too, else the workflow's cluster channel); the
start weights are the `--init-weights` input (absent: from scratch); the outputs are the model in
OpenSpliceAI's format, its provenance and its card; `--run-dir` holds checkpoints and curves.
"""

from __future__ import annotations

from workflow_scripts.config.stages.train_base import STAGE
from workflow_scripts.config.train_base import TrainBaseSection
from workflow_scripts.errors import run_cli
from workflow_scripts.training.base.blocks import BaseDataFiles
from workflow_scripts.training.base.run_files import BaseRun
from workflow_scripts.training.base.start import start
from workflow_scripts.training.launch import Resources


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    section = TrainBaseSection.from_completed(cfg.completed("train_base"))
    cluster = cfg.completed("cluster")
    run = BaseRun(
        seed=paths.seed,
        data=BaseDataFiles(paths.blocks, paths.bases, paths.labels, paths.data_manifest),
        init_weights=paths.init_weights,
        out_model=paths.out_model,
        out_provenance=paths.out_provenance,
        out_card=paths.out_card,
        run_dir=paths.run_dir,
    )
    resources = Resources(paths.gpus, paths.cpu_procs, paths.threads, paths.nodes)
    start(run, section, cluster, resources, paths.console_fd)


if __name__ == "__main__":
    run_cli(main)
