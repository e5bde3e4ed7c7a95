"""The Franka Panda lift task on real Isaac Lab (CPU): layout, cube physics and randomisation, rewards, training."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import documented_terms, obs_layout, task_env

LIFT_TASK = "Sim2Real-Lift-Panda-v0"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "tasks.md"
NUM_ENVS = 5  # one per cube size
POLICY_DIM, CRITIC_DIM = 37, 83


@pytest.fixture(scope="module")
def env():
    with task_env(LIFT_TASK, num_envs=NUM_ENVS) as wrapped:
        yield wrapped


def _critic(env) -> torch.Tensor:
    """Critic observations of the current state (the wrapper's get_observations returns the last step's)."""
    return env.unwrapped.observation_manager.compute()["critic"]


def _critic_term(env, name: str) -> torch.Tensor:
    manager = env.unwrapped.observation_manager
    dims = [d[0] for d in manager.group_obs_term_dim["critic"]]
    index = manager.active_terms["critic"].index(name)
    start = sum(dims[:index])
    return _critic(env)[:, start : start + dims[index]]


def _step(env, n: int, gripper: float = 1.0) -> None:
    """``n`` policy steps holding the arm at its default pose with the gripper open (> 0) or closed (< 0)."""
    actions = torch.zeros(env.num_envs, 8)
    actions[:, 7] = gripper
    for _ in range(n):
        env.step(actions)


def _object(env):
    return env.unwrapped.scene["object"]


def test_observation_groups_match_documented_layout(env):
    policy, critic = (documented_terms(DOCS, "Franka Panda lift", group) for group in ("policy", "critic"))
    assert obs_layout(env, "policy") == policy
    assert obs_layout(env, "critic") == policy + critic
    obs = env.get_observations()
    assert obs["policy"].shape == (NUM_ENVS, POLICY_DIM) and obs["critic"].shape == (NUM_ENVS, CRITIC_DIM)


def test_actions_are_the_arm_joints_and_one_gripper_command(env):
    from sim2real.robots import ROBOTS

    robot = env.unwrapped.scene["robot"]
    arm = env.unwrapped.action_manager.get_term("joint_pos")
    gripper = env.unwrapped.action_manager.get_term("gripper")
    assert [robot.joint_names[i] for i in arm._joint_ids] == list(ROBOTS["panda"].joint_names)
    assert list(gripper._joint_names) == list(ROBOTS["panda"].gripper_joints)
    assert env.num_actions == 8


def test_cube_rests_on_the_table_at_its_own_size(env):
    """Each env's cube falls onto the table and stays there: it collides, and its size differs per env."""
    from sim2real.tasks.manipulation.lift_env_cfg import CUBE_SIZES

    env.reset()
    _step(env, 50)  # 1 s
    size = _critic_term(env, "object_size")
    assert torch.allclose(size, size[:, :1].expand(-1, 3))  # cubes
    assert sorted(size[:, 0].tolist()) == pytest.approx(sorted(CUBE_SIZES), abs=1e-6)
    height = _object(env).data.root_pos_w.torch[:, 2]
    assert torch.allclose(height, size[:, 0] / 2, atol=3e-3)  # resting on its face: the physics uses that size
    assert _object(env).data.root_lin_vel_w.torch.norm(dim=-1).max() < 0.02


def test_object_mass_and_friction_differ_across_envs_and_reach_the_critic(env):
    obj = _object(env)
    mass = obj.data.body_mass.torch[:, 0]
    assert mass.std() > 1e-3 and ((mass >= 0.05 - 1e-6) & (mass <= 0.25 + 1e-6)).all()
    assert torch.allclose(_critic_term(env, "object_mass")[:, 0], mass)
    friction = _critic_term(env, "object_friction")[:, 0]
    assert friction.std() > 1e-3 and ((friction >= 0.5 - 1e-6) & (friction <= 1.2 + 1e-6)).all()


def _grasp_point(env) -> torch.Tensor:
    from sim2real.tasks.manipulation import mdp

    term = env.unwrapped.reward_manager.get_term_cfg("reaching_object")
    return mdp.grasp_point_w(env.unwrapped, term.params["asset_cfg"], term.params["grasp_offset"])


def _place_object(env, pos_w: torch.Tensor, quat_w: torch.Tensor | None = None) -> None:
    obj = _object(env)
    quat_w = torch.tensor([0.0, 0.0, 0.0, 1.0]).expand(env.num_envs, 4) if quat_w is None else quat_w
    pose = torch.cat((pos_w, quat_w), dim=-1)
    obj.write_root_pose_to_sim_index(root_pose=pose)
    obj.write_root_velocity_to_sim_index(root_velocity=torch.zeros(env.num_envs, 6))
    env.unwrapped.scene.update(0.0)


def _reward_terms(env, *names: str) -> torch.Tensor:
    manager = env.unwrapped.reward_manager
    total = torch.zeros(env.num_envs)
    for name in names:
        term = manager.get_term_cfg(name)
        total += term.func(env.unwrapped, **term.params) * term.weight
    return total


def _grasp_cube(env, steps: int = 10) -> torch.Tensor:
    """Close the hand on each env's cube, placed between the fingertips; returns the cube sizes."""
    robot = env.unwrapped.scene["robot"]
    size = _critic_term(env, "object_size")[:, :1]
    fingers = [robot.joint_names.index(j) for j in ("finger_joint1", "finger_joint2")]
    # fingers 2 mm clear of the cube and their targets closed at once: closing from wide open at the gripper's
    # speed would let the cube fall out first
    robot.write_joint_position_to_sim_index(position=(size / 2 + 0.002).expand(-1, 2), joint_ids=fingers)
    env.unwrapped.action_manager.get_term("gripper")._targets[:] = 0.0
    hand_quat = robot.data.body_quat_w.torch[:, robot.body_names.index("hand")]
    _place_object(env, _grasp_point(env), hand_quat)  # faces parallel to the finger pads
    assert (_critic_term(env, "finger_contact") == 0).all()
    _step(env, steps, gripper=-1.0)
    return size


def test_lift_reward_rises_when_the_cube_is_lifted_in_the_hand(env):
    env.reset()
    _step(env, 25)
    obj = _object(env)
    on_table = obj.data.root_pos_w.torch.clone()
    assert (_reward_terms(env, "lifting_object") == 0).all()
    _place_object(env, on_table + torch.tensor([0.0, 0.0, 0.2]))
    assert (_reward_terms(env, "lifting_object", "grasping_object") == 0).all()  # in the air, not held: knocked
    _grasp_cube(env)  # held in the hand, ~0.4 m above the table
    assert (obj.data.root_pos_w.torch[:, 2] > 0.2).all()
    assert (_reward_terms(env, "lifting_object") == 15.0).all()
    assert (_reward_terms(env, "grasping_object") == 2.0).all()  # the grasp pays on its own, lifted or not
    # at the target: the goal-tracking terms pay on top, only while lifted and held
    command = env.unwrapped.command_manager.get_term("object_pose")
    command.pose_command_b[:, :3] = obj.data.root_pos_w.torch - env.unwrapped.scene["robot"].data.root_pos_w.torch
    goal = ("object_goal_tracking", "object_goal_tracking_fine_grained")
    assert (_reward_terms(env, *goal) > 16.0 + 5.0 - 0.1).all()
    _place_object(env, on_table)
    assert (_reward_terms(env, "lifting_object", *goal) == 0).all()


def test_reaching_reward_and_critic_offset_follow_the_grasp_point(env):
    env.reset()
    grasp = _grasp_point(env)
    _place_object(env, grasp)
    assert _critic_term(env, "object_to_grasp_point").abs().max() < 1e-4
    assert (_reward_terms(env, "reaching_object") > 0.99).all()
    _place_object(env, grasp + torch.tensor([0.0, 0.2, 0.0]))
    assert (_reward_terms(env, "reaching_object") < 1 - 0.9).all()


def test_closed_gripper_holds_the_cube_and_the_critic_feels_it(env):
    """The hand holds the cube while the arm swings, in every env: each has its own cube size, and native MuJoCo
    steps each env's world separately."""
    env.reset()
    size = _grasp_cube(env, steps=0)
    actions = torch.zeros(env.num_envs, 8)
    actions[:, 1], actions[:, 7] = 0.6, -1.0  # swing joint 2 forward with the gripper closed
    for _ in range(25):  # 0.5 s
        env.step(actions)
    contact = _critic_term(env, "finger_contact")
    assert (contact > 1.0).all(), contact
    offset = (_object(env).data.root_pos_w.torch - _grasp_point(env)).norm(dim=-1)
    assert (offset < 0.015).all(), offset  # held (an unheld cube falls ~0.4 m to the table in 0.5 s)
    robot = env.unwrapped.scene["robot"]
    opening = robot.data.joint_pos.torch[:, [robot.joint_names.index(j) for j in ("finger_joint1", "finger_joint2")]]
    assert torch.allclose(opening, size.expand(-1, 2) / 2, atol=4e-3)  # stopped by the cube, at its half width
