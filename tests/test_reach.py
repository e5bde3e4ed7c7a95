"""The Franka Panda reach task on real Isaac Lab (Newton on the CPU): layout, holding pose, reward, training."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import documented_terms, obs_layout, task_env

REACH_TASK = "Sim2Real-Reach-Panda-v0"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "tasks.md"
NUM_ENVS = 4


def reach_env(*overrides: str, num_envs: int = NUM_ENVS):
    return task_env(REACH_TASK, *overrides, num_envs=num_envs)


@pytest.fixture(scope="module")
def env():
    with reach_env() as wrapped:
        yield wrapped


def test_observation_groups_match_documented_layout(env):
    policy, critic = (documented_terms(DOCS, "Franka Panda reach", group) for group in ("policy", "critic"))
    assert obs_layout(env, "policy") == policy
    assert obs_layout(env, "critic") == policy + critic
    obs = env.get_observations()
    assert obs["policy"].shape == (NUM_ENVS, 34) and obs["critic"].shape == (NUM_ENVS, 67)


def test_action_drives_the_spec_arm_joints(env):
    from sim2real.robots import ROBOTS

    robot = env.unwrapped.scene["robot"]
    term = env.unwrapped.action_manager.get_term("joint_pos")
    assert [robot.joint_names[i] for i in term._joint_ids] == list(ROBOTS["panda"].joint_names)
    assert env.num_actions == 7


def test_targets_move_no_faster_than_the_nodes_slew_limit(env):
    """A full-scale action step: the target moves rate x dt per policy step (policy_node's clamp), and a reset
    starts it again from the default pose, where the node's soft start leaves it."""
    from sim2real.robots import ROBOTS

    spec = ROBOTS["panda"]
    term = env.unwrapped.action_manager.get_term("joint_pos")
    step = torch.tensor(list(spec.max_target_rates().values())) * env.unwrapped.step_dt
    env.reset()
    default = term._previous_target.clone()
    assert torch.allclose(default, torch.tensor(spec.per_joint(spec.default_joint_pos)).expand_as(default))
    for k in range(1, 4):
        env.step(torch.full((env.num_envs, 7), 5.0))  # 5 x scale: far beyond one step's reach
        assert torch.allclose(term._processed_actions, default + k * step, atol=1e-5)
    env.unwrapped.action_manager.reset()
    assert torch.allclose(term._previous_target, default)


def test_arm_holds_its_pose_and_hand_stays_open(env):
    env.reset()
    robot = env.unwrapped.scene["robot"]
    for _ in range(100):  # 2 s from the randomised start
        obs, rewards, _, _ = env.step(torch.zeros(env.num_envs, 7))
    assert torch.isfinite(obs["critic"]).all() and torch.isfinite(rewards).all()
    targets = env.unwrapped.action_manager.get_term("joint_pos")._delayed_targets
    assert (robot.data.joint_pos.torch[:, :7] - targets).abs().max() < 0.1  # PD alone holds against gravity
    assert robot.data.joint_vel.torch.abs().max() < 0.1  # and settles: no PD oscillation
    assert (robot.data.joint_pos.torch[:, 7:] > 0.035).all()


def test_randomised_physics_differs_across_envs_and_reaches_the_critic(env):
    robot = env.unwrapped.scene["robot"]
    armature = robot.data.joint_armature.torch[:, :7]
    friction = robot.data.joint_friction_coeff.torch[:, :7]
    assert armature.std(dim=0).min() > 1e-4 and ((armature > 0.1 * 0.8 - 1e-6) & (armature < 0.1 * 1.2 + 1e-6)).all()
    assert friction.std(dim=0).min() > 1e-4 and ((friction >= 0) & (friction <= 0.3 + 1e-6)).all()
    critic = env.get_observations()["critic"]
    assert torch.allclose(critic[:, 34 + 18 : 34 + 18 + 7], friction)


def _place_arm(env, offset: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Write the arm to default + ``offset`` on every joint; return the hand pose in the base frame."""
    from isaaclab.utils.math import subtract_frame_transforms

    robot = env.unwrapped.scene["robot"]
    arm = list(range(7))
    q = robot.data.default_joint_pos.torch[:, arm] + offset
    robot.write_joint_position_to_sim_index(position=q, joint_ids=arm)
    robot.write_joint_velocity_to_sim_index(velocity=torch.zeros_like(q), joint_ids=arm)
    env.unwrapped.scene.update(0.0)
    hand = robot.body_names.index("hand")
    return subtract_frame_transforms(
        robot.data.root_pos_w.torch,
        robot.data.root_quat_w.torch,
        robot.data.body_pos_w.torch[:, hand],
        robot.data.body_quat_w.torch[:, hand],
    )


def _tracking_reward(env) -> torch.Tensor:
    manager = env.unwrapped.reward_manager
    total = torch.zeros(env.num_envs)
    for name in ("ee_position_error", "ee_position_fine", "ee_orientation_error"):
        term = manager.get_term_cfg(name)
        total += term.func(env.unwrapped, **term.params) * term.weight
    return total


def _critic(env) -> torch.Tensor:
    """Critic observations of the current state (the wrapper's get_observations returns the last step's)."""
    return env.unwrapped.observation_manager.compute()["critic"]


def test_reward_is_higher_with_the_hand_at_the_target(env):
    env.reset()
    pos_b, quat_b = _place_arm(env, offset=0.1)
    command = env.unwrapped.command_manager.get_term("ee_pose")
    command.pose_command_b[:] = torch.cat((pos_b, quat_b), dim=-1)
    at_target = _tracking_reward(env)
    error = _critic(env)[:, 21:27]  # the base-frame pose error term (noise-free: the critic's copy)
    assert error.abs().max() < 1e-3
    command.pose_command_b[:, :3] = pos_b + torch.tensor([0.0, 0.3, -0.2])
    away = _tracking_reward(env)
    assert (at_target > away + 0.05).all()
    assert (_critic(env)[:, 21:24].norm(dim=-1) > 0.3).all()


def test_fine_orientation_kernel_on_hand_computed_errors(env):
    """1 - tanh(angle / 0.2): 1 at the target orientation, 1 - tanh(1) = 0.2384 at 0.2 rad about the hand's z axis."""
    from isaaclab.utils.math import quat_from_euler_xyz, quat_mul

    env.reset()
    pos_b, quat_b = _place_arm(env, offset=0.0)
    command = env.unwrapped.command_manager.get_term("ee_pose")
    term = env.unwrapped.reward_manager.get_term_cfg("ee_orientation_fine")
    command.pose_command_b[:] = torch.cat((pos_b, quat_b), dim=-1)
    at_target = term.func(env.unwrapped, **term.params)
    turn = quat_from_euler_xyz(*(torch.full((len(quat_b),), v) for v in (0.0, 0.0, 0.2)))
    command.pose_command_b[:, 3:] = quat_mul(quat_b, turn)
    turned = term.func(env.unwrapped, **term.params)
    torch.testing.assert_close(at_target, torch.ones_like(at_target), atol=2e-3, rtol=0)
    torch.testing.assert_close(turned, torch.full_like(turned, 1 - math.tanh(1.0)), atol=2e-3, rtol=0)


def _solve_ik(
    model, data, body: int, pos: np.ndarray, quat: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, float, float]:
    """Damped least squares from ``q``, clamped to the joint limits: a local solve, no null-space search."""
    import mujoco

    n, lo, hi = len(q), model.jnt_range[: len(q), 0], model.jnt_range[: len(q), 1]
    for _ in range(300):
        data.qpos[:n] = q
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        turn, conj = np.zeros(3), np.zeros(4)
        mujoco.mju_negQuat(conj, data.xquat[body])
        mujoco.mju_mulQuat(conj, quat, conj)
        mujoco.mju_quat2Vel(turn, conj, 1.0)
        jac_p, jac_r = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacBody(model, data, jac_p, jac_r, body)
        jac, err = np.vstack((jac_p[:, :n], jac_r[:, :n])), np.concatenate((pos - data.xpos[body], turn))
        q = np.clip(q + 0.5 * jac.T @ np.linalg.solve(jac @ jac.T + 1e-3 * np.eye(6), err), lo, hi)
    return q, np.linalg.norm(err[:3]), np.linalg.norm(err[3:])


def test_every_trained_hand_turn_is_reached_from_the_default_pose_inside_joint7s_range(env):
    """The workspace's corners at five hand yaws across the trained range: a local solve from the default pose
    reaches each within 1 mm and 0.01 rad with joint7 0.4 rad or more inside its limits, so no target needs the
    arm to swing through its null space around joint7's stop."""
    import mujoco
    from isaaclab.utils.math import quat_from_euler_xyz

    from sim2real.robots import ROBOTS

    spec, ranges = ROBOTS["panda"], env.unwrapped.cfg.commands.ee_pose.ranges
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    data, body, q0 = mujoco.MjData(model), model.body(spec.ee_body).id, np.array(spec.per_joint(spec.default_joint_pos))
    limit = model.jnt_range[6, 1]
    for yaw in np.linspace(*ranges.yaw, 5):
        xyzw = quat_from_euler_xyz(*(torch.tensor([v]) for v in (ranges.roll[0], ranges.pitch[0], yaw)))[0].numpy()
        quat = np.roll(xyzw, 1)  # MuJoCo's w, x, y, z
        for corner in itertools.product(ranges.pos_x, ranges.pos_y, ranges.pos_z):
            q, pos_err, rot_err = _solve_ik(model, data, body, np.array(corner), quat, q0)
            assert pos_err < 1e-3 and rot_err < 0.01, (yaw, corner, pos_err, rot_err)
            assert abs(q[6]) < limit - 0.4, (yaw, corner, q[6])


def test_reward_schedule_raises_smoothness_then_sharpens_the_kernels_at_1000_iterations(env):
    """The curriculum's stages by env steps (24 per iteration): Isaac Lab's smoothness penalties, then the sharp
    kernels; past both stages, both stages' weights hold."""
    unwrapped = env.unwrapped
    names = ("action_rate", "joint_vel", "ee_position_fine", "ee_position_sharp", "ee_orientation_fine")
    stages = {
        100: (-1e-4, -1e-4, 0.1, 0.0, 0.0),
        5_000: (-0.005, -0.001, 0.1, 0.0, 0.0),
        30_000: (-0.005, -0.001, 0.0, 0.2, 0.1),
    }
    try:
        for steps, weights in stages.items():
            unwrapped.common_step_counter = steps
            unwrapped.curriculum_manager.compute(env_ids=torch.arange(env.num_envs))
            unwrapped.curriculum_manager.compute(env_ids=torch.arange(env.num_envs))  # again: still the same
            current = tuple(unwrapped.reward_manager.get_term_cfg(name).weight for name in names)
            assert current == pytest.approx(weights), steps
    finally:
        for name, weight in zip(names, stages[100], strict=True):  # the module's env is shared: back to the start
            term = unwrapped.reward_manager.get_term_cfg(name)
            term.weight = weight
            unwrapped.reward_manager.set_term_cfg(name, term)
        unwrapped.common_step_counter = 0
