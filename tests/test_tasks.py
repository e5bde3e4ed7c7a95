"""Every registered task, the whole road at toy scale: build and train 2 iterations from the CLI, export from the
run, 2 s of sim-to-sim in native MuJoCo, and the ROS node (real rclpy, its own venv) loading the file.

Arm tasks export (reach: a pose target; lift: plus the gripper command); a reach policy runs the reach check, a lift
policy the lift check, and both load in the ROS node. The lift export is also what the robot-side tests' grasping
fixture (``deploy_ros/test/fixture_policy.py``) claims to be: the same gripper and observation terms.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from sim2real import REPO_ROOT
from sim2real.config import task_ids
from sim2real.robots import ROBOTS
from sim2real.robots.isaaclab import mjcf_friction_model
from sim2real_deploy.policy_file import read_metadata
from sim2real_deploy.sim2sim import Segment, Sim2SimConfig, Sim2SimError, run_sim2sim
from sim2real_deploy.sim2sim.lift import LiftConfig, run_lift
from sim2real_deploy.sim2sim.reach import ReachConfig, run_reach

ROS_PYTHON = REPO_ROOT / ".venv-ros" / "bin" / "python"
_FIXTURE = importlib.util.spec_from_file_location("fixture_policy", REPO_ROOT / "deploy_ros/test/fixture_policy.py")
NODE_LOADS = """
import sys
import rclpy
from rclpy.parameter import Parameter
from sim2real_deploy.policy_file import PolicyFileError
from sim2real_deploy.policy_node import PolicyNode
rclpy.init()
try:
    node = PolicyNode(parameter_overrides=[Parameter("policy_path", value=sys.argv[1])])
except PolicyFileError as exc:
    print("REFUSED", exc)
else:
    print("LOADED", node.controller.mode.value, node.controller.meta.obs_dim)
    node.destroy_node()
rclpy.shutdown()
"""


def policy_node_loads(policy: Path) -> str:
    env = {**os.environ, "AMENT_PREFIX_PATH": str(ROS_PYTHON.parent.parent), "ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"}
    result = subprocess.run(
        [str(ROS_PYTHON), "-c", NODE_LOADS, str(policy)], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.parametrize("task", task_ids())
def test_task_trains_exports_checks_and_serves(task, tmp_path: Path):
    args = ["train", "--task", task, "env.scene.num_envs=4", "agent.num_steps_per_env=8", "agent.max_iterations=2"]
    trained = run_cli(*args, "--log-root", str(tmp_path), cwd=tmp_path, timeout=600)
    assert trained.returncode == 0, trained.stderr[-3000:]
    (run_dir,) = [p for p in tmp_path.glob("*/*") if (p / "run.json").is_file()]
    assert sorted(p.name for p in run_dir.glob("model_*.pt")) == ["model_0.pt", "model_1.pt"]

    exported = run_cli("export", str(run_dir), cwd=tmp_path, timeout=600)
    assert exported.returncode == 0, exported.stderr[-3000:]
    policy = run_dir / "exported" / "policy.onnx"
    recorded = json.loads((run_dir / "policy_interface.json").read_text())
    spec = ROBOTS[recorded["robot"]["name"]]
    trained = read_metadata(policy).domain_randomization  # what the run randomised, carried in the file
    assert trained["physics"] | {"preset": None, "dt": None} == {
        **mjcf_friction_model(spec),
        "preset": None,
        "dt": None,
    }
    assert trained["joint_dynamics"] == (spec.passive_ranges() or None)

    schedule = (Segment("stand", 2.0, (0.0, 0.0, 0.0)),)
    if recorded["robot"]["base"] == "floating":
        report = run_sim2sim(policy, Sim2SimConfig(schedule=schedule))
        assert report["task_id"] == task and report["episodes"][0]["segments"][0]["end"] == 2.0
        assert policy_node_loads(policy).startswith("LOADED WAITING")
    else:  # an arm: the reach or the lift check; the node serves both
        with pytest.raises(Sim2SimError, match="floating-base"):
            run_sim2sim(policy, Sim2SimConfig(schedule=schedule))
        if read_metadata(policy).gripper:
            with pytest.raises(Sim2SimError, match="lift"):
                run_reach(policy)
            report = run_lift(policy, LiftConfig(trials=2, episode_s=0.5))
            assert report["task_id"] == task and len(report["trials"]) == 2 and not report["passed"]  # untrained
            assert policy_node_loads(policy).startswith("LOADED WAITING")
            _assert_fixture_matches(read_metadata(policy).raw)
        else:
            report = run_reach(policy, ReachConfig(targets=2, hold_s=0.5, measure_s=0.2))
            assert report["task_id"] == task and len(report["targets"]) == 2 and not report["passed"]  # untrained
            assert all(np.isfinite([t["pos_err"], t["rot_err"]]).all() for t in report["targets"])
            assert policy_node_loads(policy).startswith("LOADED WAITING")


def _assert_fixture_matches(exported: dict) -> None:
    """The robot-side grasping fixture is this export: its gripper action and observation terms."""
    fixture = importlib.util.module_from_spec(_FIXTURE)
    _FIXTURE.loader.exec_module(fixture)
    claimed = fixture.lift_metadata()
    assert exported["action"]["gripper"] == claimed["action"]["gripper"]
    terms = [(t["name"], t["size"], t["scale"], t["clip"]) for t in exported["observations"]]
    assert terms == [(t["name"], t["size"], t["scale"], t["clip"]) for t in claimed["observations"]]
