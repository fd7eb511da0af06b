#!/usr/bin/env bash
# GPU check of errorseq's training paths (DDP/FSDP2/DeepSpeed ZeRO, fp32/bf16/fp16, HF backbone,
# evaluate on GPU) with step times and peak CUDA memory. Run from the repository root:
#
#   benchmarks/gpu/check.sh [WORK_DIR] [benchmarks/gpu/check.py options, e.g. --groups cnn --steps 100]
#
# Needs a CUDA GPU and the packages of requirements.txt (deepspeed, polars, transformers...);
# snakemake is not used. Prints Markdown tables; details in WORK_DIR/runs/*/train.log.
set -u
WORK=${1:-results/gpu_check}
shift || true
PY=${PYTHON:-python3}
echo "## gpu_check environment"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi: not found"
"$PY" - <<'PYEOF'
import importlib, platform, torch
print(f"python {platform.python_version()}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"cuda available {torch.cuda.is_available()}, devices {torch.cuda.device_count()}, "
      f"bf16 {torch.cuda.is_available() and torch.cuda.is_bf16_supported()}, "
      f"NCCL {'.'.join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None}")
if torch.cuda.is_available():
    print("device:", torch.cuda.get_device_name(0))
for name in ("deepspeed", "transformers", "tokenizers", "polars", "numpy"):
    try:
        print(f"{name} {importlib.import_module(name).__version__}")
    except Exception as error:  # a missing package is reported, the cases that need it fail
        print(f"{name}: not importable ({type(error).__name__}: {error})")
PYEOF
echo "## generated DeepSpeed JSON (zero_stage auto, precision auto, 25M parameters, this hardware)"
"$PY" -m workflow_scripts.training.strategies.deepspeed_config --config '{"train": {"zero_stage": "auto", "precision": "auto"}}' \
    --params 25000000 | "$PY" -c 'import json,sys; c=json.load(sys.stdin); print(json.dumps({k: c[k] for k in ("bf16","fp16","zero_optimization")}))'
PYTHONUNBUFFERED=1 exec "$PY" -m benchmarks.gpu.check --work-dir "$WORK" "$@"
