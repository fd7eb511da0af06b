"""The `tokenizer` rule: learn a DNA BPE tokenizer on the train windows (tokenizer.kind bpe).

`--config` holds the sections tokenizer (vocab_size, min_frequency, max_windows) and split (its
seed draws the sample of train windows when there are more than max_windows).
"""

from __future__ import annotations

import sys

from workflow_scripts.config.stages.tokenizer import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.tokenization.bpe import learn_tokenizer


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    report = learn_tokenizer(paths.windows, cfg.tokenizer, cfg.split.seed, paths.out_tokenizer)
    print(report, file=sys.stderr)


if __name__ == "__main__":
    run_cli(main)
