"""The ROS-free controller serving a grasping arm policy: finger state from joint_states, the object's position from
perception, and the hand's command, which only the policy changes: neither a fault, nor a reset, nor the soft start
opens a closed hand."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_policy import PANDA_GRIPPER, write_closing_lift_policy

from sim2real_deploy.controller import ControllerConfig, Mode, PolicyController
from sim2real_deploy.policy_file import OnnxPolicy

DT = 0.02
POSITION, DOWN = (0.5, 0.0, 0.3), (0.0, 1.0, 0.0, 0.0)  # quaternion x, y, z, w
FINGERS = PANDA_GRIPPER["joints"]
OPEN, CLOSED = np.array(PANDA_GRIPPER["open"]), np.array(PANDA_GRIPPER["closed"])
CUBE = (0.5, 0.05, 0.025)


@pytest.fixture(scope="module")
def policy(tmp_path_factory) -> OnnxPolicy:
    """Random arm outputs near zero; the hand's output biased to -1: it always closes (close_below 0)."""
    return OnnxPolicy(write_closing_lift_policy(tmp_path_factory.mktemp("lift") / "lift.onnx"))


def make(policy: OnnxPolicy, **cfg) -> PolicyController:
    return PolicyController(policy.metadata, policy, ControllerConfig(**{"stand_time": 0.2, **cfg}), log=lambda m: None)


def feed(ctrl: PolicyController, now: float, fingers: np.ndarray = OPEN) -> None:
    names = [*ctrl.joint_names, *FINGERS]
    pos = np.concatenate([ctrl.default_pos, fingers])
    ctrl.set_joint_state(names, pos, np.zeros(len(pos)), now)


def running(ctrl: PolicyController) -> float:
    t = 0.0
    for _ in range(20):
        feed(ctrl, t)
        ctrl.step(t)
        t += DT
    ctrl.set_pose_target(POSITION, DOWN, t)
    ok, msg = ctrl.enable(t)
    assert not ok and "object_pose" in msg  # standing needed no (valid) object; the policy does
    ctrl.set_object_position(CUBE, t)
    assert ctrl.enable(t)[0] and ctrl.mode == Mode.RUNNING
    return t


def test_joint_states_without_the_fingers_are_not_enough(policy):
    ctrl = make(policy)
    ctrl.set_joint_state(ctrl.joint_names, ctrl.default_pos, np.zeros(7), 0.0)
    assert ctrl.step(0.0) is None and ctrl.mode == Mode.WAITING and "finger_joint1" in ctrl.reason
    assert ctrl.gripper_target is None  # a hand the node never commanded gets nothing


def test_the_hand_is_left_alone_until_the_policy_runs_and_the_policy_reads_fingers_and_object(policy):
    ctrl = make(policy)
    feed(ctrl, 0.0, fingers=np.array([0.01, 0.01]))  # the hand holds something
    ctrl.step(0.0)
    assert ctrl.mode == Mode.STANDING and ctrl.gripper_target is None  # the soft start moves the arm only
    ctrl.set_object_position((np.nan, 0.0, 0.0), 0.0)  # perception not ready yet: no policy reads it, no fault
    feed(ctrl, DT, fingers=np.array([0.01, 0.01]))
    ctrl.step(DT)
    assert ctrl.mode == Mode.STANDING
    t = running(ctrl)
    for _ in range(2):  # the second tick's observation holds the first tick's action
        t += DT
        feed(ctrl, t, fingers=np.array([0.03, 0.02]))
        target = ctrl.step(t)
    assert ctrl.mode == Mode.RUNNING and target.shape == (7,)
    np.testing.assert_array_equal(ctrl.gripper_target, CLOSED)  # the policy's output closes the hand
    obs = dict(zip([t["name"] for t in policy.metadata.observations], _split(policy, ctrl.last_obs), strict=True))
    np.testing.assert_allclose(obs["gripper_pos"], [0.03 - 0.04, 0.02 - 0.04], atol=1e-6)  # relative to open
    np.testing.assert_allclose(obs["object_position"], CUBE, atol=1e-6)
    assert obs["actions"].shape == (8,) and obs["actions"][-1] == pytest.approx(-1.0, abs=0.2)  # the hand's too


def _split(policy: OnnxPolicy, obs: np.ndarray) -> list[np.ndarray]:
    sizes = np.cumsum([int(t["size"]) for t in policy.metadata.observations])[:-1]
    return np.split(obs, sizes)


@pytest.mark.parametrize("bad", ["stale", "nan"])
def test_lost_perception_damps_and_the_hand_stays_closed(policy, bad):
    ctrl = make(policy)
    t = running(ctrl)
    for _ in range(5):
        t += DT
        feed(ctrl, t, fingers=CLOSED + 0.02)  # holding a cube 4 cm wide
        ctrl.set_object_position(CUBE, t)
        ctrl.step(t)
    np.testing.assert_array_equal(ctrl.gripper_target, CLOSED)
    if bad == "nan":
        ctrl.set_object_position((np.nan, 0.0, 0.0), t)
    last_pose = t
    while ctrl.mode == Mode.RUNNING and t < last_pose + 1.0:
        t += DT
        feed(ctrl, t, fingers=CLOSED + 0.02)
        target = ctrl.step(t)
    assert ctrl.mode == Mode.DAMPING and "object_pose" in ctrl.reason
    timeout = ctrl.config.object_timeout
    late = t - last_pose
    assert late == pytest.approx(DT) if bad == "nan" else timeout - 1e-9 <= late <= timeout + DT  # not a tick early
    assert np.all((target >= ctrl.pos_lo) & (target <= ctrl.pos_hi))
    for _ in range(20):  # DAMPING: a fault never opens a closed hand (that would drop what it holds)
        t += DT
        feed(ctrl, t, fingers=CLOSED + 0.02)
        ctrl.step(t)
        np.testing.assert_array_equal(ctrl.gripper_target, CLOSED)
    assert ctrl.reset(t)[0]
    for _ in range(20):  # nor do the reset and the soft start after it
        t += DT
        feed(ctrl, t, fingers=CLOSED + 0.02)
        ctrl.step(t)
        np.testing.assert_array_equal(ctrl.gripper_target, CLOSED)
    assert ctrl.mode == Mode.STANDING
