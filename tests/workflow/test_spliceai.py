"""The real SpliceAI-10k ensemble of the installed `spliceai` package averages its five models
(six 10 kb passes, ~3 s idle). The port on random weights: tests/unit/test_spliceai.py."""

from __future__ import annotations

import numpy as np

from tests.spliceai_fixtures import installed_spliceai_models
from tests.unit.test_spliceai import real_gene_input, torch_forward
from workflow_scripts.calling.spliceai import load_ensemble


# six 10 kb passes of the real models (~3 s idle); averaging is also tested on random weights
def test_real_ensemble_averages_its_five_models():
    files = installed_spliceai_models()
    ensemble = load_ensemble(files[0].parent)
    assert len(ensemble.models) == 5 and ensemble.context == 10_000
    sequence = real_gene_input()
    each = [torch_forward(model, sequence) for model in ensemble.models]
    assert np.abs(each[0] - each[1]).max() > 1e-2  # five different models
    np.testing.assert_allclose(torch_forward(ensemble, sequence), np.mean(each, axis=0), atol=1e-6)
