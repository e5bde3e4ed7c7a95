#!/usr/bin/env bash
# GPU throughput of Go2 flat in one short run (fits a 10-minute budget, e.g. one `device` call): stepping and PPO
# training at 4096, 8192 and 16384 envs with the GPU physics preset, plus the same robot's raw native-MuJoCo speed
# on that machine's CPU as the ratio. Each env count runs and writes $OUT/gpu_throughput_<envs>.json on its own,
# so a budget that runs out keeps the counts already measured. The first count also compiles the CUDA kernels
# (~4 min on an H200, cached in ~/.cache/warp for the next ones).
#   scripts/setup.sh && OUT=. benchmarks/gpu_throughput.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-.}
BUDGET_S=${BUDGET_S:-540}
start=$SECONDS
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
for envs in 4096 8192 16384; do
    left=$((BUDGET_S - (SECONDS - start)))
    if [ "$left" -lt 60 ]; then echo "gpu_throughput: budget spent before $envs envs"; break; fi
    timeout "$left" "$PY" benchmarks/throughput.py --num-envs "$envs" --steps 100 --iterations 3 \
        --out "$OUT/gpu_throughput_$envs.json" device=cuda:0 || echo "gpu_throughput: $envs envs did not finish"
done
