"""OpenSpliceAI's published A. thaliana models (../shared/data/openspliceai or
$ERRORSEQ_OPENSPLICEAI) through errorseq equal OpenSpliceAI's own model class on a real gene at a
chromosome start, on both strands, max |delta| <= 1e-5 in fp32 (random weights, every flank and
the bad-file refusals: tests/unit/test_openspliceai.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.spliceai_fixtures import openspliceai_models
from tests.unit.test_spliceai import real_gene_input, torch_forward
from workflow_scripts.calling.spliceai import load_ensemble

reference = pytest.importorskip(
    "openspliceai.train_base.openspliceai", reason="make setup installs openspliceai"
)
COMPLEMENT = str.maketrans("ACGTN", "TGCAN")
ONE_HOT = {"A": [1, 0, 0, 0], "C": [0, 1, 0, 0], "G": [0, 0, 1, 0], "T": [0, 0, 0, 1]}
WIDTHS = np.array([11] * 8 + [21] * 4 + [41] * 4)
DILATIONS = np.array([1] * 4 + [4] * 4 + [10] * 4 + [25] * 4)


def reference_forward(path, sequence: str) -> np.ndarray:
    model = reference.SpliceAI(32, WIDTHS, DILATIONS)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    encoded = np.array([ONE_HOT.get(base, [0, 0, 0, 0]) for base in sequence], np.float32).T[None]
    with torch.no_grad():
        return model.eval()(torch.from_numpy(encoded))[0].T.double().numpy()


@pytest.mark.parametrize("strand", ["+", "-"])
def test_published_arabidopsis_models_equal_openspliceai(strand):
    ensemble = load_ensemble(openspliceai_models("arabidopsis"))
    assert ensemble.family == "openspliceai" and ensemble.context == 10_000
    sequence = real_gene_input()  # AT1G01010's first intron; the chromosome start is N-padded
    if strand == "-":
        sequence = sequence.translate(COMPLEMENT)[::-1]
    for model in ensemble.models[:2]:
        expected = reference_forward(model.source, sequence)
        got = torch_forward(model, sequence)
        assert got.shape == expected.shape == (500, 3)
        np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    if strand == "+":  # a species-trained model finds the gene's first intron: donor 3913, acceptor 3996
        scores = torch_forward(ensemble, sequence)
        assert scores[3913 - 3601, 2] > 0.5 and scores[3996 - 3601, 1] > 0.5
