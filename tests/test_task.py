"""The Go2 flat velocity task on real Isaac Lab (Newton on the CPU): layout, randomisation, rewards, terminations."""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch

DOCS = Path(__file__).resolve().parent.parent / "docs" / "observations.md"


def documented_terms(group: str, num_joints: int) -> list[tuple[str, int]]:
    """(term, size) rows of one group's table in docs/observations.md, with ``n`` = ``num_joints``."""
    section = DOCS.read_text().split(f"## `{group}` group")[1].split("\n## ")[0]
    rows = re.findall(r"^\| \d+ \| (\w+) \| (\d*n|\d+) \|", section, flags=re.M)
    return [(name, int(size[:-1] or 1) * num_joints if size.endswith("n") else int(size)) for name, size in rows]


def test_observation_groups_match_documented_layout(env):
    manager = env.unwrapped.observation_manager
    n = len(env.unwrapped.scene["robot"].joint_names)
    policy = documented_terms("policy", n)
    critic_extra = documented_terms("critic", n)
    frames = env.unwrapped.cfg.observations.policy.history_length  # the Go2 actor sees 5 steps of each term
    policy_dims = [d[0] // frames for d in manager.group_obs_term_dim["policy"]]
    assert list(zip(manager.active_terms["policy"], policy_dims, strict=True)) == policy
    critic = list(
        zip(manager.active_terms["critic"], [d[0] for d in manager.group_obs_term_dim["critic"]], strict=True)
    )
    assert critic[: len(policy)] == policy
    assert critic[len(policy) :] == critic_extra
    obs = env.get_observations()
    assert obs["policy"].shape == (8, 5 * 47) and obs["critic"].shape == (8, 121)  # with the Go2's gait clock


def test_joint_order_follows_robot_spec(env):
    from sim2real.robots import ROBOTS

    action_term = env.unwrapped.action_manager.get_term("joint_pos")
    robot = env.unwrapped.scene["robot"]
    assert [robot.joint_names[i] for i in action_term._joint_ids] == list(ROBOTS["go2"].joint_names)


def test_env_steps_and_standing_robot_stays_up(env):
    env.reset()
    robot = env.unwrapped.scene["robot"]
    for _ in range(25):
        obs, rewards, dones, _ = env.step(torch.zeros(env.num_envs, 12))
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rewards).all()
    assert (robot.data.root_pos_w.torch[:, 2] > 0.2).all()


def test_startup_randomisation_differs_across_envs_within_ranges(env):
    critic = env.get_observations()["critic"]
    names = env.unwrapped.observation_manager.active_terms["critic"]
    dims = [d[0] for d in env.unwrapped.observation_manager.group_obs_term_dim["critic"]]
    offsets = dict(zip(names, torch.tensor([0, *dims]).cumsum(0).tolist(), strict=False))
    friction = critic[:, offsets["friction"]]
    mass = critic[:, offsets["base_mass"]]
    com = critic[:, offsets["base_com"] : offsets["base_com"] + 3]
    gains = critic[:, offsets["gain_scale"] : offsets["gain_scale"] + 24]
    cfg = env.unwrapped.cfg
    lo, hi = cfg.events.friction.params["static_friction_range"]
    assert friction.std() > 1e-3 and ((friction >= lo - 1e-6) & (friction <= hi + 1e-6)).all()
    nominal_mass = 6.921  # Go2 MJCF base mass
    m_lo, m_hi = cfg.events.added_base_mass.params["mass_distribution_params"]
    assert mass.std() > 1e-3 and ((mass >= nominal_mass + m_lo - 1e-4) & (mass <= nominal_mass + m_hi + 1e-4)).all()
    assert (com.std(dim=0) > 1e-4).all()
    g_lo, g_hi = cfg.events.motor_strength.params["stiffness_distribution_params"]
    assert gains.std() > 1e-3 and ((gains >= g_lo - 1e-5) & (gains <= g_hi + 1e-5)).all()


def test_passive_joint_dynamics_are_randomised_into_the_physics(env):
    """Damping, friction and armature of every joint and env: inside the spec's ranges, different per env and joint,
    in the native MuJoCo worlds the physics steps, and what the critic observes. Damping is log-uniform: half the
    samples lie under its range's geometric mean, the MJCF's 0.1 (uniform over 0.02-0.5: a sixth)."""
    from isaaclab_newton.physics import NewtonManager

    from sim2real.robots import ROBOTS

    env.step(torch.zeros(env.num_envs, 12))  # model changes reach the solver on the next step
    spec = ROBOTS["go2"]
    ranges = {k: torch.tensor(v) for k, v in spec.passive_ranges().items()}
    critic = env.get_observations()["critic"][:, -36:].reshape(env.num_envs, 3, 12)
    solver = NewtonManager._solver
    for i, (key, mujoco_key) in enumerate(
        (("damping", "damping"), ("friction", "frictionloss"), ("armature", "armature"))
    ):
        values = critic[:, i]
        lo, hi = ranges[key][:, 0], ranges[key][:, 1]
        assert ((values >= lo - 1e-6) & (values <= hi + 1e-6)).all() and values.std(dim=0).min() > 0
        native = torch.from_numpy(solver.native.params[f"dof_{mujoco_key}"][:, 6:]).float()  # after the free joint
        assert torch.allclose(native.sort(dim=1).values, values.sort(dim=1).values, atol=1e-6)
    damping = critic[:, 0]
    assert 0.35 < (damping < (ranges["damping"].prod(dim=1).sqrt())).float().mean() < 0.65  # 96 samples
    assert solver.mj_model.opt.cone == 1 and solver.native.models[0].opt.impratio == 100.0  # the MJCF's elliptic cone


def test_training_records_every_randomisation_range(env):
    """What export writes into the metadata: each event's ranges, the action delay, noise and the contact model."""
    from sim2real.export.randomization import domain_randomization
    from sim2real.robots import ROBOTS

    record = domain_randomization(env.unwrapped.cfg, "native_mujoco_cpu")
    assert record["joint_dynamics"] == ROBOTS["go2"].passive_ranges()
    assert record["joint_dynamics_log_uniform"] == ["damping", "armature"]
    events = record["events"]
    assert events["added_base_mass"]["params"]["mass_distribution_params"] == [-2.0, 2.0]  # the Go2's, centred
    assert events["push_robot"]["interval_range_s"] == [10.0, 15.0] and record["action_delay_steps"] == [0, 1]
    assert record["physics"] == {"preset": "native_mujoco_cpu", "cone": "elliptic", "impratio": 100.0, "dt": 0.005}
    assert record["observation_noise"]["joint_vel"] == [-1.5, 1.5]


def test_initial_joint_state_is_randomised(env):
    env.unwrapped.reset()
    robot = env.unwrapped.scene["robot"]
    deviation = robot.data.joint_pos.torch - robot.data.default_joint_pos.torch
    assert deviation.abs().max() > 0.05
    assert (deviation.std(dim=0) > 1e-3).any()


def test_policy_observations_are_noisy_and_critic_is_not(env):
    obs = env.get_observations()
    # joint_vel (terms 4): policy = true + U(-1.5, 1.5); critic = true
    start, end = 9 + 12, 9 + 24
    diff = obs["policy"][:, start:end] - obs["critic"][:, start:end]
    assert diff.abs().max() > 0.1 and diff.abs().max() <= 1.5 + 1e-5


def test_push_changes_base_velocity(env):
    from sim2real.tasks import mdp

    robot = env.unwrapped.scene["robot"]
    before = robot.data.root_lin_vel_w.torch[:, :2].clone()
    ids = torch.arange(env.num_envs)
    mdp.push_by_setting_velocity(env.unwrapped, ids, {"x": (1.0, 1.0), "y": (-1.0, -1.0)})
    after = robot.data.root_lin_vel_w.torch[:, :2]
    assert torch.allclose(after - before, torch.tensor([1.0, -1.0]).expand_as(after), atol=1e-4)


def _set_base(env, quat_xyzw: tuple[float, float, float, float], lin_vel: tuple[float, float, float], height=0.3):
    robot = env.unwrapped.scene["robot"]
    pose = torch.tensor([0.0, 0.0, height, *quat_xyzw]).repeat(env.num_envs, 1)
    pose[:, :2] = env.unwrapped.scene.env_origins[:, :2]
    robot.write_root_pose_to_sim_index(root_pose=pose)
    robot.write_root_velocity_to_sim_index(
        root_velocity=torch.tensor([*lin_vel, 0.0, 0.0, 0.0]).repeat(env.num_envs, 1)
    )


def _term(env, name: str) -> torch.Tensor:
    term = env.unwrapped.reward_manager.get_term_cfg(name)
    return term.func(env.unwrapped, **term.params) * term.weight


def test_tracking_reward_is_higher_when_following_the_command(env):
    env.reset()
    command = env.unwrapped.command_manager.get_term("base_velocity")
    command.vel_command_b[:] = torch.tensor([1.0, 0.0, 0.0])
    _set_base(env, (0, 0, 0, 1), (1.0, 0.0, 0.0))
    following = _term(env, "track_lin_vel_xy_exp")
    _set_base(env, (0, 0, 0, 1), (-1.0, 0.0, 0.0))
    opposing = _term(env, "track_lin_vel_xy_exp")
    assert (following > 0).all() and (following > opposing + 0.5).all()


def test_penalties_are_negative_when_violated(env):
    env.reset()
    tilt = math.sin(math.radians(30) / 2), 0.0, 0.0, math.cos(math.radians(30) / 2)
    _set_base(env, tilt, (0.0, 0.0, 1.0))
    assert (_term(env, "flat_orientation_l2") < -0.1).all()
    assert (_term(env, "lin_vel_z_l2") < -1.0).all()
    _set_base(env, (0, 0, 0, 1), (0.0, 0.0, 0.0))
    assert (_term(env, "flat_orientation_l2").abs() < 1e-4).all()


def test_fallen_robot_terminates(env):
    env.reset()
    upside_down = (1.0, 0.0, 0.0, 0.0)  # 180 deg about x: the base lands on its back
    _set_base(env, upside_down, (0.0, 0.0, 0.0), height=0.15)
    terminated = torch.zeros(env.num_envs, dtype=torch.bool)
    for _ in range(10):
        _, _, dones, extras = env.step(torch.zeros(env.num_envs, 12))
        terminated |= dones.bool() & ~extras["time_outs"].bool()
        if terminated.all():
            break
    assert terminated.all()
