#!/usr/bin/env bash
# GPU throughput of Go2 flat in one short run (fits a 10-minute budget, e.g. one `device` call):
# stepping and PPO training at 4096, 8192 and 16384 envs with the GPU physics preset, plus the same robot's
# raw native-MuJoCo speed on that machine's CPU as the ratio. Writes $OUT/gpu_throughput.json.
#   scripts/setup.sh && OUT=. benchmarks/gpu_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-.}
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
timeout "${BUDGET_S:-480}" "$PY" benchmarks/throughput.py --num-envs 4096 8192 16384 --steps 100 --iterations 3 \
    --out "$OUT/gpu_throughput.json" device=cuda:0

