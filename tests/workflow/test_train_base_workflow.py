"""train_base in the real Snakemake workflow on the 3-gene A. thaliana slice: base_data's blocks,
one job per seed (two 80-nt models, torchrun with 2 gloo ranks each) and, in the same run,
evaluate_base comparing them with a reference folder (`evaluate_base.models` naming
results/train_base/models); then score_base_model reading them through
`calling.base_model.weights: results/train_base/models`."""

from __future__ import annotations

import json

import torch

from tests.calls_fixtures import annotation_workdir
from tests.workflow_helpers import planned_rules, rulegraph_edges, snakemake, stacked_config, write_config
from workflow_scripts import layout
from workflow_scripts.calling.openspliceai import OpenSpliceAIModel


def reference_folder(workdir) -> str:
    """A folder of one random-weight 80-nt OpenSpliceAI model: evaluate_base's reference."""
    folder = workdir / "reference"
    folder.mkdir()
    torch.save(OpenSpliceAIModel(8, 4).state_dict(), folder / "model_80nt_rs1.pt")
    return str(folder)


def test_train_base_trains_one_model_per_seed_evaluated_and_scored_with_in_the_same_run(tmp_path):
    config = annotation_workdir(tmp_path, shards=1)
    evaluated = {"models": [reference_folder(tmp_path), layout.TRAIN_BASE_MODELS], "bootstrap_replicates": 20}
    settings = {**stacked_config("train-base"), "evaluate_base": evaluated}
    trained = write_config(tmp_path, "train_base.yaml", settings)
    models = [layout.TRAIN_BASE_MODEL.format(context=80, seed=seed) for seed in (1, 2)]
    graph = snakemake(tmp_path, "--rulegraph", "--configfile", str(config), str(trained), cores=None)
    assert ("train_base", "evaluate_base") in rulegraph_edges(graph.stdout), graph.stdout[-3000:]
    run = snakemake(tmp_path, *models, layout.BASE_EVAL_METRICS, "--configfile", str(config), str(trained))
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((tmp_path / layout.BASE_EVAL_METRICS).read_text())
    assert list(report["models"]) == ["reference", "models"], list(report["models"])
    assert report["models"]["models"]["files"] == ["model_80nt_rs1.pt", "model_80nt_rs2.pt"], report["models"]
    for seed, model in zip((1, 2), models, strict=True):
        state = torch.load(tmp_path / model, weights_only=True)
        assert "final_conv.weight" in state and "residual_units.4.conv.weight" in state
        provenance = json.loads((tmp_path / model.replace(".pt", ".provenance.json")).read_text())
        assert provenance["seed"] == seed and provenance["optimizer_steps"] == 2
        log = (tmp_path / f"logs/train_base/model_80nt_rs{seed}.log").read_text()
        assert "labelled nt/s" in log and "world size 2" in log
    again = snakemake(tmp_path, *models, layout.BASE_EVAL_METRICS, "--configfile", str(config), str(trained))
    assert "Nothing to be done" in again.stdout + again.stderr

    wide = write_config(tmp_path, "wide.yaml", {"train_base": {"context": 2000}})
    failed = snakemake(
        tmp_path,
        layout.TRAIN_BASE_MODEL.format(context=2000, seed=1),
        "--configfile",
        str(config),
        str(trained),
        str(wide),
    )
    assert failed.returncode != 0
    log = (tmp_path / "logs/train_base/model_2000nt_rs1.log").read_text().strip().splitlines()
    assert log[-1] == (
        "errorseq: error: results/base_data/manifest.json: context: the blocks carry 400 nt of context; "
        "train_base.context 2000 needs more (base_data.context)"
    ), log[-3:]

    scored = write_config(
        tmp_path, "scored.yaml", {"calling": {"base_model": {"weights": layout.TRAIN_BASE_MODELS}}}
    )
    files = ("--configfile", str(config), str(trained), str(scored))
    graph = snakemake(tmp_path, "--rulegraph", *files, cores=None)
    assert graph.returncode == 0, graph.stderr[-3000:]
    assert ("train_base", "score_base_model") in rulegraph_edges(graph.stdout)
    shard = layout.SCORE_SHARD.format(shard=1, shards=1)
    plan = snakemake(tmp_path, "-n", shard, *files)
    assert planned_rules(plan.stdout) >= {"score_base_model"} and "train_base" not in planned_rules(
        plan.stdout
    )
    scores = snakemake(tmp_path, shard, *files)
    assert scores.returncode == 0, scores.stderr[-3000:]
    log = (tmp_path / "logs/score_base_model/1-of-1.log").read_text()
    assert f"2 models (openspliceai) from {models[0]}, {models[1]}" in log
    assert (tmp_path / shard).stat().st_size > 0
