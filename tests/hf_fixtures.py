"""A tiny BERT-style model and DNA BPE tokenizer, made from a config and saved to a directory."""

from __future__ import annotations

from pathlib import Path

import pytest

TINY_BERT = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 64, "max_position_embeddings": 512}


def save_tiny_bert(directory: Path, sequences: list[str], vocab_size: int = 64) -> Path:
    """A BPE tokenizer learnt from `sequences` and a randomly initialised two-layer BERT,
    both saved (Hugging Face format) in `directory`."""
    transformers = pytest.importorskip("transformers")
    from workflow_scripts.bpe_tokenizer import save_hf_tokenizer, train_bpe

    tokenizer = train_bpe(sequences, vocab_size, min_frequency=2)
    save_hf_tokenizer(tokenizer, directory)
    config = transformers.BertConfig(vocab_size=tokenizer.get_vocab_size(), **TINY_BERT)
    transformers.BertForSequenceClassification(config).save_pretrained(str(directory))
    return directory
