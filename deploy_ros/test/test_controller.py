"""Unit tests of the ROS-free controller: modes, observation assembly and safety clamps with a fake clock."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_policy import JOINT_NAMES, default_pose, go2_metadata

from sim2real_deploy.controller import ControllerConfig, Mode, PolicyController
from sim2real_deploy.observations import projected_gravity, tilt_angle
from sim2real_deploy.policy_file import PolicyFileError, validate_metadata

DT = 0.02
UPRIGHT = (0.0, 0.0, 0.0, 1.0)  # x, y, z, w
DEFAULT = np.array([default_pose(n) for n in JOINT_NAMES])


def make(policy=None, meta=None, **cfg) -> PolicyController:
    meta = validate_metadata(meta or go2_metadata())
    policy = policy or (lambda obs: np.zeros(12, np.float32))
    config = ControllerConfig(**{"stand_time": 0.2, **cfg})
    return PolicyController(meta, policy, config, log=lambda msg: None)


def feed(ctrl: PolicyController, now: float, q=None, names=None, quat=UPRIGHT) -> None:
    names = list(names or JOINT_NAMES)
    q = DEFAULT + 0.3 if q is None else q
    pos = [q[JOINT_NAMES.index(n)] if n in JOINT_NAMES else 0.0 for n in names]
    ctrl.set_joint_state(names, pos, [0.0] * len(names), now)
    ctrl.set_imu(quat, (0.0, 0.0, 0.0), now)


def run(ctrl: PolicyController, start: float, ticks: int, **feed_kwargs) -> tuple[float, list]:
    out = []
    t = start
    for _ in range(ticks):
        feed(ctrl, t, **feed_kwargs)
        out.append(ctrl.step(t))
        t += DT
    return t, out


def to_standing_done(ctrl: PolicyController) -> float:
    t, _ = run(ctrl, 0.0, 20)
    assert ctrl.mode == Mode.STANDING
    return t


def test_waiting_publishes_nothing_then_soft_start_reaches_default():
    ctrl = make()
    assert ctrl.step(0.0) is None and ctrl.mode == Mode.WAITING
    t, out = run(ctrl, 0.0, 20)
    assert ctrl.mode == Mode.STANDING
    assert np.allclose(out[0], DEFAULT + 0.3)  # starts at the measured pose
    assert np.allclose(out[-1], DEFAULT)
    steps = np.abs(np.diff(np.array(out), axis=0)).max()
    assert steps < 0.3 / (0.2 / DT) + 1e-9  # linear interpolation, no jump


def test_enable_only_after_soft_start_and_policy_order():
    ctrl = make()
    feed(ctrl, 0.0)
    ctrl.step(0.0)
    ok, msg = ctrl.enable(0.05)
    assert not ok and "soft start" in msg
    t = to_standing_done(ctrl)
    ok, _ = ctrl.enable(t)
    assert ok and ctrl.mode == Mode.RUNNING


def test_observation_terms_scales_and_clip():
    meta = go2_metadata()
    meta["observations"][0]["scale"] = 0.25
    meta["observations"][3]["clip"] = [-0.1, 0.1]
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.ones(12, np.float32))[1], meta=meta)
    t = to_standing_done(ctrl)
    ctrl.enable(t)
    ctrl.set_command(0.5, 9.0, -5.0, t)
    ctrl.set_imu(UPRIGHT, (1.0, 2.0, 3.0), t)
    target = ctrl.step(t)
    obs = seen[-1]
    assert obs.shape == (45,)
    assert np.allclose(obs[0:3], [0.25, 0.5, 0.75])
    assert np.allclose(obs[3:6], [0, 0, -1])
    ranges = np.array(meta["commands"]["ranges"])
    assert np.allclose(obs[6:9], np.clip([0.5, 9.0, -5.0], ranges[:, 0], ranges[:, 1]))  # clamped to trained ranges
    assert obs[7] < 9.0 and obs[8] > -5.0
    assert np.allclose(obs[9:21], 0.1)  # measured DEFAULT+0.3, clipped
    assert np.allclose(obs[33:45], 0.0)  # previous action starts at zero
    assert np.allclose(target, DEFAULT + 0.25)
    feed(ctrl, t + DT)
    ctrl.step(t + DT)
    assert np.allclose(seen[-1][33:45], 1.0)


def test_joints_in_another_order_and_extra_joints():
    ctrl = make()
    names = list(reversed(JOINT_NAMES)) + ["head_joint"]
    t, out = run(ctrl, 0.0, 20, names=names)
    assert ctrl.mode == Mode.STANDING and np.allclose(ctrl.q, DEFAULT + 0.3)


def test_output_joint_order():
    order = [f"{leg}_{p}_joint" for leg in ("FR", "FL", "RR", "RL") for p in ("hip", "thigh", "calf")]
    ctrl = make(output_joint_names=order)
    _, out = run(ctrl, 0.0, 20)
    assert np.allclose(out[-1], [default_pose(n) for n in order])
    with pytest.raises(PolicyFileError):
        make(output_joint_names=order[:-1])


@pytest.mark.parametrize("fault", ["nan", "missing", "tilt", "stale", "estop", "cmd_nan", "policy_nan"])
def test_faults_enter_damping_and_hold(fault):
    policy = (lambda obs: np.full(12, np.nan, np.float32)) if fault == "policy_nan" else None
    ctrl = make(policy=policy)
    t = to_standing_done(ctrl)
    ctrl.enable(t)
    ctrl.step(t)
    held = ctrl.safe_pos.copy()
    q = DEFAULT.copy()
    if fault == "nan":
        q[4] = np.nan
        feed(ctrl, t, q=q)
    elif fault == "missing":
        feed(ctrl, t, names=JOINT_NAMES[1:])
    elif fault == "tilt":
        feed(ctrl, t, quat=(np.sin(0.5), 0.0, 0.0, np.cos(0.5)))  # 1 rad roll
    elif fault == "estop":
        ctrl.estop()
    elif fault == "cmd_nan":
        ctrl.set_command(np.nan, 0, 0, t)
    target = ctrl.step(t + (1.0 if fault == "stale" else DT))
    assert ctrl.mode == Mode.DAMPING, fault
    if fault != "tilt":
        assert np.allclose(target, held)
    assert np.all(target >= ctrl.pos_lo) and np.all(target <= ctrl.pos_hi)
    # Stays in DAMPING with good data until reset, then soft-starts again.
    ctrl.set_command(0.0, 0.0, 0.0, t + 2)  # the faulty input is gone: DAMPING still latches
    run(ctrl, t + 2, 5)
    assert ctrl.mode == Mode.DAMPING and not ctrl.enable(t + 3)[0]
    assert ctrl.reset(t + 3)[0] and ctrl.mode == Mode.WAITING
    run(ctrl, t + 3, 2)
    assert ctrl.mode == Mode.STANDING


def test_estop_from_waiting_publishes_nothing():
    ctrl = make()
    ctrl.estop()
    assert ctrl.step(0.0) is None and ctrl.mode == Mode.DAMPING
    assert not ctrl.reset(0.0)[0] or ctrl.mode == Mode.WAITING


def test_targets_clamped_and_rate_limited():
    ctrl = make(policy=lambda obs: np.full(12, 1e6, np.float32), max_target_rate=5.0)
    t = to_standing_done(ctrl)
    ctrl.enable(t)
    prev = ctrl.last_target.copy()
    for _ in range(100):
        t += DT
        feed(ctrl, t, q=DEFAULT)
        target = ctrl.step(t)
        assert np.all(np.abs(target - prev) <= 5.0 * DT + 1e-9)
        assert np.all(target >= ctrl.pos_lo) and np.all(target <= ctrl.pos_hi)
        prev = target
    assert np.allclose(target, ctrl.pos_hi)


def test_stale_command_counts_as_zero():
    ctrl = make(cmd_timeout=0.5)
    ctrl.set_command(1.0, 0.0, 0.0, 0.0)
    assert np.allclose(ctrl.command(0.1), [1, 0, 0])
    assert np.allclose(ctrl.command(1.0), [0, 0, 0])


def test_unsupported_policy_rejected():
    meta = go2_metadata()
    meta["observations"][0]["name"] = "height_scan"
    with pytest.raises(PolicyFileError, match="height_scan"):
        make(meta=meta)


def test_projected_gravity_and_tilt():
    assert np.allclose(projected_gravity(np.array([1.0, 0, 0, 0])), [0, 0, -1])
    roll = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0, 0])  # (w, x, y, z): 90 deg about x
    assert np.allclose(projected_gravity(roll), [0, -1, 0], atol=1e-9)
    assert np.isclose(tilt_angle(projected_gravity(roll)), np.pi / 2)
