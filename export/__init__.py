"""Self-describing ONNX export and native-MuJoCo sim-to-sim checks (``sim2real.export``).

Names load lazily: ``sim2real.export.sim2sim`` runs on a robot-side install (MuJoCo, onnxruntime, numpy)
and must never import torch, which ``onnx_export`` needs.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULE_OF = {
    "ParityError": "onnx_export",
    "actor_from_runner": "onnx_export",
    "export_policy": "onnx_export",
    "build_metadata": "metadata",
    "collect_versions": "metadata",
    "embed_metadata": "metadata",
    "git_revision": "metadata",
    "joint_limits_from_mjcf": "metadata",
    "rewrite_metadata": "metadata",
    "Randomization": "sim2sim",
    "Segment": "sim2sim",
    "Sim2SimConfig": "sim2sim",
    "Sim2SimError": "sim2sim",
    "Thresholds": "sim2sim",
    "run_sim2sim": "sim2sim",
}

__all__ = sorted(_SUBMODULE_OF)


def __getattr__(name: str) -> Any:
    if name not in _SUBMODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_SUBMODULE_OF[name]}", __name__), name)
