#!/usr/bin/env bash
# Run the whole test suite on the CPU: lint, the Isaac Lab / export / sim-to-sim tests, the ROS 2 tests.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/python -m pytest tests -q
.venv-ros/bin/python -m pytest deploy_ros/test -q
