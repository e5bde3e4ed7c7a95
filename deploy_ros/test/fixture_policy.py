"""Build small fixture policies with onnx.helper and random weights (numpy + onnx only).

The metadata is a shipped policy's (docs/policy_schema.md): the Go2's, or for a grasping arm the Panda reach
policy's plus the lift task's gripper (:data:`PANDA_GRIPPER`, kept equal to the exporter's by a training-side test),
so the fixture matches the simulated robot exactly and a schema change reaches these tests through one re-export.
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
SHIPPED_REACH = REPO / "assets/policies/panda_reach/policy.json"
# what `sim2real export` writes as action.gripper for Sim2Real-Lift-Panda-v0 (tests/test_lift.py compares)
PANDA_GRIPPER = {
    "joints": ["finger_joint1", "finger_joint2"],
    "open": [0.04, 0.04],
    "closed": [0.0, 0.0],
    "speed": 0.05,
    "close_below": 0.0,
    "stiffness": 400.0,
    "damping": 10.0,
    "effort_limit": 70.0,
}


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


def lift_metadata() -> dict:
    """The shipped Panda reach policy's metadata as a grasping policy: the lift task's gripper action and its two
    observation terms (finger positions, the object's position in the base frame), one more network output."""
    meta = json.loads(SHIPPED_REACH.read_text())
    meta["task_id"] = "Sim2Real-Lift-Panda-v0"
    meta["action"]["gripper"] = json.loads(json.dumps(PANDA_GRIPPER))
    # lift's target is the cube's: no hand pose error to it
    meta["observations"] = [t for t in meta["observations"] if t["name"] != "ee_pose_error"]
    next(t for t in meta["observations"] if t["name"] == "actions")["size"] += 1  # the hand's command
    for name, size in (("gripper_pos", 2), ("object_position", 3)):
        meta["observations"].append({"name": name, "size": size, "scale": 1.0, "clip": None})
    return meta


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
