"""The `pretrain` rule: masked-LM pretraining of the classifier's encoder with torchrun (same
strategies, buckets and resources as `train`); writes the encoder.pt that `train` starts from.

`--config` holds the sections model, train and pretrain (pretrain's epochs, lr and max_steps
replace train's); `--genome-index` is the indexed genome, with pretrain.source genome only.
"""

from __future__ import annotations

from pathlib import Path

from workflow_scripts.config.stages.pretrain import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.training.entry import run_spec, start_run
from workflow_scripts.training.objectives.masked_lm import pretrain_train_section


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    genome_dir = str(Path(paths.genome_index).parent) if paths.genome_index else None
    spec = run_spec(paths, paths.out_weights, genome_dir=genome_dir)
    sections = cfg.sections()
    # the loop's settings: train: with pretrain.epochs, lr and max_steps (ranges of train's own)
    sections = {**sections, "train": pretrain_train_section(sections["train"], sections["pretrain"])}
    start_run("masked_lm", paths, sections, spec)


if __name__ == "__main__":
    run_cli(main)
