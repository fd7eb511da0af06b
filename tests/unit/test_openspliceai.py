"""OpenSpliceAI checkpoints as base models: loaded by content, every flank told from the tensors,
bad files refused in one line, and scores equal to OpenSpliceAI's own model class.

The reference is OpenSpliceAI's `SpliceAI` module from its published package (`openspliceai` on
PyPI, installed with --no-deps by `make setup`; its model file imports only numpy and torch), run
on its own one-hot encoding of the gene with N padding past chromosome ends: no errorseq code
computes the expected scores. errorseq's side is the whole scoring path (regions, chunks, batches,
strands; calling/scoring.py). The published checkpoints themselves: tests/workflow/test_openspliceai.py.
"""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import polars as pl
import pytest
import torch

from tests.unit.test_scoring import GENES, settings
from workflow_scripts.calling.model_files import OPENSPLICEAI, model_family, weight_files
from workflow_scripts.calling.openspliceai import UNIT_GROUPS, context_of, load_openspliceai
from workflow_scripts.calling.scoring import score_genes
from workflow_scripts.calling.spliceai import load_ensemble
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError

reference = pytest.importorskip(
    "openspliceai.train_base.openspliceai", reason="make setup installs openspliceai"
)
COMPLEMENT = str.maketrans("ACGTN", "TGCAN")
ONE_HOT = {"A": [1, 0, 0, 0], "C": [0, 1, 0, 0], "G": [0, 0, 1, 0], "T": [0, 0, 0, 1]}


def reference_model(units: int, channels: int = 8, seed: int = 0):
    """OpenSpliceAI's own class, random weights and batch-norm statistics (eval mode)."""
    widths = np.array([UNIT_GROUPS[i // 4][0] for i in range(units)])
    dilations = np.array([UNIT_GROUPS[i // 4][1] for i in range(units)])
    torch.manual_seed(seed)
    model = reference.SpliceAI(channels, widths, dilations)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm1d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.3, 0.3)
        model.final_conv.weight.mul_(8)  # probabilities well away from a flat softmax
    return model.eval()


def write_checkpoint(path, units=4, channels=8, seed=0):
    torch.save(reference_model(units, channels, seed).state_dict(), path)
    return path


def reference_scores(model, genome: Genome, gene: dict, flank: int) -> np.ndarray:
    """(length, 2) donor, acceptor of one gene, as OpenSpliceAI predicts a padded sequence."""
    chromosome = genome.chromosome(gene["chrom"])
    begin, end = gene["start"] - 1 - flank, gene["end"] + flank
    text = "N" * max(-begin, 0) + chromosome[max(begin, 0) : end] + "N" * max(end - len(chromosome), 0)
    if gene["strand"] == "-":
        text = text.translate(COMPLEMENT)[::-1]
    encoded = np.array([ONE_HOT.get(base, [0, 0, 0, 0]) for base in text], np.float32).T[None]
    with torch.no_grad():
        probabilities = model(torch.from_numpy(encoded))[0].numpy()
    scores = np.stack([probabilities[2], probabilities[1]], axis=1)  # donor, acceptor
    return scores[::-1] if gene["strand"] == "-" else scores


@pytest.fixture(scope="module")
def genome() -> Genome:
    rng = np.random.default_rng(5)
    bases = rng.choice(np.frombuffer(b"ACGT", np.uint8), size=1000)
    bases[rng.random(1000) < 0.01] = ord("N")
    return Genome(["c1", "c2"], np.array([700, 300]), bases.astype(np.uint8))


@pytest.mark.parametrize("chunk_length", [32, 1000])
def test_scores_equal_openspliceai_own_model(tmp_path, genome, chunk_length):
    """Both strands, genes at both chromosome ends, chunk edges: max |delta| <= 1e-5 in fp32."""
    write_checkpoint(tmp_path / "model_80nt_rs1.pt", seed=1)
    write_checkpoint(tmp_path / "model_80nt_rs2.pt", seed=2)
    ensemble = load_ensemble(tmp_path)
    assert ensemble.family == OPENSPLICEAI and ensemble.context == 80 and len(ensemble.models) == 2
    out = tmp_path / "scores.parquet"
    score_genes(ensemble, genome, GENES, out, settings(3, chunk_length), progress_every_s=1e9)
    scores = pl.read_parquet(out)
    models = [reference_model(4, seed=seed) for seed in (1, 2)]
    spread = 0.0
    for gene in GENES.iter_rows(named=True):
        got = scores.filter(pl.col("gene_id") == gene["gene_id"]).select("donor", "acceptor").to_numpy()
        each = [reference_scores(model, genome, gene, 40) for model in models]
        expected = np.mean(each, axis=0)
        spread = max(spread, float(np.ptp(expected)))
        assert np.abs(got - expected).max() <= 1e-5, gene["gene_id"]
    assert spread > 0.3  # scores that vary, so the comparison can fail


@pytest.mark.parametrize("units,context", [(4, 80), (8, 400), (12, 2000), (16, 10_000)])
def test_flank_is_told_from_the_tensors(tmp_path, units, context):
    path = write_checkpoint(tmp_path / "model.pt", units=units, channels=4)
    model = load_openspliceai(path)
    assert context_of(units) == context
    assert (model.flank_left, model.flank_right) == (context // 2, context // 2)
    x = torch.zeros(1, 4, context + 5)
    x[0, 0] = 1
    with torch.no_grad():
        np.testing.assert_allclose(model(x).numpy(), reference_model(units, 4)(x).numpy(), atol=1e-6, rtol=0)


def tamper(path, change):
    state = torch.load(path, weights_only=True)
    change(state)
    torch.save(state, path)
    return path


def drop_bias(state):
    del state["final_conv.bias"]


def add_tensor(state):
    state["final_conv.scale"] = torch.ones(3)


def widen_kernel(state):
    state["residual_units.0.conv1.weight"] = torch.zeros(8, 8, 13)


def five_units(state):
    for key, value in list(state.items()):
        if key.startswith("residual_units.0."):
            state[key.replace("units.0.", "units.9.")] = value


@pytest.mark.parametrize(
    "change,field,message",
    [
        (drop_bias, "state dict", "missing final_conv.bias"),
        (add_tensor, "state dict", "unexpected final_conv.scale"),
        (widen_kernel, "residual_units.0.conv1.weight", "shape (8, 8, 13), expected (8, 8, 11)"),
        (five_units, "residual_units", "5 residual units"),
    ],
)
def test_unknown_state_dict_is_refused_in_one_line(tmp_path, change, field, message):
    path = tamper(write_checkpoint(tmp_path / "model.pt"), change)
    with pytest.raises(InputError) as error:
        load_openspliceai(path)
    assert error.value.source == str(path) and error.value.field == field
    assert message in error.value.message and "\n" not in str(error.value)


class RunsCode:
    def __reduce__(self):
        return (print, ("this ran",))


def test_a_checkpoint_that_carries_code_is_refused_without_running_it(tmp_path, capsys):
    path = tmp_path / "model.pt"
    torch.save({"initial_conv.weight": RunsCode()}, path)
    with pytest.raises(InputError) as error:
        load_openspliceai(path)
    assert "weights_only=True" in error.value.message and "\n" not in str(error.value)
    assert "this ran" not in capsys.readouterr().out


def test_files_are_told_apart_by_content_and_families_do_not_mix(tmp_path):
    from tests.spliceai_fixtures import write_spliceai_h5

    pt = write_checkpoint(tmp_path / "a.pt")
    h5 = write_spliceai_h5(tmp_path / "b.h5", seed=1)
    renamed = tmp_path / "c.h5"
    renamed.write_bytes(pt.read_bytes())  # a state dict with the wrong suffix is still a state dict
    assert model_family([pt, renamed]) == OPENSPLICEAI
    with pytest.raises(InputError, match="an ensemble is of one family"):
        weight_files(tmp_path)
    notes = tmp_path / "notes.pt"
    notes.write_text("not weights")
    with pytest.raises(InputError, match="not an HDF5 file"):
        weight_files([pt, notes])
    with zipfile.ZipFile(tmp_path / "other.pt", "w") as archive:  # a zip that is no checkpoint
        archive.writestr("x.txt", pickle.dumps([1]))
    with pytest.raises(InputError, match="not a PyTorch state dict"):
        load_openspliceai(tmp_path / "other.pt")
    assert h5.exists()


def test_byte_identical_files_run_once_and_keep_the_mean(tmp_path):
    """OpenSpliceAI's arabidopsis rs11 and rs14 are one file twice: the ensemble runs it once and
    returns exactly the mean over all listed files, added in their order."""
    first, second = tmp_path / "rs10.pt", tmp_path / "rs11.pt"
    write_checkpoint(first, seed=1)
    write_checkpoint(second, seed=2)
    copy = tmp_path / "rs14.pt"
    copy.write_bytes(second.read_bytes())
    ensemble = load_ensemble(tmp_path)
    assert len(ensemble.models) == 2 and ensemble.order == [0, 1, 1]
    assert ensemble.count_text == "3 models (2 distinct, each run once)"
    assert [p.split("/")[-1] for p in ensemble.sources] == ["rs10.pt", "rs11.pt", "rs14.pt"]
    runs = []
    for model in ensemble.models:
        model.register_forward_hook(lambda module, args, out: runs.append(module))
    x = torch.nn.functional.one_hot(torch.randint(0, 4, (2, 120 + 2 * ensemble.flank_left)), 4).float()
    x = x.transpose(1, 2)
    with torch.no_grad():
        got = ensemble(x)
        singles = [load_openspliceai(path)(x) for path in (first, second, copy)]
    assert len(runs) == 2
    want = (singles[0] + singles[1] + singles[2]) / 3
    assert torch.equal(got, want)
