"""Build small fixture policies for the Go2 with onnx.helper and random weights (numpy + onnx only).

The metadata follows docs/policy_schema.md; joint limits come from the MJCF so the fixture matches the
simulated robot exactly.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
GO2_MJCF = REPO / "assets/robots/go2/go2.xml"
LEGS = ("FL", "FR", "RL", "RR")
JOINT_NAMES = [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf")]
OBS_TERMS = (
    ("base_ang_vel", 3),
    ("projected_gravity", 3),
    ("velocity_commands", 3),
    ("joint_pos", 12),
    ("joint_vel", 12),
    ("actions", 12),
)


def mjcf_joint_limits(path: Path = GO2_MJCF) -> dict[str, list[float]]:
    """Joint ranges by name, resolving the default classes the Go2 MJCF uses."""
    root = ET.parse(path).getroot()
    class_range: dict[str, list[float]] = {}
    for default in root.iter("default"):
        joint = default.find("joint")
        if default.get("class") and joint is not None and joint.get("range"):
            class_range[default.get("class")] = [float(v) for v in joint.get("range").split()]
    limits = {}
    for body in root.iter("body"):
        for joint in body.findall("joint"):
            rng = joint.get("range")
            limits[joint.get("name")] = [float(v) for v in rng.split()] if rng else class_range[joint.get("class")]
    return limits


def default_pose(name: str) -> float:
    if name.endswith("hip_joint"):
        return 0.1 if name[1] == "L" else -0.1
    if name.endswith("thigh_joint"):
        return 0.8 if name[0] == "F" else 1.0
    return -1.5


def go2_metadata(**overrides) -> dict:
    limits = mjcf_joint_limits()
    calf = [name.endswith("calf_joint") for name in JOINT_NAMES]
    default = [default_pose(name) for name in JOINT_NAMES]
    meta = {
        "schema_version": 1,
        "task_id": "Sim2Real-Velocity-Flat-Go2-v0",
        "robot": {"name": "go2", "mjcf": "assets/robots/go2/go2.xml", "asset_sha256": "fixture"},
        "joint_names": JOINT_NAMES,
        "default_joint_pos": default,
        "action": {"scale": 0.25, "offset": default, "clip": None},
        "observations": [{"name": n, "size": s, "scale": 1.0, "clip": None} for n, s in OBS_TERMS],
        "commands": {"names": ["lin_vel_x", "lin_vel_y", "ang_vel_z"], "ranges": [[-1, 1], [-0.5, 0.5], [-1, 1]]},
        "stiffness": [25.0] * 12,
        "damping": [0.5] * 12,
        "effort_limit": [45.43 if c else 23.7 for c in calf],
        "velocity_limit": [15.7 if c else 30.1 for c in calf],
        "joint_pos_limits": [limits[name] for name in JOINT_NAMES],
        "control_dt": 0.02,
        "physics_dt": 0.005,
        "training": {"run_id": "fixture", "git_revision": "none", "versions": {}, "exported_at": "never"},
    }
    meta.update(overrides)
    return meta


def mlp_model(
    obs_dim: int, act_dim: int, hidden: tuple[int, ...] = (32,), out_gain: float = 0.1, seed: int = 0
) -> onnx.ModelProto:
    """obs -> tanh layers -> linear actions, with dynamic batch; small outputs keep the robot near its pose."""
    rng = np.random.default_rng(seed)
    sizes, nodes, inits, x = (obs_dim, *hidden, act_dim), [], [], "obs"
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        last = i == len(sizes) - 2
        w = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in) * (out_gain if last else 1.0)).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(np.zeros(n_out, np.float32), f"b{i}")]
        y = "actions" if last else f"h{i}"
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [y if last else f"z{i}"]))
        if not last:
            nodes.append(helper.make_node("Tanh", [f"z{i}"], [y]))
        x = y
    graph = helper.make_graph(
        nodes,
        "fixture_mlp",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, ["batch", obs_dim])],
        [helper.make_tensor_value_info("actions", TensorProto.FLOAT, ["batch", act_dim])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by older onnxruntime builds too
    return model


def write_policy(path: Path, meta: dict | None = None, **mlp_kwargs) -> Path:
    """A Go2 fixture policy with sim2real metadata; ``meta=None`` uses :func:`go2_metadata`."""
    meta = go2_metadata() if meta is None else meta
    obs_dim = sum(int(t["size"]) for t in meta["observations"])
    model = mlp_model(obs_dim, len(meta["joint_names"]), **mlp_kwargs)
    helper.set_model_props(model, {"sim2real_schema_version": "1", "sim2real": json.dumps(meta)})
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def write_foreign(path: Path) -> Path:
    """A valid ONNX model without sim2real metadata (e.g. someone else's export)."""
    onnx.save(mlp_model(45, 12), str(path))
    return path
