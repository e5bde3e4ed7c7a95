"""The ROS-free controller serving a fixed-base arm (the shipped Panda reach policy): pose targets, no IMU."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_policy import REPO

from sim2real_deploy.commands import workspace_center_quat
from sim2real_deploy.controller import ControllerConfig, Mode, PolicyController
from sim2real_deploy.policy_file import OnnxPolicy, PolicyFileError, read_metadata

REACH = REPO / "assets/policies/panda_reach/policy.onnx"
DT = 0.02
# a target inside the trained workspace: the hand 0.5 m ahead, 0.3 m up, in the middle of the trained orientations
POSITION = (0.5, 0.0, 0.3)
DOWN = tuple(workspace_center_quat(read_metadata(REACH).raw["commands"]["workspace"]))  # x, y, z, w


@pytest.fixture(scope="module")
def policy() -> OnnxPolicy:
    return OnnxPolicy(REACH)


def make(policy: OnnxPolicy, **cfg) -> PolicyController:
    config = ControllerConfig(**{"stand_time": 0.2, **cfg})
    return PolicyController(policy.metadata, policy, config, log=lambda msg: None)


def feed(ctrl: PolicyController, now: float, q: np.ndarray | None = None) -> None:
    q = ctrl.default_pos if q is None else q
    ctrl.set_joint_state(ctrl.joint_names, q, np.zeros(len(q)), now)


def standing(ctrl: PolicyController) -> float:
    t = 0.0
    for _ in range(20):
        feed(ctrl, t)
        ctrl.step(t)
        t += DT
    assert ctrl.mode == Mode.STANDING
    return t


def test_arm_runs_without_imu_and_only_with_a_target(policy):
    ctrl = make(policy)
    feed(ctrl, 0.0)
    assert ctrl.step(0.0) is not None and ctrl.mode == Mode.STANDING  # joint_states alone: no IMU to wait for
    t = standing(ctrl)
    ok, msg = ctrl.enable(t)
    assert not ok and "target pose" in msg and ctrl.mode == Mode.STANDING
    ctrl.set_pose_target(POSITION, DOWN, t)
    assert ctrl.enable(t)[0] and ctrl.mode == Mode.RUNNING
    for _ in range(100):  # 2 s: far past cmd_timeout; a pose target is a setpoint and holds
        t += DT
        feed(ctrl, t)
        target = ctrl.step(t)
    assert ctrl.mode == Mode.RUNNING and np.all((target >= ctrl.pos_lo) & (target <= ctrl.pos_hi))
    names = ctrl.meta.command_names
    command = dict(zip(names, ctrl.command(t), strict=True))
    assert command == pytest.approx(dict(zip(names, (*POSITION, *DOWN), strict=True)))


def test_target_is_clamped_to_the_workspace_and_its_quaternion_sign_made_canonical(policy):
    ctrl = make(policy)
    ctrl.set_pose_target((2.0, -1.0, 0.3), tuple(-2.0 * np.array(DOWN)), 0.0)
    assert ctrl.command(0.0) is None  # a quaternion of norm 2 is not a rotation anyone meant: refused
    ctrl.set_pose_target((2.0, -1.0, 0.3), tuple(-np.array(DOWN)), 0.0)
    workspace = policy.metadata.raw["commands"]["workspace"]
    command = dict(zip(policy.metadata.command_names, ctrl.command(0.0), strict=True))
    assert command["pos_x"] == workspace["pos_x"][1] and command["pos_y"] == workspace["pos_y"][0]
    # -q is the same rotation; training only saw the hemisphere of its workspace centre
    assert (command["quat_x"], command["quat_y"], command["quat_z"], command["quat_w"]) == pytest.approx(DOWN)


@pytest.mark.parametrize("orientation", [(np.nan, 1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)])
def test_bad_target_while_running_damps_within_limits(policy, orientation):
    ctrl = make(policy)
    t = standing(ctrl)
    ctrl.set_pose_target(POSITION, DOWN, t)
    assert ctrl.enable(t)[0]
    before = ctrl.default_pos
    for _ in range(10):
        t += DT
        feed(ctrl, t, q=before + 0.02)  # the arm tracks its targets, 0.02 rad off (its gravity error)
        before = ctrl.step(t)
    ctrl.set_pose_target(POSITION, orientation, t)
    feed(ctrl, t + DT, q=before + 0.02)
    target = ctrl.step(t + DT)
    assert ctrl.mode == Mode.DAMPING and "target_pose" in ctrl.reason
    np.testing.assert_array_equal(target, before)  # an arm tracking its target holds it: no step, no sag
    assert np.all((target >= ctrl.pos_lo) & (target <= ctrl.pos_hi))


def test_a_bad_target_before_enable_is_refused_and_a_fault(policy):
    ctrl = make(policy)
    t = standing(ctrl)
    ctrl.set_pose_target(POSITION, (0.0, 0.0, 0.0, 0.0), t)
    assert not ctrl.enable(t)[0]
    feed(ctrl, t + DT)
    ctrl.step(t + DT)
    assert ctrl.mode == Mode.DAMPING  # a bad input is a fault in every commanding mode, as cmd_vel's NaN is


def test_arm_refuses_velocity_commands(policy):
    ctrl = make(policy)
    with pytest.raises(PolicyFileError, match="ee_pose"):
        ctrl.set_command(0.5, 0.0, 0.0, 0.0)


def test_reset_forgets_the_old_target_and_a_blocked_arm_holds_what_it_measures(policy):
    ctrl = make(policy)
    t = standing(ctrl)
    ctrl.set_pose_target(POSITION, DOWN, t)
    assert ctrl.enable(t)[0]
    t += DT
    feed(ctrl, t)
    ctrl.step(t)
    blocked = ctrl.last_target + 0.3  # the arm stopped 0.3 rad short of its target (an obstacle)
    ctrl.estop()
    t += DT
    feed(ctrl, t, q=blocked)
    ctrl.step(t)
    np.testing.assert_allclose(ctrl.hold_pos, np.clip(blocked, ctrl.pos_lo, ctrl.pos_hi))  # not the far target
    assert ctrl.reset(t)[0] and ctrl.command(t) is None  # the pre-fault target is gone
    t = standing(ctrl)
    assert not ctrl.enable(t)[0]  # a new target is needed
