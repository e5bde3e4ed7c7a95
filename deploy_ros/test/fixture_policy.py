"""Build small fixture policies with onnx.helper and random weights (numpy + onnx only).

The metadata is a shipped policy's (docs/policy_schema.md): the Go2's, or for a grasping arm the Panda lift
policy's (kept equal to what the exporter writes today by a training-side test), so the fixture matches the simulated
robot exactly and a schema change reaches these tests through one re-export.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parents[2]
# The shipped Go2 policy's metadata, as the exporter wrote it: the robot facts are not retyped here.
SHIPPED_METADATA = REPO / "assets/policies/go2_flat/policy.json"
_SHIPPED = json.loads(SHIPPED_METADATA.read_text())
JOINT_NAMES = list(_SHIPPED["joint_names"])
SHIPPED_LIFT = json.loads((REPO / "assets/policies/panda_lift/policy.json").read_text())
PANDA_GRIPPER = SHIPPED_LIFT["action"]["gripper"]  # finger joints, open / closed positions, speed, PD


def default_pose(name: str) -> float:
    return _SHIPPED["default_joint_pos"][JOINT_NAMES.index(name)]


def go2_metadata(**overrides) -> dict:
    """The shipped Go2 policy's metadata with a fixture's training record, no action clip, and one frame of the six
    velocity-task terms (45 values: the layout the controller tests index; history and clock have their own tests)."""
    meta = json.loads(json.dumps(_SHIPPED))
    meta["action"]["clip"] = None
    meta["observations"] = [{k: v for k, v in t.items() if k != "history"} for t in meta["observations"]]
    meta["observations"] = [t for t in meta["observations"] if t["name"] != "gait_phase"]
    meta["training"] = {"run_id": "fixture", "git_revision": "none", "versions": {}, "exported_at": "never"}
    meta.update(overrides)
    return meta


# a perceptive fixture's height scan: 3 x 3 points 0.2 m / 0.1 m apart around the base, x fastest
SCAN_POINTS = [[x, y] for y in (-0.1, 0.0, 0.1) for x in (-0.2, 0.0, 0.2)]


def perceptive_metadata() -> dict:
    """:func:`go2_metadata` plus a ``height_scan`` term over :data:`SCAN_POINTS` (training's offset and clip)."""
    meta = go2_metadata()
    scan = {"name": "height_scan", "size": len(SCAN_POINTS), "scale": 1.0, "clip": [-1.0, 1.0]}
    meta["observations"].append({**scan, "params": {"offset": 0.5}, "points": SCAN_POINTS})
    return meta


def lift_metadata() -> dict:
    """The shipped Panda lift policy's metadata: gripper action; finger, object and grasp-point terms; the chain and
    grasp offset they need."""
    return json.loads(json.dumps(SHIPPED_LIFT))


def write_closing_lift_policy(path: Path) -> Path:
    """A grasping fixture: arm outputs near zero, the hand's output biased to -1, so it always closes."""
    meta = lift_metadata()
    bias = np.zeros(len(meta["joint_names"]) + 1)
    bias[-1] = -1.0
    return write_policy(path, meta, out_bias=bias)


def mlp_model(
    obs_dim: int,
    act_dim: int,
    hidden: tuple[int, ...] = (32,),
    out_gain: float = 0.1,
    seed: int = 0,
    out_bias: np.ndarray | None = None,
) -> onnx.ModelProto:
    """obs -> tanh layers -> linear actions, with dynamic batch; small outputs keep the robot near its pose.
    ``out_bias`` sets the output layer's bias (e.g. a gripper output that always closes)."""
    rng = np.random.default_rng(seed)
    sizes, nodes, inits, x = (obs_dim, *hidden, act_dim), [], [], "obs"
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        last = i == len(sizes) - 2
        w = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in) * (out_gain if last else 1.0)).astype(np.float32)
        bias = np.asarray(out_bias, np.float32) if last and out_bias is not None else np.zeros(n_out, np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(bias, f"b{i}")]
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
    """A fixture policy with sim2real metadata; ``meta=None`` uses :func:`go2_metadata`."""
    meta = go2_metadata() if meta is None else meta
    obs_dim = sum(int(t["size"]) for t in meta["observations"])
    act_dim = len(meta["joint_names"]) + (1 if meta["action"].get("gripper") else 0)
    model = mlp_model(obs_dim, act_dim, **mlp_kwargs)
    helper.set_model_props(
        model, {"sim2real_schema_version": str(meta["schema_version"]), "sim2real": json.dumps(meta)}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def write_foreign(path: Path) -> Path:
    """A valid ONNX model without sim2real metadata (e.g. someone else's export)."""
    onnx.save(mlp_model(45, 12), str(path))
    return path
