"""ROS 2 parameter files come from the robot spec: the committed ones are what ``sim2real ros-config`` writes."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from sim2real.robots import ROBOTS
from sim2real.ros_config import CONFIG_DIR, config_files, driver_joint_order

ROBOTS_WITH_FILES = ["go2", "g1", "panda"]


@pytest.mark.parametrize("robot", ROBOTS_WITH_FILES)
def test_committed_files_are_generated_from_the_spec(robot):
    for path, text in config_files(ROBOTS[robot]).items():
        assert path.read_text() == text, f"{path.name} differs from the spec: run `sim2real ros-config {robot}`"


@pytest.mark.parametrize("robot", ROBOTS_WITH_FILES)
def test_driver_order_is_every_policy_joint_in_mjcf_actuator_order(robot):
    spec = ROBOTS[robot]
    node = yaml.safe_load((CONFIG_DIR / f"{robot}.yaml").read_text())["policy_node"]["ros__parameters"]
    bridge = yaml.safe_load((CONFIG_DIR / f"{robot}_sim.yaml").read_text())["mujoco_bridge"]["ros__parameters"]
    assert sorted(node["output_joint_names"]) == sorted(spec.joint_names)
    assert node["output_joint_names"] == bridge["command_joint_names"] == driver_joint_order(spec)


def test_go2_driver_order_is_unitrees():
    """Unitree's Go2 driver (and the MJCF) take legs FR, FL, RR, RL; the policy's order is FL, FR, RL, RR."""
    order = driver_joint_order(ROBOTS["go2"])
    assert [n.split("_")[0] for n in order[::3]] == ["FR", "FL", "RR", "RL"]
    assert order != list(ROBOTS["go2"].joint_names)


def test_cli_rejects_an_unknown_robot(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sim2real.cli", "ros-config", "atlas", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no robot 'atlas'" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())
