"""A re-scorer folder for the tests of calling.start regions (rescore_sites): fitted by site_calls'
own code on the made-up genome of site_fixtures.profile_genome, with the sites settings at the
schema's defaults, and optionally two tiny fold CNNs on 11-nt windows as its deep models; and a
working folder that runs the A. thaliana slice with no annotation through the workflow."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import torch

from tests.calls_fixtures import DATA, FASTA
from tests.site_fixtures import profile_genome, settings
from tests.spliceai_fixtures import write_spliceai_h5
from tests.workflow_helpers import write_config
from workflow_scripts.calling.scores import decode
from workflow_scripts.models.builtin import build_model
from workflow_scripts.sites.candidates import find_candidates
from workflow_scripts.sites.deep_transfer import DeepModels
from workflow_scripts.sites.folds import assign_folds
from workflow_scripts.sites.items import Items
from workflow_scripts.sites.predictors import predict_out_of_fold
from workflow_scripts.sites.rescorer import fit_rescorer
from workflow_scripts.sites.rescorer_files import save_rescorer
from workflow_scripts.tokenization.tokenizers import NucleotideTokenizer

DEEP_FLANK = 5


def tiny_model_json() -> dict:
    """model.json of a one-layer CNN on 11-nt windows that reads the sequence alone."""
    return {
        "model": {"d_model": 8, "n_layers": 1},
        "tokenizer": NucleotideTokenizer(1).to_dict(),
        "max_tokens": 16,
        "window": {"flank": DEEP_FLANK, "length": 2 * DEEP_FLANK + 1, "site_offset": DEEP_FLANK},
        "input_columns": [],
        "score_channels": [],
    }


def tiny_state(seed: int) -> dict:
    torch.manual_seed(seed)
    saved = tiny_model_json()
    return build_model(
        saved["model"], NucleotideTokenizer(1).vocab_size, saved["max_tokens"], pretrained=False
    ).state_dict()


def whole_region_results(predictor: str) -> dict:
    """A manifest's results as site_calls writes them after a whole-region scan that recommends
    `predictor` over the whole region (sites/recommend.py)."""
    return {
        "answer": "made up",
        "whole_region": {"scored": "regions"},
        "recommended": {"predictor": predictor, "basis": "whole region"},
    }


def write_rescorer(folder: Path, deep: bool, seed: int = 0, results: dict | None = None) -> Path:
    """site_calls' re-scorer of profile_genome(seed), saved as its folder (sites/rescorer_files.py);
    `results`: its manifest's (default: made up, no recommendation)."""
    scores, sites, genes, clusters = profile_genome(seed=seed)
    found = assign_folds(find_candidates([("chr1", scores)], sites, genes, settings()), clusters, 5, seed=0)
    items = Items.from_candidates(found)
    predictions = predict_out_of_fold(found, items, settings())
    models = None
    if deep:
        truth = found.table["is_true_site"].to_numpy()
        predictions = replace(predictions, errorseq_probability=np.where(truth, 0.8, 0.2))
        models = DeepModels((tiny_state(1), tiny_state(2)), (tiny_model_json(), tiny_model_json()))
    facts = {"source": "chr1", "source_sites": sites.height}
    rescorer = fit_rescorer(found, items, predictions, settings(), facts, models)
    save_rescorer(rescorer, str(folder), {"numpy": np.__version__}, results or {"answer": "made up"})
    return folder


def scores_frame(seed: int) -> pl.DataFrame:
    """profile_genome(seed)'s scores as a scores table (SCORE_COLUMNS)."""
    scores = profile_genome(seed=seed)[0]
    where = decode(scores.keys, scores.groups)
    return where.select(
        pl.lit("made-up").alias("gene_id"),
        "chrom",
        "strand",
        "position",
        pl.Series("donor", scores.donor),
        pl.Series("acceptor", scores.acceptor),
    )


# + strand only, then both strands of the slice's last 3 kb (a gene pair lies there)
BED = "track name=regions\nNC_003070.9\t3000\t6000\tAT1G01010\t0\t+\nNC_003070.9\t11000\t14000\n"


_DEEP_RESCORER: list[tempfile.TemporaryDirectory] = []  # fitted once per process (about 10 CPU-s)


def copy_of_deep_rescorer(folder: Path) -> Path:
    """write_rescorer(folder, deep=True)'s folder, fitted on the first call and copied after: the
    same files each time (fixed seeds), as regions_workdir's callers read them."""
    if not _DEEP_RESCORER:
        scratch = tempfile.TemporaryDirectory(prefix="errorseq-rescorer-")  # removed at exit
        write_rescorer(Path(scratch.name) / "rescorer", deep=True)
        _DEEP_RESCORER.append(scratch)
    return Path(shutil.copytree(Path(_DEEP_RESCORER[0].name) / "rescorer", folder))


def regions_workdir(directory: Path, bed: bool) -> Path:
    """The slice's genome, two tiny SpliceAI-shaped models in two shards and a re-scorer with deep
    models; calling.start regions over BED's regions (`bed`) or the whole slice."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / FASTA, directory / FASTA)
    (directory / "models").mkdir()
    for seed in (1, 2):
        write_spliceai_h5(directory / "models" / f"model{seed}.h5", seed=seed)
    copy_of_deep_rescorer(directory / "source" / "rescorer")
    base_model = {"weights": "models", "shards": 2, "chunk_length": 500, "device": "cpu"}
    calling = {"start": "regions", "base_model": base_model}
    if bed:
        (directory / "regions.bed").write_text(BED)
        calling["regions"] = "regions.bed"
    values = {"genome": FASTA, "calling": calling, "sites": {"transfer": "source/rescorer"}}
    return write_config(directory, "regions.yaml", values)
