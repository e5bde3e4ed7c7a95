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
    ctrl = make(policy=lambda obs: (seen.append(obs), np.ones(12, np.float32))[1], meta=meta, max_target_rate=100.0)
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


def test_gait_clock_counts_control_ticks_from_enable():
    """A clock term's phase is (ticks since RUNNING began x control_dt / period) mod 1: phase 0 at the first policy
    tick, as at the first step of a training episode."""
    meta = go2_metadata()
    meta["observations"].append(
        {"name": "gait_phase", "size": 2, "scale": 1.0, "clip": None, "params": {"period": 0.8}}
    )
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.zeros(12, np.float32))[1], meta=meta)
    t = to_standing_done(ctrl)
    assert not seen  # the soft start does not run the policy, nor the clock
    ctrl.enable(t)
    run(ctrl, t, 11)
    phases = [np.arctan2(obs[-2], obs[-1]) / (2 * np.pi) % 1.0 for obs in seen]
    np.testing.assert_allclose(phases, [(k * 0.02 / 0.8) % 1.0 for k in range(11)], atol=1e-6)
    assert np.allclose(seen[10][-2:], [1.0, 0.0], atol=1e-6)  # a quarter period after enable


def test_observation_history_frames_oldest_first_and_refilled_at_enable():
    """A term with ``history`` 3 feeds its last 3 values, oldest first; at the first policy tick (enable) every
    frame is the current value, as Isaac Lab's history after a reset; a bad history is refused."""
    meta = go2_metadata()
    actions = next(t for t in meta["observations"] if t["name"] == "actions")
    actions["history"] = 3
    validate_metadata(meta)
    outputs = iter(np.arange(1, 20, dtype=np.float32))  # the policy's k-th call outputs k on every joint
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.full(12, next(outputs), np.float32))[1], meta=meta)
    ctrl.enable(to_standing_done(ctrl))
    run(ctrl, ctrl.last_tick, 4)
    assert seen[0].shape == (45 + 24,)
    frames = [obs[33:69].reshape(3, 12)[:, 0].tolist() for obs in seen]  # the actions term's three frames
    assert frames == [[0, 0, 0], [0, 0, 1], [0, 1, 2], [1, 2, 3]]
    actions["history"] = 0
    with pytest.raises(PolicyFileError, match="history must be an integer >= 1"):
        validate_metadata(meta)


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


def running(ctrl: PolicyController, ticks: int = 5) -> float:
    """Soft start, enable, then ``ticks`` RUNNING ticks at the default pose; returns the next tick's time."""
    t = to_standing_done(ctrl)
    ctrl.enable(t)
    return run(ctrl, t, ticks, q=DEFAULT)[0]


@pytest.mark.parametrize(
    "fault", ["nan", "missing", "tilt", "stale", "estop", "cmd_nan", "policy_nan", "out_of_range", "duplicate"]
)
def test_faults_enter_damping_smoothly_and_hold(fault):
    policy = (lambda obs: np.full(12, np.nan, np.float32)) if fault == "policy_nan" else None
    ctrl = make(policy=policy)
    t = running(ctrl)
    held, before = ctrl.safe_pos.copy(), ctrl.last_target.copy()
    q, names = DEFAULT.copy(), list(JOINT_NAMES)
    if fault == "nan":
        q[4] = np.nan
    elif fault == "out_of_range":
        q[2] = 3.0  # a calf reading far outside [-2.72, -0.84]: a glitch, not a pose
    elif fault == "duplicate":
        names[1] = names[0]
    if fault == "missing":
        feed(ctrl, t, names=JOINT_NAMES[1:])
    elif fault == "tilt":
        feed(ctrl, t, q=DEFAULT, quat=(np.sin(0.5), 0.0, 0.0, np.cos(0.5)))  # 1 rad roll
    elif fault == "estop":
        ctrl.estop()
    elif fault == "cmd_nan":
        ctrl.set_command(np.nan, 0, 0, t)
    elif fault == "stale":  # the driver stops; the node keeps ticking
        for _ in range(int(0.2 / DT)):
            ctrl.step(t)
            t += DT
    elif fault != "policy_nan":
        ctrl.set_joint_state(names, q, [0.0] * 12, t)
    target = ctrl.step(t)
    assert ctrl.mode == Mode.DAMPING, fault
    expected_reason = {
        "nan": "NaN",
        "missing": "lacks joint",
        "tilt": "tilt",
        "stale": "stale",
        "estop": "e-stop",
        "cmd_nan": "cmd_vel",
        "policy_nan": "policy output",
        "out_of_range": "outside its limits",
        "duplicate": "more than once",
    }
    assert expected_reason[fault] in ctrl.reason, ctrl.reason
    assert np.all(np.abs(target - before) <= ctrl.config.damping_rate * DT + 1e-9)  # no step on entry
    assert np.all(target >= ctrl.pos_lo) and np.all(target <= ctrl.pos_hi)
    # The target slews to the held pose and stays; DAMPING latches with good data until reset, then soft-starts.
    ctrl.set_command(0.0, 0.0, 0.0, t + 2)
    _, out = run(ctrl, t + DT, 50, q=DEFAULT)
    assert np.allclose(out[-1], held) and ctrl.mode == Mode.DAMPING and not ctrl.enable(t + 3)[0]
    assert ctrl.reset(t + 3)[0] and ctrl.mode == Mode.WAITING
    run(ctrl, t + 3, 2)
    assert ctrl.mode == Mode.STANDING


def test_estop_from_waiting_publishes_nothing():
    ctrl = make()
    ctrl.estop()
    assert ctrl.step(0.0) is None and ctrl.mode == Mode.DAMPING
    assert not ctrl.reset(0.0)[0] or ctrl.mode == Mode.WAITING


def test_estop_while_waiting_with_joint_states_never_commands():
    """Valid joint_states, no imu yet, then an e-stop: the robot was never under control, so nothing is sent."""
    ctrl = make()
    for k in range(20):
        ctrl.set_joint_state(JOINT_NAMES, DEFAULT, [0.0] * 12, k * DT)
        if k == 5:
            ctrl.estop()
        assert ctrl.step(k * DT) is None
    assert ctrl.mode == Mode.DAMPING


def test_out_of_range_reading_is_not_a_state_to_soft_start_from():
    ctrl = make()
    q = DEFAULT.copy()
    q[2] = 3.0
    _, out = run(ctrl, 0.0, 10, q=q)
    assert ctrl.mode == Mode.WAITING and all(x is None for x in out) and "outside its limits" in ctrl.reason


def test_single_bad_sample_between_good_ones_is_a_fault():
    """A lone NaN sample at 200 Hz, cleared by the next good one before the tick, still faults."""
    ctrl = make()
    t = running(ctrl)
    bad = DEFAULT.copy()
    bad[0] = np.nan
    ctrl.set_joint_state(JOINT_NAMES, bad, [0.0] * 12, t)
    feed(ctrl, t + 0.005, q=DEFAULT)
    ctrl.step(t + 0.01)
    assert ctrl.mode == Mode.DAMPING and "NaN" in ctrl.reason


def test_own_stall_is_not_blamed_on_the_driver():
    ctrl = make()
    t = running(ctrl)
    for k in range(30):  # the driver keeps publishing at 200 Hz while the node is paused for 150 ms
        feed(ctrl, t + k * 0.005, q=DEFAULT)
    ctrl.step(t + 0.15)
    assert ctrl.mode == Mode.DAMPING and "stalled" in ctrl.reason and "stale" not in ctrl.reason


def test_nan_cmd_vel_does_not_stick_once_stale():
    ctrl = make(cmd_timeout=0.5)
    t = running(ctrl)
    ctrl.set_command(np.nan, 0.0, 0.0, t)
    ctrl.step(t)
    assert ctrl.mode == Mode.DAMPING and "cmd_vel" in ctrl.reason
    t, _ = run(ctrl, t + 2.0, 3, q=DEFAULT)  # seconds of silence: the NaN command is old, i.e. zero
    assert ctrl.reset(t)[0]
    t, _ = run(ctrl, t, 20, q=DEFAULT)
    assert ctrl.enable(t)[0] and ctrl.mode == Mode.RUNNING
    run(ctrl, t, 5, q=DEFAULT)
    assert ctrl.mode == Mode.RUNNING and np.allclose(ctrl.command(t), 0.0)


def test_default_slew_is_a_fraction_of_motor_speed():
    ctrl = make(policy=lambda obs: np.full(12, 1e6, np.float32))
    limit = ctrl.meta.joint_array("velocity_limit")
    assert np.allclose(ctrl.max_rate, 0.5 * limit)
    t = running(ctrl, ticks=0)
    prev = ctrl.last_target.copy()
    feed(ctrl, t, q=DEFAULT)
    target = ctrl.step(t)
    assert np.allclose(np.abs(target - prev), 0.5 * limit * DT) or np.all(target == ctrl.pos_hi)


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


@pytest.mark.parametrize("bad", ["tilt", "cmd_nan"])
def test_waiting_does_not_start_commanding_a_fallen_robot_or_on_a_bad_command(bad):
    """Valid, fresh state is not enough to leave WAITING: a robot on its side or a NaN cmd_vel keeps it waiting."""
    ctrl = make()
    if bad == "cmd_nan":
        ctrl.set_command(np.nan, 0.0, 0.0, 0.0)
    quat = (np.sin(0.75), 0.0, 0.0, np.cos(0.75)) if bad == "tilt" else UPRIGHT  # 1.5 rad roll
    _, out = run(ctrl, 0.0, 10, quat=quat)
    assert ctrl.mode == Mode.WAITING and all(x is None for x in out)
    assert ("tilt" if bad == "tilt" else "cmd_vel") in ctrl.reason


def test_last_action_term_is_the_clipped_action():
    """Training's `actions` term sees the action after rsl-rl's clip: the node feeds back the same."""
    meta = go2_metadata()
    meta["action"]["clip"] = 1.0
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.full(12, 5.0, np.float32))[1], meta=meta)
    running(ctrl, ticks=2)
    assert np.allclose(seen[-1][33:45], 1.0)


@pytest.mark.parametrize(
    "setting",
    [{"damping_rate": -1.0}, {"target_rate_fraction": 0.0}, {"max_target_rate": -2.0}, {"joint_limit_margin": 5.0}],
)
def test_settings_under_which_clamps_would_not_clamp_are_refused(setting):
    with pytest.raises(PolicyFileError, match=next(iter(setting))):
        make(**setting)


def test_policy_commanding_some_joints_holds_the_others_at_default():
    """A policy over a subset of the joints (``action.joints``, as the G1's legs-only policy): its outputs drive
    those joints, every other joint is commanded to its default pose, the clamps cover all, and the ``actions``
    term feeds back only the commanded joints' outputs."""
    meta = go2_metadata()
    commanded = [n for n in JOINT_NAMES if not n.startswith("FL_")]
    meta["action"]["joints"] = commanded
    actions_term = next(term for term in meta["observations"] if term["name"] == "actions")
    actions_term["size"] = len(commanded)
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.full(9, 1e6, np.float32))[1], meta=meta, max_target_rate=5.0)
    t = running(ctrl, ticks=1)
    for _ in range(200):
        t += DT
        feed(ctrl, t, q=DEFAULT)
        target = ctrl.step(t)
    held = [JOINT_NAMES.index(n) for n in JOINT_NAMES if n.startswith("FL_")]
    driven = [JOINT_NAMES.index(n) for n in commanded]
    assert np.allclose(target[held], DEFAULT[held]) and np.allclose(target[driven], ctrl.pos_hi[driven])
    assert seen[-1].shape == (45 - 3,)  # 9 commanded joints in the actions term
    actions_term["size"] = 12
    with pytest.raises(PolicyFileError, match="actions"):  # an actions term sized for every joint is refused
        make(meta=meta)


def test_held_joints_swing_on_the_clock_ticks_with_the_forward_command():
    """``action.held_swing``: a held joint's target is its default plus amplitude x clip(vx / speed) x sin(2 pi
    phase), the phase counted in control ticks from enable as the gait clock is (training's
    ``mdp.HeldJointPositionAction``); a reversed command reverses it, and the metadata refuses a swing on a
    commanded joint."""
    meta = go2_metadata()
    meta["action"]["joints"] = [n for n in JOINT_NAMES if n != "FL_thigh_joint"]
    next(term for term in meta["observations"] if term["name"] == "actions")["size"] = 11
    meta["action"]["held_swing"] = {"period": 0.8, "speed": 1.0, "amplitude": {"FL_thigh_joint": 0.2}}
    thigh = JOINT_NAMES.index("FL_thigh_joint")
    for vx in (0.5, -0.5):
        ctrl = make(policy=lambda obs: np.zeros(11, np.float32), meta=meta, max_target_rate=50.0)
        t = to_standing_done(ctrl)
        ctrl.enable(t)
        swing = []
        for _ in range(11):
            feed(ctrl, t, q=DEFAULT)
            ctrl.set_command(vx, 0.0, 0.0, t)
            swing.append(ctrl.step(t)[thigh] - DEFAULT[thigh])
            t += DT
        expected = [0.2 * vx * np.sin(2 * np.pi * k * 0.02 / 0.8) for k in range(11)]
        np.testing.assert_allclose(swing, expected, atol=1e-9)
        assert abs(swing[10]) == pytest.approx(0.1)  # a quarter period after enable: the full swing at 0.5 m/s
    meta["action"]["held_swing"]["speed"] = 0.5  # a 1 m/s command swings no wider than at 0.5
    ctrl = make(policy=lambda obs: np.zeros(11, np.float32), meta=meta, max_target_rate=50.0)
    t = to_standing_done(ctrl)
    ctrl.enable(t)
    for _ in range(11):
        feed(ctrl, t, q=DEFAULT)
        ctrl.set_command(1.0, 0.0, 0.0, t)
        target = ctrl.step(t)
        t += DT
    assert target[thigh] - DEFAULT[thigh] == pytest.approx(0.2)
    bad = {"amplitude": {"FR_thigh_joint": 0.2}, "period": "0.8", "speed": True}  # commanded by the network; text
    for key, value in bad.items():
        with pytest.raises(PolicyFileError, match="held_swing"):
            make(meta=meta | {"action": meta["action"] | {"held_swing": meta["action"]["held_swing"] | {key: value}}})
