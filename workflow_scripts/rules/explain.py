"""The `explain` rule: what one experiment's model learnt. Attribution over the test windows
aligned on the splice site (attribution.tsv), k-mer enrichment of error against correct windows
(kmers.tsv), and the plots artifacts.EXPLAIN_PLOTS. `--config` holds the section explain."""

from __future__ import annotations

from workflow_scripts.config.stages.explain import STAGE
from workflow_scripts.errors import run_cli
from workflow_scripts.inference.explain import ExplainPaths, explain


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    files = ExplainPaths(
        paths.windows, paths.model, paths.model_config, paths.out_attribution, paths.out_kmers, paths.out_dir
    )
    explain(files, cfg.explain, paths.experiment)


if __name__ == "__main__":
    run_cli(main)
