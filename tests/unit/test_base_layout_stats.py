"""The layout arithmetic of base_training/layout_stats.py against OpenSpliceAI's own create-data
code (openspliceai 0.0.7, create_data/utils.py: create_datapoints pads each gene with 5,000 N a
side and cuts windows of 15,000 nt per 5,000 labels; train_base/utils.py: clip_datapoints crops them
for a smaller flank)."""

from __future__ import annotations

import numpy as np
import pytest

from testkit.openspliceai_layout import create_datapoints, measured_layout
from workflow_scripts.base_training.layout_stats import errorseq_layout, layout_table, osai_layout


@pytest.mark.parametrize("context", [10_000, 2_000, 80])
def test_openspliceai_layout_equals_its_own_create_datapoints(context):
    function = create_datapoints()
    if function is None:
        pytest.skip("openspliceai is not installed")
    rng = np.random.default_rng(0)
    lengths = [1, 4_999, 5_000, 5_001, 12_345, 30_000]
    sequences = ["".join(rng.choice(list("ACGT"), length)) for length in lengths]
    measured = measured_layout(function, sequences, context)
    stats = osai_layout(np.array(lengths), context)
    assert {key: stats[key] for key in measured} == measured


def test_errorseq_layout_reads_each_core_once_with_its_two_flanks():
    stats = errorseq_layout(np.array([50_000, 10_000]), 5_000, padding_nt=123, genes=7)
    assert stats["input_nt"] == 60_000 + 20_000 and stats["labelled_nt"] == 60_000
    assert stats["input_per_labelled"] == round(80_000 / 60_000, 4) and stats["padding_nt"] == 123
    osai = osai_layout(np.array([50_000, 10_000]))
    assert osai["input_nt"] == (10 + 2) * 15_000 and osai["input_per_labelled"] == 3.0
    rows = layout_table(stats, osai)
    assert rows[1].startswith("errorseq blocks") and "3.00" in rows[2]
