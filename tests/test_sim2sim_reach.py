"""The reach check for fixed-base arms: pose targets from the trained workspace, errors of the hand's pose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_export import constant_policy

from sim2real.config import load_task
from sim2real.export.metadata import stamp
from sim2real.export.task_interface import task_interface
from sim2real_deploy.commands import quat_from_euler_xyz
from sim2real_deploy.mujoco_robot import EndEffectorFrame, MujocoRobot
from sim2real_deploy.policy_file import read_metadata
from sim2real_deploy.sim2sim.reach import ReachConfig, run_reach, sample_targets

REACH = "Sim2Real-Reach-Panda-v0"


@pytest.fixture(scope="module")
def hold_policy(tmp_path_factory) -> Path:
    """Zero output on the reach task's real interface: the arm holds its default pose."""
    run = load_task(REACH, [])
    meta = stamp(task_interface(REACH, run.env, run.agent.clip_actions), "test", "0" * 40, {})
    return constant_policy(tmp_path_factory.mktemp("reach") / "hold.onnx", 0.0, meta)


def test_euler_to_quaternion_as_isaac_lab():
    """The same rotation as Isaac Lab's own ``quat_from_euler_xyz`` (which returns x, y, z, w)."""
    import torch
    from isaaclab.utils.math import quat_from_euler_xyz as isaac

    np.testing.assert_allclose(quat_from_euler_xyz(0.0, np.pi, 0.0), [0, 0, 1, 0], atol=1e-12)  # pi about y
    for roll, pitch, yaw in np.random.default_rng(0).uniform(-np.pi, np.pi, size=(20, 3)):
        x, y, z, w = isaac(*(torch.tensor([a], dtype=torch.float64) for a in (roll, pitch, yaw)))[0].tolist()
        np.testing.assert_allclose(quat_from_euler_xyz(roll, pitch, yaw), [w, x, y, z], atol=1e-12)


def test_command_is_what_training_fed_the_policy(hold_policy):
    """The reach env's own pose command, taken as a pose (MuJoCo order w, x, y, z) and built back into the policy's
    command input by field name, equals the env's ``pose_command`` observation: the quaternion order included."""
    import torch
    from conftest import task_env

    from sim2real_deploy.sim2sim.reach import command_vector

    meta = read_metadata(hold_policy)
    with task_env(REACH, "env.observations.policy.enable_corruption=false", num_envs=4) as env:
        env.reset()
        obs = env.step(torch.zeros(4, env.num_actions))[0]["policy"]
        trained = env.unwrapped.command_manager.get_command("ee_pose").double().numpy()  # x y z qx qy qz qw
        start = 2 * len(meta.joint_names)  # joint_pos, joint_vel, then pose_command
        np.testing.assert_allclose(obs[:, start : start + 7].double().numpy(), trained, atol=1e-6)
        for row in trained:
            pose = np.array([*row[:3], row[6], *row[3:6]])
            np.testing.assert_allclose(command_vector(meta, pose), row, atol=1e-12)


def test_targets_lie_in_the_trained_workspace(hold_policy):
    meta = read_metadata(hold_policy)
    workspace = meta.raw["commands"]["workspace"]
    targets = sample_targets(meta, 200, np.random.default_rng(0))
    for i, key in enumerate(("pos_x", "pos_y", "pos_z")):
        assert workspace[key][0] <= targets[:, i].min() and targets[:, i].max() <= workspace[key][1]
    z_down = [1 - 2 * (q[1] ** 2 + q[2] ** 2) for q in targets[:, 3:]]  # world z of the hand's z axis
    np.testing.assert_allclose(z_down, -1.0, atol=1e-9)  # roll 0, pitch pi: the hand points straight down
    assert np.ptp(targets[:, 0]) > 0.2  # spread over the workspace, not one point


def test_holding_still_passes_only_at_its_own_pose(hold_policy):
    failed = run_reach(hold_policy, ReachConfig(targets=4))
    assert not failed["passed"] and failed["mean_pos_err"] > 0.05
    robot = MujocoRobot.from_metadata(read_metadata(hold_policy))
    robot.reset()
    for _ in range(150):  # 3 s holding the default pose: where the hand settles
        robot.step(robot.default_pos)
    pos, quat = EndEffectorFrame(robot).ee_pose()
    passed = run_reach(hold_policy, ReachConfig(poses=(tuple([*pos, *quat]),)))
    assert passed["passed"] and passed["mean_pos_err"] < 0.002 and passed["mean_rot_err"] < 0.01


def test_each_target_gets_the_time_training_gives_it():
    run = load_task(REACH, [])
    assert ReachConfig().hold_s == run.env.commands.ee_pose.resampling_time_range[1]


def test_the_check_applies_the_slew_limit_the_policy_trained_behind(hold_policy):
    """By default the check limits the targets as the recorded training (and the node) did; 0 turns it off."""
    from sim2real_deploy.sim2sim.episode import target_steps

    meta = read_metadata(hold_policy)
    run = load_task(REACH, [])
    recorded = run.env.actions.joint_pos.max_target_rate
    meta.raw["training"]["domain_randomization"] = {"max_target_rate": recorded}
    steps = target_steps(meta, None)
    np.testing.assert_allclose(steps, [recorded[j] * meta.control_dt for j in meta.joint_names])
    np.testing.assert_allclose(steps, 0.5 * meta.joint_array("velocity_limit") * meta.control_dt)  # the node's 0.5
    assert target_steps(meta, 0.0) is None
    meta.raw["training"]["domain_randomization"] = {}
    assert target_steps(meta, None) is None  # a file that records none: unlimited, as it was trained
