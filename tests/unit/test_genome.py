import gzip

import numpy as np
import pytest

from workflow_scripts.command_line import path_flags
from workflow_scripts.data.fasta import load_fasta, open_genome
from workflow_scripts.data.genome import Genome
from workflow_scripts.errors import InputError
from workflow_scripts.rules.index_genome import main

FASTA = b">chr1 first\r\nACGTacgt\r\nNNac\r\n>chr2\nGGGCCC\nAT\n"


def write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def check_parsed(genome: Genome):
    assert genome.names == ["chr1", "chr2"]
    assert genome.lengths.tolist() == [12, 8]
    assert genome.chromosome("chr1") == "ACGTACGTNNAC"
    assert genome.chromosome("chr2") == "GGGCCCAT"


def test_plain_fasta_with_crlf_lowercase_and_n(tmp_path):
    check_parsed(load_fasta(write(tmp_path, "g.fa", FASTA)))


def test_gzip_fasta(tmp_path):
    check_parsed(load_fasta(write(tmp_path, "g.fa.gz", gzip.compress(FASTA))))


def test_multi_member_gzip_like_bgzip(tmp_path):
    half = FASTA.index(b">chr2")
    data = gzip.compress(FASTA[:half]) + gzip.compress(FASTA[half:])
    check_parsed(load_fasta(write(tmp_path, "g.fa.bgz", data)))


@pytest.mark.parametrize(
    "name, data, expected",
    [
        ("empty.fa", b"", "empty"),
        ("noheader.fa", b"ACGT\n", "no '>' header"),
        ("dup.fa", b">a\nAC\n>a\nGT\n", "duplicate chromosome name"),
        ("iupac.fa", b">chrX\nACGT\nACRT\n", "chromosome 'chrX' position 7"),
        ("corrupt.fa.gz", gzip.compress(FASTA, mtime=0)[:-12] + b"garbage!", "corrupt gzip"),
    ],
)
def test_bad_fasta_raises_input_error(tmp_path, name, data, expected):
    path = write(tmp_path, name, data)
    with pytest.raises(InputError, match=expected) as caught:
        load_fasta(path)
    assert name in str(caught.value)


def test_missing_fasta(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_fasta(tmp_path / "absent.fa")


def test_index_genome_rule_writes_a_cache_that_maps(tmp_path):
    idx = tmp_path / "idx"
    main(
        [
            *path_flags(
                {"fasta": write(tmp_path, "g.fa", FASTA)},
                {"sequence": idx / "sequence.npy", "index": idx / "index.tsv"},
            ),
        ]
    )
    assert (idx / "index.tsv").read_text().splitlines() == [
        "name\tlength\toffset",
        "chr1\t12\t0",
        "chr2\t8\t12",
    ]
    cached = Genome.open_cached(idx)
    assert isinstance(cached.sequence, np.memmap)
    check_parsed(cached)
    check_parsed(open_genome(idx))  # a directory: the cache
    assert not isinstance(open_genome(tmp_path / "g.fa").sequence, np.memmap)  # a file: parsed


def test_index_that_disagrees_with_the_sequence_is_refused(tmp_path):
    load_fasta(write(tmp_path, "g.fa", FASTA)).save_cached(tmp_path / "idx")
    index = tmp_path / "idx" / "index.tsv"
    index.write_text(index.read_text().replace("chr2\t8", "chr2\t9"))
    with pytest.raises(InputError, match="does not match index.tsv"):
        Genome.open_cached(tmp_path / "idx")


def test_open_cached_missing_dir(tmp_path):
    with pytest.raises(
        InputError, match="index.tsv: genome index: file not found; run the index_genome rule"
    ):
        Genome.open_cached(tmp_path)
    with pytest.raises(InputError, match="absent: genome: not found"):
        open_genome(tmp_path / "absent")


def test_reverse_complement_by_hand(tmp_path):
    genome = load_fasta(write(tmp_path, "g.fa", b">c\nAACGTTTGCAN\n"))
    # [1, 6) = "ACGTT" -> revcomp "AACGT"; [6, 11) = "TGCAN" -> "NTGCA"
    strings = genome.window_strings([0, 0, 0], [1, 6, 1], [6, 11, 6], [True, True, False]).to_list()
    assert strings == ["AACGT", "NTGCA", "ACGTT"]
    flat, offsets = genome.gather_windows([0, 0], [0, 9], [3, 11], [True, False])
    assert bytes(flat) == b"GTT" + b"AN" and offsets.tolist() == [0, 3, 5]


def test_gather_matches_naive_on_random_windows():
    rng = np.random.default_rng(3)
    lengths = np.array([50, 7, 120])
    sequence = np.frombuffer(b"ACGTN", np.uint8)[rng.integers(0, 5, lengths.sum())].copy()
    genome = Genome(["a", "b", "c"], lengths, sequence)
    chrom = rng.integers(0, 3, 400)
    starts = rng.integers(0, lengths[chrom])
    ends = starts + 1 + rng.integers(0, lengths[chrom] - starts)
    minus = rng.random(400) < 0.5
    got = genome.window_strings(chrom, starts, ends, minus, chunk_size=64).to_list()
    table = str.maketrans("ACGTN", "TGCAN")
    for i, text in enumerate(got):
        expected = genome.chromosome(genome.names[chrom[i]])[starts[i] : ends[i]]
        assert text == (expected.translate(table)[::-1] if minus[i] else expected)


def test_centred_windows_match_naive_with_n_outside_the_bounds():
    """Every window has 2*flank+1 bases, the site at index flank; outside [low, high) (a gene's
    bounds, or the chromosome) N, never a base of the next chromosome."""
    rng = np.random.default_rng(4)
    lengths = np.array([30, 5, 80])
    sequence = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, lengths.sum())].copy()
    genome = Genome(["a", "b", "c"], lengths, sequence)
    chrom = rng.integers(0, 3, 300)
    centres = rng.integers(0, lengths[chrom])
    low = rng.integers(0, centres + 1)
    high = centres + 1 + rng.integers(0, lengths[chrom] - centres)
    minus = rng.random(300) < 0.5
    flank = 9
    got = genome.centred_windows(chrom, centres, flank, low, high, minus, chunk_size=64).to_list()
    table = str.maketrans("ACGTN", "TGCAN")
    for i, text in enumerate(got):
        bases = genome.chromosome(genome.names[chrom[i]])
        plus = "".join(
            bases[p] if low[i] <= p < high[i] else "N"
            for p in range(centres[i] - flank, centres[i] + flank + 1)
        )
        assert text == (plus.translate(table)[::-1] if minus[i] else plus)
        assert text[flank] == (bases[centres[i]].translate(table) if minus[i] else bases[centres[i]])


def test_crlf_and_a_last_line_ending_in_cr_are_read(tmp_path):
    genome = load_fasta(write(tmp_path, "g.fa", b">chr1\r\nACGT\r\nAC\r\n>chr2\r\nGG\r"))
    assert genome.chromosome("chr1") == "ACGTAC" and genome.chromosome("chr2") == "GG"


@pytest.mark.parametrize(
    "data, field, message",
    [
        (b">chr1 x\rACGT\rAC\r>chr2\rGG\r", "record 'chr1'", "lines end with a carriage return alone"),
        (b">chr1\nACGT\n>chr2\nAC\rGT\n", "record 'chr2'", "lines end with a carriage return alone"),
        (
            b">chr1\nACGT\n>chr2\n>chr3\nAC\n",
            "record 'chr2'",
            "empty record: no sequence lines after its header",
        ),
        (b">chr1\nACGT\n>chr2\n  \n", "record 'chr2'", "empty record"),
    ],
)
def test_fasta_line_endings_and_empty_records_are_named(tmp_path, data, field, message):
    with pytest.raises(InputError, match=message) as caught:
        load_fasta(write(tmp_path, "g.fa", data))
    assert caught.value.field == field and caught.value.source.endswith("g.fa")
