"""Go2 task behaviours that need their own env configuration (each test builds and closes an env)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from conftest import G1_TASK, GO2_TASK, g1_with_damped_held_joints, go2_env, task_env


def test_randomised_gains_reach_the_physics():
    """Kp scaled to 0.5 on every joint: the robot must sag lower than at nominal gains under the same load."""
    heights = {}
    for scale in (1.0, 0.5):
        with go2_env(
            f"env.events.motor_strength.params.stiffness_distribution_params=[{scale},{scale}]",
            "env.events.reset_joints.params.position_range=[1.0,1.0]",
            "env.events.reset_base.params.velocity_range={}",
            num_envs=2,
        ) as env:
            env.reset()
            for _ in range(50):
                env.step(torch.zeros(env.num_envs, 12))
            heights[scale] = env.unwrapped.scene["robot"].data.root_pos_w.torch[:, 2].mean().item()
    assert heights[0.5] < heights[1.0] - 0.01


def test_controller_damping_is_added_to_the_sampled_passive_damping():
    """A joint whose Kd the physics simulates as joint damping keeps it under the passive-dynamics draw: the physics'
    damping is the sample (inside the spec's range) plus that Kd, here 2 on the front hips and 0 elsewhere."""
    from sim2real.robots import ROBOTS

    spec = ROBOTS["go2"]
    kd = [2.0 if re.fullmatch("F[LR]_hip_joint", j) else 0.0 for j in spec.joint_names]

    def add_kd(run) -> None:
        run.env.events.joint_dynamics.params["controller_damping"] = kd

    with task_env(GO2_TASK, num_envs=4, configure=add_kd) as env:
        env.step(torch.zeros(env.num_envs, 12))
        damping = env.get_observations()["critic"][:, -36:-24]  # the critic's joint dynamics: damping first
        sample = damping - torch.tensor(kd)
        lo, hi = torch.tensor(spec.passive_ranges()["damping"]).T
        assert ((sample >= lo - 1e-6) & (sample <= hi + 1e-6)).all()
        assert (damping[:, torch.tensor(kd) > 0] > 2.0).all()


def test_implicit_damping_is_joint_damping_in_the_physics_and_out_of_the_torque(monkeypatch):
    """A G1 whose held waist and arms simulate Kd implicitly: their Kd is added to the joint damping of every native
    MuJoCo world, the explicit PD torque Newton applies equals the metadata's actuator (Kd 0 there), and the critic's
    gain term reads 1 there, not 0 / 0."""
    from isaaclab_newton.physics import NewtonManager
    from test_parity import assert_torque_parity

    from sim2real.export.task_interface import task_interface
    from sim2real.robots import ROBOTS
    from sim2real_deploy.policy_file import PolicyMetadata

    spec = g1_with_damped_held_joints()
    monkeypatch.setitem(ROBOTS, "g1", spec)
    captured = {}

    def full_targets(run) -> None:  # as tests/test_parity.py: nominal gains, this step's full targets
        run.env.events.motor_strength = None
        run.env.actions.joint_pos.max_target_rate = None
        run.env.actions.joint_pos.delay_range = (0, 0)
        captured["run"] = run

    with task_env(G1_TASK, num_envs=2, configure=full_targets) as env:
        torch.manual_seed(0)
        for _ in range(3):
            env.step(15.0 * torch.randn(env.num_envs, env.num_actions))  # beyond the clip: saturating torques
        robot = env.unwrapped.scene["robot"]
        held = spec.implicit_damping_joints()
        assert len(held) == 11 and all(re.search("waist|shoulder|elbow|wrist", j) for j in held)
        ids = [robot.joint_names.index(j) for j in held]
        native = torch.from_numpy(NewtonManager._solver.native.params["dof_damping"][:, 6:]).float()  # after free joint
        kd = torch.tensor([spec.group_of(j).damping for j in held])
        mjcf = torch.tensor([spec.mjcf_joint_damping[j] for j in held])  # the joint's own, as the robot side keeps it
        assert torch.allclose(native[:, ids], (mjcf + kd).expand(env.num_envs, -1)) and kd.min() >= 10.0
        assert 0.0 < mjcf.min() < 0.1  # the G1 MJCF's 0.05: kept under the Kd, not replaced
        assert torch.isfinite(env.get_observations()["critic"]).all()
        run = captured["run"]
        meta = PolicyMetadata(task_interface(G1_TASK, run.env, run.agent.clip_actions))
        assert meta.raw["actuator"]["implicit_damping"] == held
        assert_torque_parity(env, spec, meta)


def test_held_arms_swing_on_the_gait_clock_as_the_robot_side_computes_it():
    """``env.held_swing``: the held shoulders' targets are the default plus amplitude x vx / speed x sin(2 pi phase)
    at the tick each action was computed for (hand-computed below), the other held joints stay at their default, and
    the exported metadata gives the robot side the same targets."""
    from sim2real.export.task_interface import task_interface
    from sim2real_deploy.policy_file import PolicyMetadata

    swing = "env.held_swing={left_shoulder_pitch_joint:-0.3,right_shoulder_pitch_joint:0.3}"
    captured = {}

    def forward(run) -> None:  # a fixed 0.6 m/s command, never zeroed: the swing at 0.6 of its amplitude
        command = run.env.commands.base_velocity
        command.ranges.lin_vel_x, command.ranges.lin_vel_y, command.ranges.ang_vel_z = (0.6, 0.6), (0, 0), (0, 0)
        command.zero_prob = (0.0, 0.0, 0.0)
        captured["run"] = run

    with task_env(G1_TASK, swing, num_envs=2, configure=forward) as env:
        robot, run = env.unwrapped.scene["robot"], captured["run"]
        meta = PolicyMetadata(task_interface(G1_TASK, run.env, run.agent.clip_actions))
        assert meta.raw["action"]["held_swing"]["period"] == run.env.gait_period == 0.7
        names, default = robot.joint_names, robot.data.default_joint_pos.torch
        left, right = names.index("left_shoulder_pitch_joint"), names.index("right_shoulder_pitch_joint")
        elbow = names.index("left_elbow_joint")
        ids = [names.index(n) for n in meta.joint_names]
        actions = torch.zeros(env.num_envs, env.num_actions)
        for _ in range(12):
            tick = env.unwrapped.episode_length_buf.clone()  # the tick the action is computed for
            env.step(actions)
            expected = 0.3 * 0.6 * torch.sin(2 * torch.pi * tick * 0.02 / 0.7)
            target = robot.actuators.target_command.position.torch
            assert torch.allclose(target[:, right] - default[:, right], expected, atol=1e-6)
            assert torch.allclose(target[:, left] - default[:, left], -expected, atol=1e-6)
            assert torch.equal(target[:, elbow], default[:, elbow])
            for e in range(env.num_envs):
                robot_side = meta.targets_from_actions(actions[e].numpy(), np.array([0.6, 0.0, 0.0]), int(tick[e]))
                np.testing.assert_allclose(robot_side, target[e, ids].double().numpy(), atol=1e-5)
        assert expected.abs().max() > 0.15  # the clock went round far enough to swing


@pytest.mark.parametrize("delay", [0, 2])
def test_action_delay_shifts_applied_target_by_k_steps(delay):
    with go2_env(f"env.actions.joint_pos.delay_range=[{delay},{delay}]", num_envs=2) as env:
        env.reset()
        robot = env.unwrapped.scene["robot"]
        default = robot.data.default_joint_pos.torch[:, env.unwrapped.action_manager.get_term("joint_pos")._joint_ids]
        action = torch.full((env.num_envs, 12), 0.4)
        applied = []
        for step in range(4):
            env.step(action if step == 0 else torch.zeros(env.num_envs, 12))
            term = env.unwrapped.action_manager.get_term("joint_pos")
            applied.append(term._delayed_targets.clone())
        expected_step = delay
        for step, target in enumerate(applied):
            if step == expected_step:
                assert torch.allclose(target, default + 0.4 * 0.25, atol=1e-5)
            else:
                assert torch.allclose(target, default, atol=1e-5)
        joint_ids = env.unwrapped.action_manager.get_term("joint_pos")._joint_ids
        assert torch.allclose(robot.actuators.target_command.position.torch[:, joint_ids], applied[-1], atol=1e-5)


def test_slew_limited_training_moves_targets_no_faster_than_policy_node():
    """env.slew_limited (the G1's default): each driven joint's target moves at most the spec's target_rate_fraction x
    no-load speed per policy step (the G1's knee 20 rad/s: 0.4 rad), the clamp its node puts on the robot."""
    from sim2real.robots import ROBOTS

    spec = ROBOTS["g1"]
    with task_env(G1_TASK, "env.actions.joint_pos.delay_range=[0,0]", num_envs=2) as env:
        env.reset()
        term = env.unwrapped.action_manager.get_term("joint_pos")
        assert list(term.cfg.max_target_rate) == list(term._joint_names) and len(term._joint_names) == 12
        default = term._previous_target.clone()
        env.step(torch.full((env.num_envs, 12), 8.0))  # 2 rad at scale 0.25: beyond every joint's step
        rates = torch.tensor([spec.target_rate_fraction * spec.group_of(j).velocity_limit for j in term._joint_names])
        moved = term._delayed_targets - default
        torch.testing.assert_close(moved, (rates * env.unwrapped.step_dt).expand_as(moved))


def test_reward_ramp_moves_weights_linearly_between_its_steps():
    """``env.reward_ramps``: each term keeps its configured weight up to the ramp's first step, reaches the given
    weight at its last, and moves linearly in between (checked when envs reset, as Isaac Lab's curricula are)."""
    overrides = ("env.rewards.action_rate_l2.weight=-0.01", "env.rewards.lin_vel_z_l2.weight=-2.0")
    overrides += ("env.reward_ramps={action_rate_l2:-0.05,lin_vel_z_l2:0.0}", "env.reward_ramp_steps=[2,6]")
    with go2_env(*overrides, num_envs=2) as env:
        u = env.unwrapped
        env.reset()
        weights = []
        for _ in range(8):
            env.step(torch.zeros(2, env.num_actions))
            u.curriculum_manager.compute(env_ids=torch.arange(2))
            manager = u.reward_manager
            weights.append([manager.get_term_cfg(n).weight for n in ("action_rate_l2", "lin_vel_z_l2")])
    # steps 1..8: held to step 2, a quarter of the way per step to step 6, then held
    want = [[-0.01, -2.0], [-0.01, -2.0], [-0.02, -1.5], [-0.03, -1.0], [-0.04, -0.5], [-0.05, 0.0]]
    want += [[-0.05, 0.0]] * 2
    np.testing.assert_allclose(weights, want, atol=1e-9)
