"""Cross-field checks of the model:, tokenizer: and pretrain: sections (HF, BPE, pretraining)."""

import pytest

from tests.workflow_helpers import ROOT
from workflow_scripts.config.validate import load_schema, validate_config
from workflow_scripts.errors import InputError

SCHEMA = load_schema(ROOT / "config/config.schema.yaml")
BASE = {
    "genome": "g.fa",
    "calls": "c.tsv",
    "experiments": [{"name": "e", "error_label": "FP", "correct_label": "TP"}],
}


def check(**sections):
    return validate_config({**BASE, **sections}, SCHEMA)


def test_defaults_keep_the_builtin_model_and_no_pretraining():
    config = check()
    assert config["model"]["backbone"] == "builtin" and config["tokenizer"]["kind"] == "auto"
    assert config["pretrain"]["enabled"] is False and config["model"]["trust_remote_code"] is False


@pytest.mark.parametrize(
    "sections, key",
    [
        ({"model": {"backbone": "hf"}}, "model.path"),
        ({"model": {"backbone": "hf", "path": "m"}, "tokenizer": {"kind": "nucleotide"}}, "tokenizer.kind"),
        ({"model": {"backbone": "hf", "path": "m"}, "tokenizer": {"kind": "bpe"}}, "tokenizer.kind"),
        ({"tokenizer": {"kind": "hf"}}, "tokenizer.path"),
        ({"pretrain": {"enabled": True, "source": "genome"}, "sequences": "s.tsv"}, "pretrain.source"),
        ({"pretrain": {"mask_fraction": 1.5}}, "pretrain.mask_fraction"),
    ],
)
def test_inconsistent_model_settings_name_the_key(sections, key):
    config = {**BASE, **sections}
    if "sequences" in sections:
        config = {k: v for k, v in config.items() if k not in ("genome", "calls")}
    with pytest.raises(InputError, match=key.replace(".", r"\.")):
        validate_config(config, SCHEMA)


def test_bpe_with_a_randomly_initialised_hf_model_is_accepted():
    config = check(model={"backbone": "hf", "path": "m", "init": "random"}, tokenizer={"kind": "bpe"})
    assert config["tokenizer"]["vocab_size"] == 256
