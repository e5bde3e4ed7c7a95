"""The lift check for grasping arms: the cube from the simulation, the hand at its trained speed and PD, the
success rule, and the cube and its start area equal to the lift task's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_export import constant_policy

from sim2real.config import load_task
from sim2real.export.metadata import stamp
from sim2real.export.task_interface import task_interface
from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import read_metadata
from sim2real_deploy.sim2sim.lift import Gripper, LiftConfig, add_cube, run_lift

LIFT = "Sim2Real-Lift-Panda-v0"


@pytest.fixture(scope="module")
def lift_run():
    return load_task(LIFT, [])


def _policy(directory: Path, run, gripper: float, joint1: float = 0.0) -> Path:
    """Constant arm outputs (zero: the default pose) and hand command on the lift task's real interface."""
    meta = stamp(task_interface(LIFT, run.env, run.agent.clip_actions), "test", "0" * 40, {})
    return constant_policy(
        directory / f"hand_{gripper:+.0f}_{joint1:+.0f}.onnx", [joint1] + [0.0] * 6 + [gripper], meta
    )


@pytest.fixture(scope="module")
def open_policy(tmp_path_factory, lift_run) -> Path:
    return _policy(tmp_path_factory.mktemp("lift"), lift_run, 1.0)


def test_check_ranges_are_the_lift_tasks(lift_run):
    from sim2real.tasks.manipulation.lift_env_cfg import CUBE_SIZES

    env, cfg = lift_run.env, LiftConfig()
    assert cfg.cube_size == (min(CUBE_SIZES), max(CUBE_SIZES))
    assert cfg.cube_start == tuple(env.scene.object.init_state.pos[:2])
    pose_range = env.events.reset_object.params["pose_range"]
    assert cfg.cube_start_range == (tuple(pose_range["x"]), tuple(pose_range["y"]))
    assert cfg.cube_mass == tuple(env.events.object_mass.params["mass_distribution_params"])
    assert cfg.cube_friction == tuple(env.events.object_friction.params["static_friction_range"])
    assert cfg.episode_s == env.commands.object_pose.resampling_time_range[1]


def test_a_policy_that_never_grasps_fails(open_policy):
    report = run_lift(open_policy, LiftConfig(trials=3, episode_s=2.0))
    assert not report["passed"] and report["success_rate"] == 0.0
    assert "success rate 0.00" in report["failed"][0]
    for trial in report["trials"]:
        assert trial["closest_m"] > 0.1 and trial["max_lift_m"] < 0.005  # the cube stayed on the table
        assert 0.04 <= trial["cube"]["size"] <= 0.06 and 0.4 <= trial["cube"]["x"] <= 0.6


def test_the_cube_held_at_its_target_counts_as_success(open_policy):
    """A target where the cube already rests: it is 'held' there for hold_s, so the rule and the cube's pose as the
    policy reads it (from the simulation) agree."""
    start = dict(cube_start=(0.55, 0.1), cube_start_range=((0.0, 0.0), (0.0, 0.0)), cube_size=(0.05, 0.05))
    on_table = (0.55, 0.1, 0.025, 0.0, 0.0, 1.0, 0.0)
    report = run_lift(open_policy, LiftConfig(trials=1, targets=(on_table,), **start))
    (trial,) = report["trials"]
    assert report["passed"] and trial["success"] and trial["time_s"] == pytest.approx(1.0, abs=0.05)
    away = (0.55, 0.1, 0.3, 0.0, 0.0, 1.0, 0.0)
    assert not run_lift(open_policy, LiftConfig(trials=1, targets=(away,), episode_s=1.5, **start))["passed"]


def test_each_trial_simulates_its_sampled_cube(open_policy, monkeypatch):
    """The friction, mass and size a trial reports are the ones the simulation ran with."""
    from sim2real_deploy.sim2sim import lift

    seen = []
    cube_in_base = lift._cube_in_base

    def spy(robot):
        m, g = robot.model, robot.model.geom(lift.CUBE).id
        seen.append((m.geom_friction[g, 0], m.body_mass[m.body(lift.CUBE).id], 2 * m.geom_size[g, 0]))
        return cube_in_base(robot)

    monkeypatch.setattr(lift, "_cube_in_base", spy)
    report = run_lift(open_policy, LiftConfig(trials=2, episode_s=0.1))
    for trial, (friction, mass, size) in zip(report["trials"], seen[:: len(seen) // 2], strict=True):
        sampled = [trial["cube"][k] for k in ("friction", "mass", "size")]
        assert [friction, mass, size] == pytest.approx(sampled, abs=1e-4)
    assert seen[0][0] != seen[-1][0]  # sampled per trial, not MuJoCo's default 1.0


def test_fingers_close_at_the_trained_speed(tmp_path, lift_run):
    meta = read_metadata(_policy(tmp_path, lift_run, -1.0))
    robot = MujocoRobot.from_metadata(meta, extend=add_cube)
    gripper = Gripper(robot)
    robot.reset()
    gripper.reset()
    gripper.command(meta.gripper_targets(np.array([0.0] * 7 + [-1.0])))
    dt = robot.model.opt.timestep
    for _ in range(round(0.4 / dt)):  # 0.4 s at 0.05 m/s: the target has travelled 0.02 m of the 0.04
        gripper.apply(dt)
        robot.physics_step(robot.default_pos)
    np.testing.assert_allclose(gripper.target, 0.02, atol=1e-9)
    np.testing.assert_allclose(gripper.position, 0.02, atol=0.003)  # PD 400 / 10 follows it closely


def test_the_arm_moves_behind_the_slew_limit(tmp_path, lift_run, monkeypatch):
    """Arm targets are slew-limited as in training and policy_node (the reach check's rule): a policy asking joint 1
    for 5 rad at once swings it at most the limit's speed; without the limit (0) it swings faster."""
    from sim2real_deploy.sim2sim import lift

    policy = _policy(tmp_path, lift_run, 1.0, joint1=10.0)  # clipped to 10: target = default + 0.5 x 10 rad
    swing = {}
    cube_in_base = lift._cube_in_base
    for fraction in (0.5, 0.0):
        seen = []
        monkeypatch.setattr(
            lift, "_cube_in_base", lambda robot, seen=seen: seen.append(robot.q[0]) or cube_in_base(robot)
        )
        run_lift(policy, LiftConfig(trials=1, episode_s=0.5, target_rate_fraction=fraction))
        swing[fraction] = max(seen)
    meta = read_metadata(policy)
    limit = 0.5 * meta.joint_array("velocity_limit")[0] * 0.5  # rad in 0.5 s at half the no-load speed
    assert 0.5 * limit < swing[0.5] <= limit + 1e-6
    assert swing[0.0] > 1.3 * swing[0.5]
