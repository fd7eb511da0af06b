"""The GPU check's inputs, made once in its work folder: the demo's fp_vs_tp windows (the workflow
itself, a Snakemake target), bucketed per data kind of cases.DATA by the bucket rule, and for the
HF cases a BPE tokenizer learnt by the tokenizer rule with a BERT config beside it.

    work/demo/results/fp_vs_tp/windows.parquet   work/data/{nt,nt64k,bpe}/{manifest.parquet,summary.json}
    work/data/bert/ (tokenizer + config.json)    work/logs/*.log
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.gpu.cases import BERT_CONFIG, DATA
from benchmarks.inputs import demo_windows
from benchmarks.runner import run_rule

BPE = {"kind": "bpe", "vocab_size": 256, "max_windows": 20000}


def windows_path(work: Path) -> Path:
    return work / "demo" / "results" / "fp_vs_tp" / "windows.parquet"


def bucket_dir(work: Path, data: str) -> Path:
    return work / "data" / data


def bert_dir(work: Path) -> Path:
    return work / "data" / "bert"


def bucket(work: Path, data: str, config: dict, tokenizer: Path | None = None) -> None:
    """The bucket rule on the windows into data/<data>/ (manifest.parquet, summary.json)."""
    out = bucket_dir(work, data)
    inputs = {"windows": windows_path(work), "tokenizer": tokenizer}
    outputs = {"manifest": out / "manifest.parquet", "summary": out / "summary.json"}
    seconds = run_rule("bucket", config, work / "logs" / f"bucket_{data}.log", inputs, outputs)
    print(f"  bucket {data}: {seconds:.1f} s", flush=True)


def bpe_tokenizer(work: Path) -> None:
    """The tokenizer rule's BPE vocabulary and the HF cases' BERT config, in one folder."""
    import transformers

    inputs, outputs = {"windows": windows_path(work)}, {"tokenizer": bert_dir(work)}
    seconds = run_rule("tokenizer", {"tokenizer": BPE}, work / "logs" / "tokenizer.log", inputs, outputs)
    print(f"  tokenizer: {seconds:.1f} s", flush=True)
    transformers.BertConfig(vocab_size=BPE["vocab_size"], **BERT_CONFIG).save_pretrained(str(bert_dir(work)))


def prepare(work: Path, n_genes: int, data_kinds: set[str]) -> None:
    """What the selected cases train on (their `data` kinds), made where missing."""
    (work / "logs").mkdir(parents=True, exist_ok=True)
    demo_windows(work / "demo", demo={"n_genes": n_genes})
    for data in ("nt", "nt64k"):
        if not (bucket_dir(work, data) / "summary.json").exists():
            bucket(work, data, {"bucket": DATA[data]})
    if "bpe" in data_kinds and not (bucket_dir(work, "bpe") / "summary.json").exists():
        bpe_tokenizer(work)
        bucket(work, "bpe", {"tokenizer": BPE, "bucket": DATA["bpe"]}, bert_dir(work))
