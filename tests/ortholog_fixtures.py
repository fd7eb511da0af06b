"""Two made-up species for the cross-species ortholog tests: random genomes whose genes carry
site_fixtures' learnable score profiles, one target gene a planted copy of a source gene's exons,
written as finished site_calls work directories by the rules' own programs (site_calls, and for
sites.model site_windows, evaluate and untrained fold models)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from dataclasses import fields as fields_of
from pathlib import Path

import numpy as np
import polars as pl
import torch

from tests.evaluation_fixtures import write_buckets, write_untrained_model
from tests.site_fixtures import CHROM, gene_rows, set_scores, site_table
from workflow_scripts.command_line import path_flags
from workflow_scripts.data.genome import COMPLEMENT, Genome
from workflow_scripts.errors import run_cli
from workflow_scripts.layout import FoldRunFiles, fold_run_files
from workflow_scripts.rules import evaluate as evaluate_rule
from workflow_scripts.rules import site_calls, site_windows

GENE_LENGTH, GENE_SPACING = 500, 1000
EXONS = ((0, 199), (300, 499))  # offsets of each gene's two exons within it
BASES = np.frombuffer(b"ACGT", dtype=np.uint8)
SITE_CONFIG = {
    "calling": {},
    "sites": {
        "folds": 5,
        "bootstrap_replicates": 0,
        "flank": 10,
        "tree": {"max_iter": 20, "min_samples_leaf": 5},
    },
    "evaluate": {"kmer_max_k": 2, "batch_size": 64},
    "window": {"flank": 20},
}


@dataclass
class Species:
    """One chromosome: genes g000.. (prefix), alternating strands, each with peaks of score
    whose acceptor bump tells true donors from false ones (site_fixtures.profile_genome)."""

    genome: Genome
    scores: pl.DataFrame
    sites: pl.DataFrame
    genes: pl.DataFrame
    exons: pl.DataFrame
    clusters: pl.DataFrame


def species(prefix: str, n_genes: int, seed: int, peaks: int = 6) -> Species:
    rng = np.random.default_rng(seed)
    frames, sites, genes, exons = [], [], [], []
    for index in range(n_genes):
        gene_id, strand, start = f"{prefix}{index:03d}", "+-"[index % 2], GENE_SPACING * index + 1
        sign = 1 if strand == "+" else -1
        frame = gene_rows(gene_id, start, start + GENE_LENGTH - 1, strand)
        donors, bumps = {}, {}
        for peak in range(start + 60, start + 60 + 60 * peaks, 60):
            true = bool(rng.random() < 0.5)
            donors[peak] = float(rng.uniform(0.05, 0.95))
            bumps[peak + sign * (10 if true else -10)] = 0.004
            if true:
                sites.append((gene_id, peak, strand, "donor"))
        frames.append(
            set_scores(set_scores(frame, "donor", donors), "acceptor", bumps).with_columns(
                gene_id=pl.lit(gene_id)
            )
        )
        genes.append((gene_id, CHROM, start, start + GENE_LENGTH - 1, strand, "protein_coding"))
        exons += [(gene_id, CHROM, start + a, start + b, strand) for a, b in EXONS]
    length = GENE_SPACING * n_genes + 1000
    genome = Genome([CHROM], np.array([length]), rng.choice(BASES, length))
    gene_table = pl.DataFrame(
        genes, schema=["gene_id", "chrom", "start", "end", "strand", "biotype"], orient="row"
    )
    return Species(
        genome=genome,
        scores=pl.concat(frames).select("gene_id", "chrom", "strand", "position", "donor", "acceptor"),
        sites=site_table(sites),
        genes=gene_table,
        exons=pl.DataFrame(exons, schema=["gene_id", "chrom", "start", "end", "strand"], orient="row"),
        clusters=pl.DataFrame(
            {
                "gene_id": gene_table["gene_id"],
                "gene_cluster": [f"{prefix}c{i // 2:03d}" for i in range(n_genes)],
            }
        ),
    )


def exonic_bases(sample: Species, gene_id: str) -> list[np.ndarray]:
    rows = sample.exons.filter(pl.col("gene_id") == gene_id).sort("start")
    return [sample.genome.sequence[start - 1 : end].copy() for start, end in zip(rows["start"], rows["end"])]


def plant_copy(
    target: Species, target_gene: str, source: Species, source_gene: str, rate: float, seed: int
) -> None:
    """`target_gene`'s exons become `source_gene`'s, a `rate` of bases substituted; on the
    opposite strand the whole exonic sequence is reverse-complemented (a copy either strand)."""
    rng = np.random.default_rng(seed)
    pieces = exonic_bases(source, source_gene)
    flip = (
        target.genes.filter(pl.col("gene_id") == target_gene)["strand"][0]
        != source.genes.filter(pl.col("gene_id") == source_gene)["strand"][0]
    )
    if flip:
        pieces = [COMPLEMENT[piece[::-1]] for piece in pieces[::-1]]
    rows = target.exons.filter(pl.col("gene_id") == target_gene).sort("start")
    for piece, start, end in zip(pieces, rows["start"], rows["end"]):
        changed = rng.random(len(piece)) < rate
        piece[changed] = rng.choice(BASES, int(changed.sum()))
        target.genome.sequence[start - 1 : end] = piece


def annotation_paths(root: Path) -> dict[str, Path]:
    folder = root / "results/annotation"
    return {name: folder / f"{name}.parquet" for name in ("sites", "genes", "exons", "gene_clusters")}


def site_input_args(root: Path) -> list[str]:
    """The inputs site_calls and site_windows read, as their rules pass them."""
    paths = annotation_paths(root)
    inputs = {
        "scores": [root / "results/base_model/shards/1-of-1.parquet"],
        "sites": paths["sites"],
        "genes": paths["genes"],
        "gene_clusters": paths["gene_clusters"],
    }
    return [*path_flags(inputs, {}), "--genome", str(root / "results/genome")]


def write_inputs(root: Path, sample: Species) -> None:
    """What index_genome, annotate_sites, cluster_genes and score_base_model leave in a work directory."""
    (root / "results/genome").mkdir(parents=True)
    sample.genome.save(root / "results/genome/sequence.npy", root / "results/genome/index.tsv")
    paths = annotation_paths(root)
    paths["sites"].parent.mkdir(parents=True)
    for name, frame in (
        ("sites", sample.sites),
        ("genes", sample.genes),
        ("exons", sample.exons),
        ("gene_clusters", sample.clusters),
    ):
        frame.write_parquet(paths[name])
    (root / "results/base_model/shards").mkdir(parents=True)
    sample.scores.write_parquet(root / "results/base_model/shards/1-of-1.parquet")


def run_site_calls(root: Path, config: dict, errorseq: list[Path] = ()) -> None:
    sites = root / "results/sites"
    outputs = {
        name: sites / file
        for name, file in (
            ("calls", "corrected_calls.parquet"),
            ("tree_bed", "tree_calls.bed"),
            ("base_bed", "base_calls.bed"),
            ("metrics", "site_metrics.json"),
            ("rescorer", "rescorer.pkl"),
            ("errorseq_bed", "errorseq_calls.bed"),
        )
    }
    argv = [*site_input_args(root), *path_flags({}, outputs), "--config", json.dumps(config)]
    if errorseq:  # sites.model's run folders: their files, one path per fold, as the rule names them
        runs = [fold_run_files(str(folder)) for folder in errorseq]
        fields = [field.name for field in fields_of(FoldRunFiles)][1:]
        argv += path_flags({f"fold_{name}": [getattr(run, name) for run in runs] for name in fields}, {})
    run_cli(site_calls.main, argv)


def write_run(root: Path, sample: Species, config: dict = SITE_CONFIG) -> Path:
    """A finished site_calls work directory of `sample` (without sites.model)."""
    write_inputs(root, sample)
    run_site_calls(root, config)
    return root


def perturbed_model(paths: dict[str, Path], seed: int) -> None:
    """The untrained model's weights moved by seeded noise: each fold its own model."""
    generator = torch.Generator().manual_seed(seed)
    state = torch.load(paths["model"], weights_only=True)
    moved = {
        name: tensor + torch.randn(tensor.shape, generator=generator)
        if tensor.is_floating_point()
        else tensor
        for name, tensor in state.items()
    }
    torch.save(moved, paths["model"])


def write_model_run(root: Path, sample: Species, config: dict = SITE_CONFIG) -> Path:
    """A finished sites.model work directory: site_windows' windows of each fold, an untrained
    model of its own per fold (run site_candidates_fold<i>), evaluate's test predictions, then
    site_calls reading the runs (errorseq, out of fold)."""
    write_inputs(root, sample)
    config = {**config, "sites": {**config["sites"], "model": True}}
    folds = config["sites"]["folds"]
    runs = [root / f"results/site_candidates_fold{fold}" for fold in range(1, folds + 1)]
    windows = [run / "windows.parquet" for run in runs]
    windows_config = {**config, "split": {}}
    windows_config.pop("evaluate")
    run_cli(
        site_windows.main,
        [*site_input_args(root), "--out-windows", *map(str, windows), "--config", json.dumps(windows_config)],
    )
    for fold, (run, fold_windows) in enumerate(zip(runs, windows), start=1):
        buckets = write_buckets(fold_windows, run)
        (run / "buckets").mkdir()
        manifest = run / "buckets/manifest.parquet"
        buckets["manifest"].rename(manifest)
        (run / "model").mkdir()
        model = write_untrained_model(run / "model", 3001, windows=fold_windows, experiment=run.name)
        perturbed_model(model, seed=fold)
        (run / "evaluation").mkdir()
        evaluate_config = {"evaluate": {"batch_size": 64, "threshold": 0.5}, "train": {}}
        argv = [
            *path_flags(
                {
                    "windows": fold_windows,
                    "manifest": manifest,
                    "model": model["model"],
                    "model_config": model["model_config"],
                },
                {
                    "predictions": run / "evaluation/predictions.parquet",
                    "metrics": run / "evaluation/metrics.json",
                },
            ),
            "--experiment",
            run.name,
            "--config",
            json.dumps(evaluate_config),
        ]
        run_cli(evaluate_rule.main, argv)
    run_site_calls(root, config, runs)
    return root
