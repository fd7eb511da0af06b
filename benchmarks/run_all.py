"""Every errorseq benchmark, one Markdown table each (`make bench`).

    python -m benchmarks.run_all [--quick]

--quick runs each benchmark at a tiny size (a smoke test, numbers meaningless; peers.py still
starts six torchrun jobs, ~2 min of it).
"""

from __future__ import annotations

import argparse
import platform
import tempfile

import numpy as np
import torch

from benchmarks import attention_dropout, dryrun, extraction, padding, peers, predict_memory, training
from benchmarks.common import load_line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that every benchmark runs")
    args = parser.parse_args(argv)
    print(
        f"# errorseq benchmarks\n\n{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, torch {torch.__version__}; {load_line()} at the start"
    )
    if args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            padding.main(["--n", "2000", "--no-demo"])
            training.main(["--n", "96", "--repeats", "1"])
            attention_dropout.main(["--quick", "--repeats", "1"])
            extraction.main(
                [
                    "--genome-mb",
                    "2",
                    "--windows",
                    "20000",
                    "--calls",
                    "4000",
                    "--pyfaidx-windows",
                    "500",
                    "--work-dir",
                    tmp,
                ]
            )
            predict_memory.main(["--calls", "4000", "8000", "--chunk-size", "2000", "--work-dir", tmp])
            peers.main(["--quick", "--work-dir", tmp])
        dryrun.main(["--repeats", "1"])
        return
    padding.main([])
    training.main([])
    attention_dropout.main([])
    extraction.main([])
    predict_memory.main([])
    dryrun.main([])
    peers.main([])


if __name__ == "__main__":
    main()
