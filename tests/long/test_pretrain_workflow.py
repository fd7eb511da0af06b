"""The real Snakemake pipeline with the optional model paths (2 gloo ranks):

- a model directory that ships its own code (DNABERT-2 style, trust_remote_code) with its own
  tokenizer and weights: bucket → train → evaluate → plot;
- a tiny BERT made from a config in the test, with a BPE tokenizer learnt by the tokenizer rule:
  tokenizer → bucket → pretrain (masked LM) → train → evaluate → plot;
- pretrain → finetune on the demo data with the built-in CNN: masked-LM pretraining on random
  genome windows (where the demo's motif recurs as an element) gives a lower validation loss
  after the same finetune steps than random init (seed fixed, same model and train config).
"""

import json
import math
import random

import polars as pl
import pytest

pytest.importorskip("transformers")

from tests.hf_fixtures import TINY_BERT, save_remote_code_model  # noqa: E402
from tests.workflow_helpers import TINY_CONFIG, rulegraph_edges, snakemake, stacked_config, write_config  # noqa: E402

EXPERIMENT = "fp_vs_tp"
HF_CONFIG = stacked_config("hf")
SCRATCH_CONFIG = stacked_config("tiny", "scratch")
CNN_CONFIG = stacked_config("tiny", "scratch", "pretrain-genome")


def save_bert_config(directory):
    transformers = pytest.importorskip("transformers")
    transformers.BertConfig(vocab_size=64, **TINY_BERT).save_pretrained(str(directory))
    return directory


@pytest.fixture(scope="module")
def hf_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("hf_run")
    model_dir = save_bert_config(workdir / "tiny_bert")
    config = {**HF_CONFIG, "model": {"backbone": "hf", "path": str(model_dir), "init": "random"}}
    result = snakemake(workdir, "--configfile", str(write_config(workdir, "hf.yaml", config)))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return workdir


def test_genome_pretraining_adds_pretrain_and_no_tokenizer_to_the_dag(tmp_path):
    """Pretraining on the genome puts pretrain between bucket and train, and no tokenizer (the
    CNN reads bases); without it, test_workflow.py's dry run plans exactly the default rules."""
    config = write_config(tmp_path, "b.yaml", CNN_CONFIG)
    graph = snakemake(tmp_path, "--rulegraph", "--configfile", str(config))
    assert graph.returncode == 0, graph.stderr[-2000:]
    edges = rulegraph_edges(graph.stdout)
    assert ("pretrain", "train") in edges and ("bucket", "pretrain") in edges
    assert "tokenizer" not in {rule for edge in edges for rule in edge}


def test_hf_model_with_learnt_bpe_runs_the_whole_pipeline(hf_run):
    workdir = hf_run
    summary = json.loads((workdir / f"results/{EXPERIMENT}/buckets/summary.json").read_text())
    assert summary["tokenizer"]["kind"] == "hf"
    assert summary["tokenizer"]["path"] == f"results/{EXPERIMENT}/tokenizer"
    manifest = pl.read_parquet(workdir / f"results/{EXPERIMENT}/buckets/manifest.parquet")
    assert (manifest["token_length"] < manifest["length"]).all()  # BPE token counts
    assert summary["n_truncated"] == int((manifest["token_length"] > 128).sum())
    pretrain = json.loads((workdir / f"results/{EXPERIMENT}/pretrain/pretrain.json").read_text())
    assert pretrain["objective"] == "masked_lm" and pretrain["optimizer_steps"] > 0
    train_log = (workdir / f"logs/{EXPERIMENT}/train.log").read_text()
    assert "world size 2" in train_log and "encoder tensors from" in train_log
    saved = json.loads((workdir / f"results/{EXPERIMENT}/model/model.json").read_text())
    assert saved["model"]["backbone"] == "hf"
    metrics = json.loads((workdir / f"results/{EXPERIMENT}/evaluation/metrics.json").read_text())
    assert metrics["n"] > 0 and 0 <= metrics["accuracy"] <= 1
    assert (workdir / f"results/{EXPERIMENT}/plots/roc.png").stat().st_size > 5000


def finetune_history(workdir) -> list[dict]:
    model = json.loads((workdir / f"results/{EXPERIMENT}/model/model.json").read_text())
    return [{"step": record["step"], "val_loss": record["val_loss"]} for record in model["validation"]]


def test_finetuning_from_the_pretrained_encoder_beats_random_init(tmp_path):
    """Measured on the demo with centred 401-nt windows and the 16-nt motif: val loss after one
    epoch (38 steps) 0.109 from the pretrained encoder, 0.169 from random init (after a second
    epoch both reach ~0.10: pretraining speeds finetuning up on this easy signal)."""
    scratch = snakemake(
        tmp_path, "--until", "train", "--configfile", str(write_config(tmp_path, "a.yaml", SCRATCH_CONFIG))
    )
    assert scratch.returncode == 0, scratch.stdout[-2000:] + scratch.stderr[-4000:]
    from_scratch = finetune_history(tmp_path)
    pretrained = snakemake(
        tmp_path, "--until", "train", "--configfile", str(write_config(tmp_path, "b.yaml", CNN_CONFIG))
    )
    assert pretrained.returncode == 0, pretrained.stdout[-2000:] + pretrained.stderr[-4000:]
    assert "encoder tensors from" in (tmp_path / f"logs/{EXPERIMENT}/train.log").read_text()
    pretrain = json.loads((tmp_path / f"results/{EXPERIMENT}/pretrain/pretrain.json").read_text())
    assert pretrain["source"] == "genome" and pretrain["validation"][-1]["val_loss"] < math.log(4)
    from_pretrained = finetune_history(tmp_path)
    assert [r["step"] for r in from_pretrained] == [r["step"] for r in from_scratch]
    print(f"\nval loss after one epoch: pretrained {from_pretrained}, scratch {from_scratch}")
    assert from_pretrained[-1]["val_loss"] < from_scratch[-1]["val_loss"] - 0.05, (
        from_pretrained,
        from_scratch,
    )


def test_model_with_its_own_code_runs_from_a_local_directory(tmp_path):
    """DNABERT-2 style: config.json auto_map → the directory's .py files, its own BPE tokenizer,
    ALiBi positions (bucket.max_length 96 > max_position_embeddings 64); 401-nt windows, some
    longer than 96 tokens (truncated)."""
    rng = random.Random(0)
    sequences = ["".join(rng.choice("ACGT") for _ in range(400)) for _ in range(300)]
    (tmp_path / "alibi_bert").mkdir()
    model_dir = save_remote_code_model(tmp_path / "alibi_bert", sequences)
    config = {
        **TINY_CONFIG,
        "window": {"flank": 200},
        "bucket": {"max_length": 96, "max_tokens_per_batch": 3200},
        "model": {"backbone": "hf", "path": str(model_dir), "trust_remote_code": True},
        "train": {"epochs": 1, "lr": 0.0005},
    }
    config_file = write_config(tmp_path, "remote.yaml", config)
    # up to evaluate: plots and explain of a BPE model are drawn in the hf_run test
    result = snakemake(
        tmp_path, f"results/{EXPERIMENT}/evaluation/metrics.json", "--configfile", str(config_file)
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    summary = json.loads((tmp_path / f"results/{EXPERIMENT}/buckets/summary.json").read_text())
    assert summary["tokenizer"] == {"kind": "hf", "path": str(model_dir), "trust_remote_code": True}
    assert summary["n_truncated"] > 0
    assert "world size 2" in (tmp_path / f"logs/{EXPERIMENT}/train.log").read_text()
    metrics = json.loads((tmp_path / f"results/{EXPERIMENT}/evaluation/metrics.json").read_text())
    assert metrics["n"] > 0 and metrics["roc_auc"] is not None
