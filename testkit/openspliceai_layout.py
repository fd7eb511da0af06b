"""OpenSpliceAI's own create-data windowing (openspliceai 0.0.7, create_data/utils.py:
create_datapoints), for the tests and the base-layout benchmark that check errorseq's arithmetic of
its layout (workflow_scripts/base_training/layout_stats.py) against it."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

import numpy as np


def create_datapoints():
    """OpenSpliceAI's create_datapoints, or None without openspliceai. Its module imports gffutils
    (a GFF database, unused by this function), which errorseq does not install: a bare module
    stands in for that import while it loads, and is taken away again."""
    if importlib.util.find_spec("openspliceai") is None:
        return None
    stand_in = "gffutils" not in sys.modules and importlib.util.find_spec("gffutils") is None
    if stand_in:
        sys.modules["gffutils"] = types.ModuleType("gffutils")
    try:
        return importlib.import_module("openspliceai.create_data.utils").create_datapoints
    finally:
        if stand_in:
            del sys.modules["gffutils"]


def measured_layout(function, sequences: list[str], context: int = 10_000) -> dict[str, int]:
    """input, padding (N) and labelled nt of OpenSpliceAI's windows for these gene sequences,
    cropped to `context` as its clip_datapoints does."""
    clip = (10_000 - context) // 2
    input_nt = padding_nt = labelled_nt = 0
    for sequence in sequences:
        x, y = function(sequence, "0" * len(sequence))
        if clip:
            x = x[:, clip:-clip]
        input_nt += x.shape[0] * x.shape[1]
        padding_nt += int((np.asarray(x).sum(axis=2) == 0).sum())  # N: an all-zero one-hot row
        labelled_nt += int((np.asarray(y[0]).sum(axis=2) > 0).sum())  # -1 past the gene: all zeros too
    return {"input_nt": input_nt, "padding_nt": padding_nt, "labelled_nt": labelled_nt}
