"""A tiny BERT-style model and DNA BPE tokenizer, made from a config and saved to a directory."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY_BERT = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
}


def save_tiny_bert(directory: Path, sequences: list[str], vocab_size: int = 64) -> Path:
    """A BPE tokenizer learnt from `sequences` and a randomly initialised two-layer BERT,
    both saved (Hugging Face format) in `directory`."""
    transformers = pytest.importorskip("transformers")
    from workflow_scripts.tokenization.bpe import save_hf_tokenizer, train_bpe

    tokenizer = train_bpe(sequences, vocab_size, min_frequency=2)
    save_hf_tokenizer(tokenizer, directory)
    config = transformers.BertConfig(vocab_size=tokenizer.get_vocab_size(), **TINY_BERT)
    transformers.BertForSequenceClassification(config).save_pretrained(str(directory))
    return directory


REMOTE_CODE_DIR = Path(__file__).parent / "remote_code_model"
REMOTE_CODE_CONFIG = {
    "model_type": "bert",
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "alibi_starting_size": 64,
    "auto_map": {
        "AutoConfig": "configuration_alibi_bert.BertConfig",
        "AutoModel": "modeling_alibi_bert.AlibiBertModel",
        "AutoModelForSequenceClassification": "modeling_alibi_bert.AlibiBertForSequenceClassification",
    },
}


def save_remote_code_model(directory: Path, sequences: list[str], vocab_size: int = 64) -> Path:
    """A model directory that ships its own Python code (config.json `auto_map`), like
    DNABERT-2: a BPE tokenizer, the code files of tests/remote_code_model, and weights."""
    import json
    import shutil

    transformers = pytest.importorskip("transformers")
    from workflow_scripts.tokenization.bpe import save_hf_tokenizer, train_bpe

    tokenizer = train_bpe(sequences, vocab_size, min_frequency=2)
    save_hf_tokenizer(tokenizer, directory)
    for source in REMOTE_CODE_DIR.glob("*.py"):
        shutil.copy(source, directory / source.name)
    config = {**REMOTE_CODE_CONFIG, "vocab_size": tokenizer.get_vocab_size()}
    (directory / "config.json").write_text(json.dumps(config))
    auto = transformers.AutoModelForSequenceClassification
    model_config = transformers.AutoConfig.from_pretrained(str(directory), trust_remote_code=True)
    auto.from_config(model_config, trust_remote_code=True).save_pretrained(str(directory))
    return directory
