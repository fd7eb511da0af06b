"""The `demo_data` rule: write the synthetic demo genome (FASTA) and its splice-site calls (TSV)."""

from __future__ import annotations

import sys
import time

from workflow_scripts.config.stages.demo_data import STAGE
from workflow_scripts.config.types import DemoSection
from workflow_scripts.data.demo import generate_demo
from workflow_scripts.errors import run_cli


def main(argv: list[str] | None = None) -> None:
    paths, cfg = STAGE.parse(argv)
    demo: DemoSection = cfg.demo
    began = time.perf_counter()
    generate_demo(
        paths.out_genome,
        paths.out_calls,
        seed=demo.seed,
        n_genes=demo.n_genes,
        calls_per_gene=demo.calls_per_gene,
    )
    print(
        f"demo_data: wrote {paths.out_genome} and {paths.out_calls} in {time.perf_counter() - began:.2f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    run_cli(main)
