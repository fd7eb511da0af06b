"""benchmarks/base_training/: OpenSpliceAI's layout arithmetic, the gene split and the GFF it can
read, its logs read back, the worker's epoch meter, held-out metrics and the tables' rows. The real
OpenSpliceAI run on three genes: tests/long/test_bench_base_training.py."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
import torch

from benchmarks.base_training.errorseq import libraries, longest_as_canonical, settings_for
from benchmarks.base_training.genes import Request, deal, refseq_style_gff
from benchmarks.base_training.heldout import cut_windows, metrics, top_k_accuracy
from benchmarks.base_training.layout import SL, gene_input_nt, split_layout, windows
from benchmarks.base_training.osai_logs import parse_topk_all, read_epochs_log
from benchmarks.base_training.osai_worker import EpochMeter
from benchmarks.base_training.report import heldout_rows, log_rows, speedup_rows, throughput_rows
from benchmarks.base_training.sides import EpochCost, SideRun
from workflow_scripts.calling.gff import read_annotation
from workflow_scripts.errors import InputError


def test_windows_and_input_of_one_gene_follow_openspliceai_layout():
    assert [windows(n) for n in (1, 5_000, 5_001, 15_000)] == [1, 1, 2, 3]
    assert gene_input_nt(5_000, 10_000) == (15_000, 5_000)  # one window: 5,000 N each side
    assert gene_input_nt(5_000, 80) == (5_080, 5_000)  # the central 5,080 nt: 40 N each side
    total, inside = gene_input_nt(12_000, 10_000)  # gene at [5,000, 17,000): windows overlap
    assert total == 3 * 15_000 and inside == 10_000 + 12_000 + 7_000


def test_the_arithmetic_counts_what_the_cut_windows_hold():
    for length, flank in ((7_321, 10_000), (12_000, 2_000), (999, 400)):
        padded = np.frombuffer(b"N" * 5_000 + b"A" * length + b"N" * 5_000, np.uint8)
        cut, labels = cut_windows(padded, np.zeros(length, np.int8), flank)
        total, inside = gene_input_nt(length, flank)
        assert cut.shape == (windows(length), SL + flank) and cut.size == total
        assert int((cut == ord("A")).sum()) == inside
        assert int((labels >= 0).sum()) == length and labels.shape == (windows(length), SL)


def test_split_layout_drops_each_shard_last_incomplete_batch():
    layout = split_layout([5_000] * 13, 10_000)  # 13 windows, batch 12
    assert (layout.windows, layout.seen_windows, layout.labelled_nt) == (13, 12, 65_000)
    assert layout.input_per_labelled == 3.0 and layout.padding_share == pytest.approx(2 / 3)
    shards = split_layout([5_000] * 111, 10_000)  # shards of 100 genes: 100 → 96, 11 → 0
    assert shards.seen_windows == 96


GENES = pl.DataFrame(
    {"gene_id": [f"g{i}" for i in range(30)], "length": [4_000 + 1_000 * i for i in range(30)]}
)


def test_deal_gives_each_split_its_genes_and_a_full_batch_of_windows():
    split = deal(GENES, Request(3, 1, 2, 10_000, seed=7), "genes.gff")
    parts = [split.train, split.validation, split.test]
    assert len(set().union(*parts)) == sum(len(p) for p in parts)  # disjoint
    length = dict(zip(GENES["gene_id"], GENES["length"]))
    for part, wanted in zip(parts, (3, 1, 2)):
        assert len(part) >= wanted and sum(windows(length[g]) for g in part) >= 12
    assert deal(GENES, Request(3, 1, 2, 10_000, seed=7), "x") == split
    assert deal(GENES, Request(3, 1, 2, 10_000, seed=8), "x") != split
    with pytest.raises(InputError, match="8 protein-coding genes with an intron are too few for "):
        deal(GENES.head(8), Request(3, 1, 2, 10_000, seed=7), "genes.gff")


GTF = """\
chr1\tsrc\ttranscript\t101\t900\t.\t-\t.\tgene_id "a;b"; transcript_id "t1";
chr1\tsrc\texon\t101\t200\t.\t-\t.\tgene_id "a;b"; transcript_id "t1";
chr1\tsrc\texon\t301\t400\t.\t-\t.\tgene_id "a;b"; transcript_id "t1";
chr1\tsrc\texon\t801\t900\t.\t-\t.\tgene_id "a;b"; transcript_id "t1";
chr1\tsrc\texon\t101\t200\t.\t-\t.\tgene_id "a;b"; transcript_id "t2";
chr1\tsrc\texon\t801\t850\t.\t-\t.\tgene_id "a;b"; transcript_id "t2";
chr1\tsrc\tCDS\t150\t200\t.\t-\t0\tgene_id "a;b"; transcript_id "t2";
"""


def test_a_gtf_becomes_the_refseq_style_gff3_openspliceai_reads(tmp_path):
    (tmp_path / "a.gtf").write_text(GTF)
    text = refseq_style_gff(read_annotation(tmp_path / "a.gtf"), ("a;b",))
    kinds = [line.split("\t")[2] for line in text.splitlines()[1:]]
    assert kinds == ["gene", "mRNA", "exon", "exon", "exon", "mRNA", "exon", "exon"]
    gene = text.splitlines()[1].split("\t")
    assert gene[3:5] == ["101", "900"] and gene[8] == "ID=a%3Bb;gene_biotype=protein_coding"
    (tmp_path / "b.gff3").write_text(text)
    back = read_annotation(tmp_path / "b.gff3")  # errorseq reads it back: the same exons
    original = read_annotation(tmp_path / "a.gtf")
    assert sorted(e[:4] for e in back.exons) == sorted(e[:4] for e in original.exons)
    assert {t["gene_id"] for t in back.transcripts.values()} == {"a;b"}


LOG = "0.9000\t0.8000\t0.9500\t0.9800\t0.8500\t0.9\t0.5\t0.1\t0.01\t40\n0.9100\t0.8100\t0.9600\t0.9900\t0.8600\t0.9\t0.5\t0.1\t0.01\t40\n"


def test_openspliceai_topk_logs_parse_and_bad_lines_are_named():
    lines = parse_topk_all(LOG, "acceptor_topk_all.txt")
    assert len(lines) == 2 and lines[1].topk[1] == 0.81 and lines[1].auprc == 0.86 and lines[0].sites == 40
    with pytest.raises(InputError, match="line 1.*9 fields"):
        parse_topk_all("0.1\t" * 8 + "3\n", "x.txt")
    rows = log_rows({"acceptor": lines, "donor": lines[:1]})
    assert rows == [[1, 0.8, 0.85, 0.8, 0.85, "40/40"]]  # epochs both types logged


def test_the_epoch_meter_counts_labelled_positions_and_times_the_epoch(tmp_path):
    def clip(X, Y, *rest):
        return X, Y

    def train_epoch(batches):
        for X, Y in batches:
            utils.clip_datapoints(X, Y, 0, 0, 2)
        utils.model_evaluation()
        return "loss"

    utils = SimpleNamespace(clip_datapoints=clip, train_epoch=train_epoch, model_evaluation=lambda: None)
    EpochMeter(tmp_path / "epochs.jsonl").install(utils)
    labels = torch.zeros(2, 3, 10)
    labels[:, 0, :7] = 1  # 7 labelled positions per window, 3 unlabelled (all-zero) ones
    labels[0, 1, 3], labels[0, 0, 3] = 1, 0
    assert utils.train_epoch([(torch.zeros(2, 4, 30), labels)] * 3) == "loss"
    utils.clip_datapoints(torch.zeros(1, 4, 30), labels[:1])  # outside an epoch: not counted
    (record,) = read_epochs_log(tmp_path / "epochs.jsonl")
    assert (record["epoch"], record["batches"], record["windows"]) == (1, 3, 6)
    assert record["labelled_nt"] == 42 and record["input_nt"] == 180
    assert record["steps_cpu_s"] == pytest.approx(record["cpu_s"] - record["metrics_cpu_s"], abs=2e-3)


def test_heldout_metrics_count_labelled_positions_only():
    labels = np.array([[0, 1, 0, 2, -1, -1], [0, 0, 1, 0, 2, -1]], np.int8)
    probabilities = np.zeros((2, 3, 6))
    probabilities[:, 1, :] = [[0.1, 0.9, 0.2, 0.0, 1.0, 1.0], [0.0, 0.3, 0.8, 0.0, 0.0, 1.0]]
    probabilities[:, 2, :] = [[0.0, 0.0, 0.0, 0.7, 0.0, 0.0], [0.9, 0.0, 0.0, 0.0, 0.6, 0.0]]
    found = metrics(probabilities, labels)
    assert found["acceptor"] == {"topk": 1.0, "auprc": 1.0, "sites": 2}  # the unlabelled 1.0s ignored
    assert found["donor"]["topk"] == 0.5 and found["donor"]["sites"] == 2
    assert found["donor"]["auprc"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert math.isnan(top_k_accuracy(np.zeros(3, bool), np.ones(3)))


def run(side: str, costs: list[tuple[int, int, float]], peak: float) -> SideRun:
    epochs = [EpochCost(i, nt, 3 * nt, cpu, 2 * cpu) for i, (_, nt, cpu) in enumerate(costs, 1)]
    return SideRun(side, epochs, peak, [Path(f"m{i}.pt") for i in range(len(costs))])


def test_throughput_rows_per_epoch_and_over_all_epochs():
    rows = throughput_rows([run("peer", [(1, 60_000, 100.0), (2, 60_000, 50.0)], 812.4)])
    assert rows[0] == ["peer", 1, 60_000, 3.0, 100.0, 600, 200.0, 300, 812]
    assert rows[2] == ["peer", "all", 120_000, 3.0, 150.0, 800, 300.0, 400, 812]
    both = [run("peer", [(1, 60_000, 100.0)], 1), run("ours", [(1, 90_000, 50.0)], 1)]
    assert speedup_rows(both, "peer") == [["ours", 1_800, 3.0]]


def test_heldout_rows_keep_side_epoch_and_windows():
    found = {
        "acceptor": {"topk": 0.91234, "auprc": 0.95, "sites": 10},
        "donor": {"topk": 0.8, "auprc": 0.9, "sites": 11},
    }
    assert heldout_rows([("start weights", 0, "padded", found)]) == [
        ["start weights", 0, "padded", 0.9123, 0.95, 0.8, 0.9, "10/11"]
    ]


def test_errorseq_side_finds_base_data_and_train_base_in_this_checkout():
    time_train_base, dataset, files_type = libraries()
    assert callable(time_train_base) and callable(dataset.plan_blocks)
    assert list(files_type.__dataclass_fields__) == ["blocks", "sequence", "labels", "manifest"]


def test_read_epochs_log_names_a_torn_line(tmp_path):
    path = tmp_path / "epochs.jsonl"
    path.write_text(json.dumps({"epoch": 1}) + '\n{"epo')
    with pytest.raises(InputError, match="line 2"):
        read_epochs_log(path)


@pytest.mark.parametrize("epochs", [1, 2, 3, 5, 7])
def test_errorseqs_cosine_ends_where_openspliceais_scheduler_is_after_as_many_epochs(epochs):
    """OpenSpliceAI's transfer steps CosineAnnealingWarmRestarts(T_0=5, eta_min=1e-5) by epoch
    fraction; train_base's cosine over the run must end at the same rate (it once ended at 1e-5
    whatever the epochs: a 2-epoch run got about a quarter less learning rate than the peer)."""
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.AdamW([weight], lr=1e-4)
    peer = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=5, T_mult=1, eta_min=1e-5)
    peer.step(min(epochs, 5) - 1e-9)  # its lowest within the run
    settings = settings_for(epochs, "cosine")
    assert settings["lr"] * settings["min_lr_ratio"] == pytest.approx(peer.get_last_lr()[0], rel=1e-3)
    assert settings["warmup_fraction"] == 0.0 and settings["token_budget"] == 60_000


def test_errorseqs_labels_come_from_each_genes_longest_transcript_as_openspliceais(tmp_path):
    gtf = tmp_path / "a.gtf"
    rows = [
        ("t1", 100, 200),
        ("t1", 300, 400),  # span 300
        ("t2", 100, 200),
        ("t2", 500, 700),  # span 600: the longest
    ]
    gtf.write_text(
        "".join(
            f'chr1\tx\texon\t{start}\t{end}\t.\t+\t.\tgene_id "g1"; transcript_id "{t}";\n'
            for t, start, end in rows
        )
    )
    annotation = longest_as_canonical(read_annotation(gtf))
    assert {t: row["canonical"] for t, row in annotation.transcripts.items()} == {"t1": False, "t2": True}
