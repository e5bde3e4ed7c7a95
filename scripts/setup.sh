#!/usr/bin/env bash
# Set up everything sim2real needs, from a fresh clone, without a GPU or Isaac Sim:
#   .venv      Python 3.12 + Isaac Lab 3.0 (Newton physics) + rsl-rl + this package (editable), pinned
#   .venv-ros  Python 3.12 + ROS 2 Jazzy rclpy wheels for the robot-side package (deploy_ros/), kept apart
#              because the ROS wheels re-exec the interpreter with their own library path
#   libosmesa6 offscreen rendering for sim2sim --video (OS package; installed when root with apt-get)
# Idempotent: reruns only reinstall when pyproject.toml changed. Needs only the Python package index.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=$(scripts/find_python312.sh)
export PY

quiet_pip() { grep -v -e "^WARNING: Location" -e "^$" || true; }

stamp=.venv/.sim2real-installed
want=$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "setup: creating .venv with $PY (Isaac Lab, torch, rsl-rl: several GB, a few minutes the first time)"
    [ -x .venv/bin/python ] || "$PY" -m venv .venv
    .venv/bin/python -m pip install -q --upgrade pip 2>&1 | quiet_pip
    .venv/bin/python -m pip install -q -e ".[dev]" 2>&1 | quiet_pip
    echo "$want" > "$stamp"
fi
scripts/setup_ros.sh
scripts/setup_render.sh
echo "setup: ready (.venv: $(.venv/bin/python --version), Isaac Lab $(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("isaaclab"))'))"
