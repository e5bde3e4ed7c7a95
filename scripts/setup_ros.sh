#!/usr/bin/env bash
# Create .venv-ros: real ROS 2 Jazzy rclpy (Fast DDS) from PyPI wheels plus the deploy_ros package, apart
# from the training environment (the ROS wheels re-exec the interpreter and set LD_LIBRARY_PATH).
# Usage: scripts/setup_ros.sh            (PY=/path/to/python3.12 to choose the interpreter)
# Then:  .venv-ros/bin/python -m pytest deploy_ros/test -q
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-$(scripts/find_python312.sh)}

VENV=.venv-ros
[[ -x "$VENV/bin/python" ]] || "$PY" -m venv "$VENV"

# Exact pins: the versions these tests were run with.
PACKAGES=(
    "ros-jazzy-rclpy[fastrtps]==7.1.6"
    "ros-jazzy-sensor-msgs==5.3.6"
    "ros-jazzy-geometry-msgs==5.3.6"
    "ros-jazzy-std-msgs==5.3.6"
    "ros-jazzy-std-srvs==5.3.6"
    "numpy==2.5.5"
    "onnxruntime==1.32.0"
    "onnx==1.23.2"
    "mujoco==3.12.0"  # the version Isaac Lab pins: the bridge and sim2sim simulate alike
    "pytest==9.2.0"
)
quiet_pip() {  # this machine's pip config prints harmless "Location ... is ignored" lines
    "$VENV/bin/python" -m pip -q "$@" 2> >(grep -v "is ignored" >&2)
}
quiet_pip install "${PACKAGES[@]}"
quiet_pip install --no-deps -e deploy_ros
echo "ROS venv ready: $VENV (entry points: $(ls "$VENV/bin" | grep -E '^(policy_node|mujoco_bridge)$' | xargs))"
