"""A transfer between genomes scored by different base-model weights is refused, naming both."""

from __future__ import annotations

import pytest

from workflow_scripts.errors import InputError
from workflow_scripts.sites.base_match import base_mismatch, check_same_base


def weights(family, species, *digests):
    files = [{"path": f"/models/m{i}.pt", "sha256": digest} for i, digest in enumerate(digests)]
    return {"source": "weights", "family": family, "species": species, "files": files}


ARABIDOPSIS = weights("openspliceai", "Arabidopsis thaliana", "a1", "a2", "a3")
SPLICEAI = weights("keras-spliceai", "Homo sapiens", "s1", "s2")


def test_other_weights_are_refused_naming_both():
    with pytest.raises(InputError) as error:
        check_same_base(SPLICEAI, ARABIDOPSIS, "builtin/rescorer")
    message = str(error.value)
    assert error.value.field == "source.base_model" and "\n" not in message
    assert "keras-spliceai models trained on Homo sapiens" in message
    assert "openspliceai models trained on Arabidopsis thaliana (m0.pt, m1.pt and 1 more)" in message


def test_the_same_weights_in_another_order_or_folder_pass():
    moved = weights("openspliceai", "Arabidopsis thaliana", "a3", "a1", "a2")
    assert check_same_base(ARABIDOPSIS, moved, "r") is True


def test_an_unknown_side_cannot_be_compared():
    scores_given = {"source": "scores table given", "files": [{"path": "s.parquet", "sha256": "x"}]}
    assert base_mismatch(scores_given, ARABIDOPSIS) is None
    assert check_same_base(None, ARABIDOPSIS, "r") is False


def test_a_scores_table_made_by_named_weights_is_compared_by_them():
    made_by_spliceai = {
        "source": "scores table given",
        "files": [{"path": "s.parquet", "sha256": "x"}],
        "made_by": SPLICEAI,
    }
    with pytest.raises(InputError, match="keras-spliceai models trained on Homo sapiens"):
        check_same_base(made_by_spliceai, ARABIDOPSIS, "r")
    assert check_same_base({**made_by_spliceai, "made_by": ARABIDOPSIS}, ARABIDOPSIS, "r") is True
