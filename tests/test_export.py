"""ONNX export: self-contained file, metadata round-trip, parity with PyTorch, reader errors (CPU, no Isaac Lab)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
import torch
from tensordict import TensorDict

from sim2real.export.metadata import (
    build_metadata,
    collect_versions,
    embed_metadata,
    git_revision,
    rewrite_metadata,
    save_onnx,
)
from sim2real.export.onnx_export import ParityError, actor_from_runner, export_policy
from sim2real.robots import ROBOTS
from sim2real_deploy.policy_file import OnnxPolicy, PolicyFileError, PolicyMetadata, read_metadata

GO2 = ROBOTS["go2"]

N = len(GO2.joint_names)
COMMANDS = {"lin_vel_x": (-1.0, 1.0), "lin_vel_y": (-0.5, 0.5), "ang_vel_z": (-1.0, 1.0)}


def velocity_terms(n: int) -> list[dict[str, Any]]:
    """The flat velocity task's policy terms for an ``n``-joint robot."""
    return [
        {"name": "base_ang_vel", "size": 3, "scale": 0.25, "clip": None},
        {"name": "projected_gravity", "size": 3, "scale": 1.0, "clip": None},
        {"name": "velocity_commands", "size": 3, "scale": 1.0, "clip": None},
        {"name": "joint_pos", "size": n, "scale": 1.0, "clip": None},
        {"name": "joint_vel", "size": n, "scale": 0.05, "clip": [-100.0, 100.0]},
        {"name": "actions", "size": n, "scale": 1.0, "clip": None},
    ]


TERMS = velocity_terms(N)
OBS_DIM = sum(t["size"] for t in TERMS)


def make_metadata(**overrides: Any) -> dict[str, Any]:
    """Go2 flat-velocity metadata as the training side would write it (fixed git/versions: fast, hermetic)."""
    kwargs = dict(
        task_id="Sim2Real-Velocity-Flat-Go2-v0",
        robot=GO2,
        observations=TERMS,
        commands=COMMANDS,
        action_scale=0.25,
        action_clip=None,
        control_dt=0.02,
        physics_dt=0.005,
        run_id="test",
        git_rev="0" * 40,
        versions={"torch": torch.__version__},
    )
    return build_metadata(**{**kwargs, **overrides})


def constant_policy(path: Path, action: float | list[float] = 0.0, meta: dict | None = None) -> Path:
    """Export a policy whose output ignores the observation: zero weights, bias = ``action``."""
    meta = meta or make_metadata()
    joints = meta["action"].get("joints") or meta["joint_names"]  # the commanded ones (a G1's legs)
    n = len(joints) + (1 if meta["action"].get("gripper") else 0)  # a gripper's command comes last
    obs_dim = PolicyMetadata(meta).obs_dim  # every term times its history frames
    net = torch.nn.Linear(obs_dim, n)
    with torch.no_grad():
        net.weight.zero_()
        net.bias.copy_(torch.as_tensor(np.broadcast_to(action, (n,)).copy()))
    export_policy(net, meta, path)
    return path


class _FakeVecEnv:
    """Just enough of rsl-rl's VecEnv to build an OnPolicyRunner and run a few PPO iterations."""

    num_envs, num_actions, max_episode_length, device, cfg = 8, N, 100, "cpu", {}

    def __init__(self) -> None:
        self.episode_length_buf = torch.zeros(self.num_envs, dtype=torch.long)
        self.gen = torch.Generator().manual_seed(0)
        # far from N(0, 1), so a normaliser left out of the graph would show up in the parity check
        self.mean, self.std = torch.linspace(-3, 5, OBS_DIM), torch.linspace(0.1, 4, OBS_DIM)

    def get_observations(self) -> TensorDict:
        obs = self.mean + self.std * torch.randn(self.num_envs, OBS_DIM, generator=self.gen)
        return TensorDict({"policy": obs}, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor):
        return self.get_observations(), torch.randn(self.num_envs, generator=self.gen), torch.zeros(self.num_envs), {}


def fake_runner_cfg(algorithm: dict) -> dict:
    """An rsl-rl runner config for :class:`_FakeVecEnv`: small MLPs with normalisers, ``algorithm`` as given."""
    mlp = {"class_name": "MLPModel", "hidden_dims": [32, 32], "activation": "elu", "obs_normalization": True}
    return {
        "algorithm": algorithm,
        "actor": {**mlp, "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0}},
        "critic": mlp,
        "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
        "num_steps_per_env": 8,
        "save_interval": 50,
        "logger": "tensorboard",
    }


@pytest.fixture(scope="module")
def runner():
    from rsl_rl.runners import OnPolicyRunner

    cfg = fake_runner_cfg({"class_name": "PPO", "num_learning_epochs": 1, "num_mini_batches": 1})
    runner = OnPolicyRunner(_FakeVecEnv(), cfg, log_dir=None, device="cpu")
    runner.learn(2)  # updates the empirical normaliser away from mean 0 / std 1
    return runner


@pytest.fixture(scope="module")
def exported(runner, tmp_path_factory) -> tuple[Path, dict, dict]:
    path = tmp_path_factory.mktemp("export") / "policy.onnx"
    meta = make_metadata()
    return path, meta, export_policy(actor_from_runner(runner), meta, path)


def test_single_self_contained_file(exported):
    path, _, report = exported
    assert sorted(p.name for p in path.parent.iterdir()) == ["policy.json", "policy.onnx"]
    model = onnx.load(str(path), load_external_data=False)
    assert not any(init.external_data for init in model.graph.initializer)
    assert model.opset_import[0].version >= 17
    assert report["size_bytes"] == path.stat().st_size


def test_io_names_and_dynamic_batch(exported):
    model = onnx.load(str(exported[0]))
    (inp,), (out,) = model.graph.input, model.graph.output
    assert (inp.name, out.name) == ("obs", "actions")
    assert inp.type.tensor_type.shape.dim[0].dim_param  # symbolic, not a fixed 1
    assert inp.type.tensor_type.shape.dim[1].dim_value == OBS_DIM


def test_metadata_round_trips(exported):
    path, meta, _ = exported
    assert read_metadata(path).raw == meta
    assert json.loads(path.with_suffix(".json").read_text()) == meta
    assert meta["joint_names"] == list(GO2.joint_names)
    assert meta["robot"]["mjcf"] == "assets/robots/go2/go2.xml"
    assert meta["joint_pos_limits"][2] == pytest.approx([-2.7227, -0.83776])  # FL calf, read from the MJCF by name


def test_parity_report(exported):
    report = exported[2]
    assert set(report["parity"]) == {"raw_batch1", "raw_batch64", "normalised_batch1", "normalised_batch64"}
    assert report["max_abs_err"] <= 1e-5


@pytest.mark.parametrize("batch", [1, 64])
def test_onnx_matches_pytorch_actor(runner, exported, batch):
    """Independent of the built-in check: the reader's session vs the rsl-rl actor on raw TensorDict inputs."""
    actor = actor_from_runner(runner)
    obs = _FakeVecEnv().mean + _FakeVecEnv().std * torch.randn(batch, OBS_DIM)
    with torch.no_grad():
        expected = actor(TensorDict({"policy": obs}, batch_size=[batch])).numpy()
    actual = OnnxPolicy(exported[0])(obs.numpy())
    np.testing.assert_allclose(actual, expected, atol=1e-5)


def test_parity_tolerance_is_relative_to_the_outputs(tmp_path):
    """Outputs in the thousands (a normaliser with a tiny std meeting N(0, 1) inputs) round at ~1e-4 in float32:
    that is parity, not a broken graph. The reach task's first export hit exactly this."""
    net = torch.nn.Linear(OBS_DIM, N)
    with torch.no_grad():
        net.weight.mul_(1e4)
    report = export_policy(net, make_metadata(), tmp_path / "big.onnx")
    outputs = OnnxPolicy(tmp_path / "big.onnx")(np.ones((1, OBS_DIM), np.float32))
    assert np.abs(outputs).max() > 1e3 and report["max_abs_err"] < 1e-5 * np.abs(outputs).max() * 100


def test_parity_failure_raises_and_leaves_no_file(tmp_path):
    path = tmp_path / "policy.onnx"
    with pytest.raises(ParityError, match="differ"):
        export_policy(torch.nn.Linear(OBS_DIM, N), make_metadata(), path, parity_tol=-1.0)
    assert list(tmp_path.iterdir()) == []


def test_shape_mismatch_is_refused(tmp_path):
    with pytest.raises(ValueError, match="outputs 5 actions.*take 12"):
        export_policy(torch.nn.Linear(OBS_DIM, 5), make_metadata(), tmp_path / "policy.onnx")


def test_unknown_observation_term_is_refused():
    with pytest.raises(ValueError, match="height_scan"):
        make_metadata(observations=[*TERMS, {"name": "height_scan", "size": 10, "scale": 1.0, "clip": None}])


def _identity_model() -> onnx.ModelProto:
    """A graph with the schema's input and output names whose actions are its observations (``OBS_DIM`` wide)."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Identity", ["obs"], ["actions"])],
        "identity",
        [onnx.helper.make_tensor_value_info("obs", onnx.TensorProto.FLOAT, ["batch", OBS_DIM])],
        [onnx.helper.make_tensor_value_info("actions", onnx.TensorProto.FLOAT, ["batch", OBS_DIM])],
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def test_reader_rejects_foreign_onnx(tmp_path):
    path = tmp_path / "foreign.onnx"
    onnx.save(_identity_model(), str(path))
    with pytest.raises(PolicyFileError, match="no 'sim2real' metadata"):
        read_metadata(path)


def test_reader_rejects_a_policy_whose_actions_do_not_fit_its_joints(tmp_path):
    model = _identity_model()
    embed_metadata(model, make_metadata())
    save_onnx(model, tmp_path / "wrong_width.onnx")
    with pytest.raises(PolicyFileError, match=f"output 'actions' of width {N} "):
        read_metadata(tmp_path / "wrong_width.onnx")


def test_reader_names_missing_key(exported, tmp_path):
    meta = {k: v for k, v in exported[1].items() if k != "stiffness"}
    broken = rewrite_metadata(exported[0], tmp_path / "broken.onnx", meta, validate=False)
    with pytest.raises(PolicyFileError, match=r"missing required key.*stiffness"):
        read_metadata(broken)


def test_training_info_helpers(tmp_path):
    versions = collect_versions()
    assert torch.__version__.startswith(versions["torch"])  # the wheel metadata omits the local "+cu130" tag
    assert set(versions) >= {"torch", "isaaclab", "rsl-rl-lib", "onnx", "onnxruntime", "mujoco", "numpy"}
    revision = git_revision()
    assert revision == "unknown" or len(revision.removesuffix("-dirty")) == 40
    assert git_revision(tmp_path) == "unknown"  # not a git work tree


def test_gripper_policy_exports_its_command_last(tmp_path):
    """A lift policy: one output per arm joint plus the hand's open/close command (< 0 closes), which the metadata
    maps to the fingers' open and closed positions; the observation's ``actions`` term has all of them."""
    from sim2real.config import load_task
    from sim2real.export.metadata import stamp
    from sim2real.export.task_interface import task_interface

    run = load_task("Sim2Real-Lift-Panda-v0", [])
    meta = stamp(task_interface("Sim2Real-Lift-Panda-v0", run.env, run.agent.clip_actions), "test", "0" * 40, {})
    assert meta["action"]["gripper"] == {
        "joints": ["finger_joint1", "finger_joint2"],
        "open": [0.04, 0.04],
        "closed": [0.0, 0.0],
        "speed": 0.05,
        "close_below": 0.0,
        "stiffness": 400.0,  # the fingers' PD, for a simulator of the hand (the spec's finger group)
        "damping": 10.0,
        "effort_limit": 70.0,
    }
    policy = OnnxPolicy(constant_policy(tmp_path / "lift.onnx", [0.5] * 7 + [-2.0], meta))
    actions = policy(np.zeros((1, policy.metadata.obs_dim), np.float32))[0]
    read = policy.metadata
    assert read.num_actions == 8 and actions.shape == (8,)
    assert read.gripper_targets(actions).tolist() == [0.0, 0.0]  # closed
    assert read.gripper_targets(-actions).tolist() == [0.04, 0.04]  # open
    np.testing.assert_allclose(read.targets_from_actions(actions), read.action_offset + 0.5 * read.action_scale)


G1_TASK = "Sim2Real-Velocity-Flat-G1-v0"


def test_legs_only_policy_holds_the_other_joints_at_the_default_pose(tmp_path):
    """The G1 policy commands its 12 leg joints (``action.joints``): each output moves its leg joint, the waist and
    arms get the default pose, and the observation's ``actions`` term has the 12. A whole-body variant names none."""
    from sim2real.config import load_task
    from sim2real.export.metadata import stamp
    from sim2real.export.task_interface import task_interface
    from sim2real_deploy.policy_file import validate_metadata

    def metadata(*overrides: str) -> dict:
        run = load_task(G1_TASK, list(overrides))
        return stamp(task_interface(G1_TASK, run.env, run.agent.clip_actions), "test", "0" * 40, {})

    meta = metadata()
    legs = [j for j in meta["joint_names"] if any(part in j for part in ("hip", "knee", "ankle"))]
    assert meta["action"]["joints"] == legs and len(legs) == 12
    assert next(t["size"] for t in meta["observations"] if t["name"] == "actions") == 12
    policy = OnnxPolicy(constant_policy(tmp_path / "g1.onnx", [0.4] * 12, meta))
    read = policy.metadata
    actions = policy(np.zeros((1, read.obs_dim), np.float32))[0]
    expected = np.array(meta["default_joint_pos"])
    leg_ids = [read.joint_names.index(j) for j in legs]
    expected[leg_ids] += 0.4 * 0.25  # action scale 0.25
    np.testing.assert_allclose(read.targets_from_actions(actions), expected, atol=1e-6)

    assert "joints" not in metadata("env.held_joints=[]")["action"]  # every joint commanded
    meta["action"]["joints"] = [*legs[:-1], "no_such_joint"]
    with pytest.raises(PolicyFileError, match="action.joints"):
        validate_metadata(meta)


def test_a_joint_groups_own_action_scale_reaches_isaac_lab_and_the_metadata(monkeypatch):
    """mjlab scales each motor's action by its own torque; a group's ``action_scale`` is what the task trains with
    and what the exported file maps actions by: held joints (the G1's arms) keep their default pose."""
    from dataclasses import replace

    from sim2real.config import load_task
    from sim2real.export.task_interface import task_interface

    g1 = ROBOTS["g1"]
    knees = replace(g1.group_of("left_knee_joint"), action_scale=0.35)
    groups = tuple(knees if g.pattern == knees.pattern else g for g in g1.joint_groups)
    monkeypatch.setitem(ROBOTS, "g1", replace(g1, joint_groups=groups))
    run = load_task("Sim2Real-Velocity-Flat-G1-v0", [])
    legs = [j for j in g1.joint_names if "hip" in j or "knee" in j or "ankle" in j]
    assert run.env.actions.joint_pos.scale == {j: 0.35 if "knee" in j else 0.25 for j in legs}

    meta = PolicyMetadata(task_interface("Sim2Real-Velocity-Flat-G1-v0", run.env, run.agent.clip_actions))
    default = np.array(g1.per_joint(g1.default_joint_pos))
    step = [0.35 if "knee" in j else 0.25 if j in legs else 0.0 for j in g1.joint_names]
    np.testing.assert_allclose(meta.targets_from_actions(np.ones(len(legs))), default + np.array(step))

    run.env.actions.joint_pos.scale = {".*_knee_joint": 0.35, ".*_(hip|ankle)_.*": 0.25}  # patterns, as Isaac Lab takes
    meta = PolicyMetadata(task_interface("Sim2Real-Velocity-Flat-G1-v0", run.env, run.agent.clip_actions))
    np.testing.assert_allclose(meta.targets_from_actions(np.ones(len(legs))), default + np.array(step))
