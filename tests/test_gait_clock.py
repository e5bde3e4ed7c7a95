"""The gait clock (``env.gait_period``): its phase term in training and on the robot side, its rewards, and each
robot's schedule (the G1's alternate steps, the Go2's trot).

Its own module: it builds its own env, which cannot coexist with ``test_g1``'s module-wide one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import task_env

from sim2real.export.task_interface import policy_terms
from sim2real_deploy.observations import ObservationBuilder, RobotState

G1_TASK = "Sim2Real-Velocity-Flat-G1-v0"
GO2_TASK = "Sim2Real-Velocity-Flat-Go2-v0"
NUM_ENVS, NUM_JOINTS, NUM_ACTIONS = 4, 23, 12  # the G1 policy drives its legs


def test_gait_clock_phase_is_what_the_robot_side_computes_from_its_ticks():
    """With ``env.gait_period`` (the G1's 0.7 s), policy and critic observe the clock; the exported term carries
    the period, and the robot side (counting control ticks since the policy took over) computes the same values per
    env, each env at its own point of the clock (its own episode time). With ``env.gait_still_when_standing`` (the
    G1's too) the clock reads (0, 0) on both sides while the command is zero."""
    captured = {}
    overrides = ("env.observations.policy.history_length=0",)  # the G1's default clock, one frame of it
    with task_env(G1_TASK, *overrides, num_envs=NUM_ENVS, configure=lambda run: captured.update(run=run)) as env:
        run = captured["run"]
        terms = policy_terms(run.env)
        params = {"period": 0.7, "still_below": 0.1}
        assert terms[-1] == {"name": "gait_phase", "size": 2, "scale": 1.0, "clip": None, "params": params}
        build = ObservationBuilder(terms[-1:], np.zeros(NUM_JOINTS), control_dt=env.unwrapped.step_dt)
        state, walk = RobotState(np.zeros(NUM_JOINTS), np.zeros(NUM_JOINTS)), np.array([0.5, 0.0, 0.0])
        # tick 7 of 0.02 s: 0.14 s, a fifth of the 0.7 s period, (sin, cos) of 0.4 pi
        assert build(state, walk, np.zeros(NUM_JOINTS), tick=7) == pytest.approx([0.95106, 0.30902], abs=1e-5)
        assert build(state, np.zeros(3), np.zeros(NUM_JOINTS), tick=7).tolist() == [0.0, 0.0]
        env.reset()
        env.unwrapped.episode_length_buf[1] = 17  # as if env 1 had started earlier
        commands = env.unwrapped.command_manager.get_term("base_velocity").vel_command_b
        commands[0], commands[1] = torch.tensor([0.0, 0.0, 0.0]), torch.tensor([0.6, 0.0, 0.0])  # env 0 stands
        for _ in range(30):
            obs = env.step(torch.zeros(NUM_ENVS, NUM_ACTIONS))[0]
        ticks = env.unwrapped.episode_length_buf
        assert int(ticks[1]) != int(ticks[0])  # the envs are at different points of their clocks
        command = env.unwrapped.command_manager.get_command("base_velocity")
        assert obs["policy"][0, -2:].tolist() == [0.0, 0.0] and obs["policy"][1, -2:].abs().sum() > 0.5
        for e in range(NUM_ENVS):
            want = build(state, command[e].numpy(), np.zeros(NUM_JOINTS), tick=int(ticks[e]))
            np.testing.assert_allclose(obs["policy"][e, -2:].numpy(), want, atol=1e-5)
        critic_terms = env.unwrapped.observation_manager.active_terms["critic"]
        assert "gait_phase" in critic_terms
        assert {"gait_contact", "feet_swing_height"} <= set(env.unwrapped.reward_manager.active_terms)


def test_a_clock_exported_without_still_below_runs_as_before():
    """Metadata from before ``still_below`` (period only) keeps the clock running at zero command; a negative value
    is refused."""
    from sim2real_deploy.observations import Dims, ObservationError, check_terms

    entry = {"name": "gait_phase", "size": 2, "scale": 1.0, "clip": None, "params": {"period": 0.5}}
    build = ObservationBuilder([entry], np.zeros(3), control_dt=0.02)
    state = RobotState(np.zeros(3), np.zeros(3))
    assert build(state, np.zeros(3), np.zeros(3), tick=5) == pytest.approx([np.sin(0.4 * np.pi), np.cos(0.4 * np.pi)])
    dims = Dims(joints=3, commands=3, actions=3)
    with pytest.raises(ObservationError, match="params.still_below must be a number >= 0"):
        check_terms([{**entry, "params": {"period": 0.5, "still_below": -1}}], dims, "base_velocity")


def test_go2_trots_on_the_clock_and_bad_offsets_are_a_config_error():
    """The Go2's schedule pairs diagonal feet (FL with RR, FR with RL) in the spec's foot order; its default clock
    (0.5 s, still at a zero command) goes with ``env.gait_period=0``, robot defaults that need the clock included;
    offsets that do not give one per foot are a one-line config error."""
    from sim2real.config import ConfigError, load_task
    from sim2real.robots import ROBOTS

    off = load_task(GO2_TASK, ["env.gait_period=0"]).env
    assert off.rewards.gait_contact is None and off.observations.policy.gait_phase is None
    assert off.curriculum is None  # no clock to relax
    env = load_task(GO2_TASK).env
    clock = {"period": 0.5, "still_below": 0.1}
    assert env.observations.policy.gait_phase.params == env.observations.critic.gait_phase.params == clock
    params = env.rewards.gait_contact.params
    feet = params["sensor_cfg"].body_names
    assert feet == list(ROBOTS["go2"].foot_bodies) and params["sensor_cfg"].preserve_order
    phase = dict(zip((name[:2] for name in feet), params["offsets"], strict=True))
    assert phase["FL"] == phase["RR"] and phase["FR"] == phase["RL"] and abs(phase["FL"] - phase["FR"]) == 0.5
    with pytest.raises(ConfigError, match="2 values for the 4 feet"):
        load_task(GO2_TASK, ["env.gait_period=0.5", "env.gait_offsets=[0,0.5]"])
    g1 = load_task(G1_TASK).env.rewards  # the G1 alternates its feet on feet_phase's profile
    assert g1.gait_contact.params["offsets"] == g1.feet_phase.params["offsets"] == [0.0, 0.5]
    assert (g1.gait_contact.weight, g1.feet_phase.weight) == (0.0, 4.0)
    assert g1.feet_phase.params["foot_offset"] == 0.035  # the spec's sole offset


def test_swing_terms_read_the_soles_of_the_standing_feet():
    """``env.gait_swing_height``: the term reads the spec's foot frames less its sole offset, which is 0 (within
    half a centimetre) for every foot of a standing Go2; its contact bodies and height bodies pair foot by foot.
    ``feet_clearance`` reads the same frames from the base. Its target is measured from the spec's standing height,
    the default pose's: a Go2 settled under its PD gains stands 3-7 cm lower (soles 0.27-0.31 m below the base
    against 0.34), so the sole's target above the ground is that much lower. The term runs on the real env: one
    finite value per env."""
    from conftest import go2_env

    from sim2real.robots import ROBOTS
    from sim2real.tasks.mdp.feet import feet_clearance_body, feet_in_base_frame

    spec = ROBOTS["go2"]
    with go2_env("env.gait_period=0.5", "env.gait_swing_height=0.08", "env.events.push_robot=null") as env:
        env.reset()
        for _ in range(25):  # settle on the ground
            env.step(torch.zeros(env.num_envs, env.num_actions))
        term = env.unwrapped.reward_manager.get_term_cfg("feet_swing_height")
        asset_cfg, sensor_cfg = term.params["asset_cfg"], term.params["sensor_cfg"]
        robot = env.unwrapped.scene["robot"]
        assert [robot.body_names[i] for i in asset_cfg.body_ids] == list(spec.foot_frames)
        sensor = env.unwrapped.scene.sensors["contact_forces"]
        assert [sensor.sensor_names[i] for i in sensor_cfg.body_ids] == list(spec.foot_bodies)
        soles = robot.data.body_pos_w.torch[:, asset_cfg.body_ids, 2] - term.params["foot_offset"]
        assert soles.abs().max() < 0.005, soles
        clearance = env.unwrapped.reward_manager.get_term_cfg("feet_clearance").params
        assert list(clearance["asset_cfg"].body_ids) == list(asset_cfg.body_ids)
        soles_b = feet_in_base_frame(env.unwrapped, clearance["asset_cfg"])[..., 2] - clearance["foot_offset"]
        sag = soles_b + spec.standing_height
        assert ((sag > 0.02) & (sag < 0.08)).all(), soles_b
        penalty = feet_clearance_body(env.unwrapped, **clearance)
        assert penalty.shape == (env.num_envs,) and torch.isfinite(penalty).all()


class _FakeEnv:
    """Just what the gait terms read: episode ticks at step_dt 0.02, foot forces and heights, the command."""

    step_dt, device = 0.02, "cpu"

    def __init__(self, ticks, forces, heights, command, joint_pos=None, default_joint_pos=None):
        from types import SimpleNamespace as NS

        self.episode_length_buf = torch.tensor(ticks)
        self.command_manager = NS(get_command=lambda name: torch.tensor(command, dtype=torch.float32))
        contact = NS(data=NS(net_forces_w=NS(torch=torch.tensor(forces))))
        pose = {"joint_pos": joint_pos, "default_joint_pos": default_joint_pos}
        joints = {k: NS(torch=torch.tensor(v)) for k, v in pose.items() if v is not None}
        robot = NS(data=NS(body_pos_w=NS(torch=torch.tensor(heights)), **joints))
        scene = {"sensors": {"contact_forces": contact}, "cfg": NS(), "__getitem__": lambda s, k: robot}  # flat
        self.scene = type("Scene", (), scene)()


def test_gait_rewards_on_hand_computed_values():
    from isaaclab.managers import SceneEntityCfg

    from sim2real.tasks.mdp.gait import feet_swing_height, gait_contact

    # period 0.8 s, stance while the leg's phase < 0.55: tick 4 -> phase 0.1 (left in stance; right at 0.6, swinging);
    # tick 34 -> phase 0.85 (left swinging; right at 0.35, in stance). Env 0 has the left foot down, env 1 the right;
    # env 2 is not asked to move.
    down, up = [0.0, 0.0, 50.0], [0.0, 0.0, 0.0]
    forces = [[down, up], [up, down], [down, up]]
    # sole heights (origin - 0.035): env 0's swinging right foot at 0.05, env 1's left at 0.165
    heights = [[[0, 0, 0.035], [0, 0, 0.085]], [[0, 0, 0.2], [0, 0, 0.035]], [[0, 0, 0.035], [0, 0, 0.5]]]
    env = _FakeEnv([4, 4, 4], forces, heights, [[0.5, 0, 0], [0.5, 0, 0], [0.0, 0, 0]])
    sensor, feet = SceneEntityCfg("contact_forces"), SceneEntityCfg("robot")
    sensor.body_ids = feet.body_ids = [0, 1]
    schedule = {"command_name": "base_velocity", "period": 0.8, "offsets": [0.0, 0.5]}
    assert gait_contact(env, sensor, **schedule).tolist() == [2.0, 0.0, 0.0]
    env.episode_length_buf = torch.tensor([34, 34, 34])
    assert gait_contact(env, sensor, **schedule).tolist() == [0.0, 2.0, 0.0]
    swing = feet_swing_height(env, sensor, feet, "base_velocity", target_height=0.08, foot_offset=0.035)
    assert swing.tolist() == pytest.approx([0.03**2, 0.085**2, 0.0])


def test_feet_phase_on_hand_computed_values():
    """The swing profile rises 0 -> h over half a leg's cycle and comes back; a robot standing through a stepping
    command earns about half the reward of one stepping on the clock, and all of it when asked to stand."""
    from isaaclab.managers import SceneEntityCfg

    from sim2real.tasks.mdp.gait import feet_phase, swing_profile

    profile = swing_profile(torch.tensor([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 1.0]), 0.08)
    # 3t^2 - 2t^3 at t = 2 x phase: 0.104 at phase 0.1, 0.5 at 0.25; the fall mirrors it
    assert profile.tolist() == pytest.approx([0.0, 0.00832, 0.04, 0.08, 0.07168, 0.04, 0.0])
    # tick 4 of a 0.8 s period: phase 0.1, so the left sole's target is 0.00832 m and the right's (offset 0.5) 0.07168
    stepping = [[0, 0, 0.035 + 0.00832], [0, 0, 0.035 + 0.07168]]
    standing = [[0, 0, 0.035], [0, 0, 0.035]]
    env = _FakeEnv([4] * 3, [[[0.0] * 3] * 2] * 3, [stepping, standing, standing], [[0.5, 0, 0]] * 2 + [[0.0, 0, 0]])
    feet = SceneEntityCfg("robot")
    feet.body_ids = [0, 1]
    clock = {"command_name": "base_velocity", "period": 0.8, "offsets": [0.0, 0.5], "swing_height": 0.08}
    reward = feet_phase(env, feet, **clock, foot_offset=0.035, std_sq=0.008)
    assert reward.tolist() == pytest.approx([1.0, math.exp(-(0.00832**2 + 0.07168**2) / 0.008), 1.0])


def test_feet_phase_setting_adds_the_term_and_needs_a_swing_height():
    from sim2real.config import ConfigError, load_task

    rewards = load_task(GO2_TASK, ["env.gait_swing_height=0.08", "env.gait_phase_weight=2.0"]).env.rewards
    assert rewards.feet_phase.weight == 2.0
    assert rewards.feet_phase.params["swing_height"] == 0.08 and rewards.feet_phase.params["foot_offset"] == 0.022
    assert load_task(G1_TASK, ["env.gait_phase_weight=0"]).env.rewards.feet_phase is None
    with pytest.raises(ConfigError, match="gait_swing_height"):
        load_task(GO2_TASK, ["env.gait_phase_weight=2.0"])  # the Go2 clock has no swing height
    with pytest.raises(ConfigError, match="gait_period"):
        load_task(G1_TASK, ["env.gait_period=0", "env.gait_phase_weight=2.0"])  # no clock
    assert load_task(G1_TASK, ["env.gait_period=0"]).env.rewards.feet_phase is None  # the G1's default goes with it


def test_stand_still_on_hand_computed_values():
    """Joint deviation from the default pose counts only while the command is zero; turning in place is motion."""
    from isaaclab.managers import SceneEntityCfg

    from sim2real.tasks.mdp.gait import stand_still

    default = [[0.1, 0.8, -1.5]] * 3
    joint_pos = [[0.2, 0.6, -1.5], [0.2, 0.6, -1.5], [0.2, 0.6, -1.5]]  # 0.1 + 0.2 + 0 rad off in every env
    commands = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.5], [0.05, 0.03, 0.0]]  # standing, turning, below the 0.1 threshold
    env = _FakeEnv([0] * 3, [[[0.0] * 3]] * 3, [[[0.0] * 3]] * 3, commands, joint_pos, default)
    assert stand_still(env, "base_velocity", SceneEntityCfg("robot")).tolist() == pytest.approx([0.3, 0.0, 0.3])
    from sim2real.config import load_task

    rewards = load_task(GO2_TASK, ["env.gait_period=0.5", "env.gait_stand_still_weight=-0.5"]).env.rewards
    assert rewards.stand_still.weight == -0.5
    assert load_task(GO2_TASK, ["env.gait_period=0.5"]).env.rewards.stand_still is None


def test_gait_contact_weight_relaxes_after_its_step():
    """``env.gait_contact_weight_final``: the clock's contact reward keeps its weight up to ``gait_relax_step`` policy
    steps per env and has the final weight after them (checked when envs reset, as Isaac Lab's curricula are);
    ``env.gait_relax_rewards`` switches other terms at the same step."""
    from conftest import go2_env

    overrides = ("env.gait_period=0.5", "env.gait_contact_weight=0.3", "env.gait_contact_weight_final=0.05")
    overrides += ("env.gait_relax_step=3", "env.gait_relax_rewards={track_lin_vel_xy_fine:0.75}")
    with go2_env(*overrides, num_envs=2) as env:
        u = env.unwrapped
        env.reset()
        for steps in range(1, 6):
            env.step(torch.zeros(2, env.num_actions))
            u.curriculum_manager.compute(env_ids=torch.arange(2))
            assert u.common_step_counter == steps
            assert u.reward_manager.get_term_cfg("gait_contact").weight == (0.05 if steps > 3 else 0.3)
            assert u.reward_manager.get_term_cfg("track_lin_vel_xy_fine").weight == (0.75 if steps > 3 else 0.0)


def test_a_resumed_run_continues_the_relax_schedule():
    """A resume (``sim2real.train.continue_env_schedules``) sets the env's step count from the resumed iteration, so
    a run resumed after the clock relaxed trains on the relaxed weights from its first reset, not from the start."""
    from conftest import go2_env

    from sim2real.train import continue_env_schedules

    overrides = ("env.gait_contact_weight=0.3", "env.gait_contact_weight_final=0.05", "env.gait_relax_step=48")
    with go2_env(*overrides, num_envs=2) as env:
        u = env.unwrapped
        continue_env_schedules(env, iteration=2, steps_per_env=24)  # 48 steps: not yet past the switch
        u.curriculum_manager.compute(env_ids=torch.arange(2))
        assert u.reward_manager.get_term_cfg("gait_contact").weight == 0.3
        continue_env_schedules(env, iteration=3, steps_per_env=24)
        u.curriculum_manager.compute(env_ids=torch.arange(2))
        assert u.common_step_counter == 72 and u.reward_manager.get_term_cfg("gait_contact").weight == 0.05
