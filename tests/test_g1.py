"""The G1 humanoid flat velocity task on real Isaac Lab (Newton on the CPU): layout, standing, falls, rewards, CLI."""

from __future__ import annotations

import math
import re

import pytest
import torch
from conftest import task_env

G1_TASK = "Sim2Real-Velocity-Flat-G1-v0"
NUM_ENVS = 4
NUM_JOINTS, NUM_ACTIONS = 23, 12  # the policy drives the legs; waist and arms are held
# documented in docs/observations.md: 9 + 2n + a + 2 (the gait clock) values per step, 5 steps for the actor; the
# critic sees one step and adds 3+1+2+1+1+3+2n+1 privileged values
STEP_SIZE = 9 + 2 * NUM_JOINTS + NUM_ACTIONS + 2
POLICY_SIZE = 5 * STEP_SIZE
CRITIC_SIZE = STEP_SIZE + 12 + 2 * NUM_JOINTS


def _calm(run) -> None:
    """Spawn at rest in the exact default pose, no pushes or action delay."""
    events = run.env.events
    events.reset_base.params["velocity_range"] = {}
    events.reset_joints.params["position_range"] = (1.0, 1.0)
    events.push_robot = None
    run.env.actions.joint_pos.delay_range = (0, 0)


def g1_env(calm: bool = False):
    return task_env(G1_TASK, num_envs=NUM_ENVS, configure=_calm if calm else None)


@pytest.fixture(scope="module")
def env():
    with g1_env(calm=True) as wrapped:
        yield wrapped


def test_observation_groups_have_documented_sizes(env):
    manager = env.unwrapped.observation_manager
    critic_terms = dict(zip(manager.active_terms["critic"], manager.group_obs_term_dim["critic"], strict=True))
    assert critic_terms["foot_contacts"] == (2,)  # one contact state per foot: the spec's foot count
    obs = env.get_observations()
    assert obs["policy"].shape == (NUM_ENVS, POLICY_SIZE) and obs["critic"].shape == (NUM_ENVS, CRITIC_SIZE)


def test_action_drives_the_legs_in_spec_order(env):
    from sim2real.robots import ROBOTS

    action_term = env.unwrapped.action_manager.get_term("joint_pos")
    robot = env.unwrapped.scene["robot"]
    legs = [j for j in ROBOTS["g1"].joint_names if re.search("hip|knee|ankle", j)]
    assert [robot.joint_names[i] for i in action_term._joint_ids] == legs and len(legs) == NUM_ACTIONS


def test_held_joints_keep_the_default_pose_while_the_legs_act(env):
    """Full-scale leg actions move the legs; the waist and arms, which no action term drives, stay at their
    default targets and within a few degrees of the default pose (their PD holds them)."""
    env.reset()
    robot = env.unwrapped.scene["robot"]
    held = [i for i, name in enumerate(robot.joint_names) if re.search("waist|shoulder|elbow|wrist", name)]
    legs = env.unwrapped.action_manager.get_term("joint_pos")._joint_ids
    default = robot.data.default_joint_pos.torch
    generator = torch.Generator().manual_seed(0)
    for _ in range(10):
        env.step(torch.rand(env.num_envs, NUM_ACTIONS, generator=generator) * 2 - 1)
    assert torch.equal(robot.actuators.target_command.position.torch[:, held], default[:, held])
    assert (robot.data.joint_pos.torch[:, held] - default[:, held]).abs().max() < 0.1
    assert (robot.actuators.target_command.position.torch[:, legs] - default[:, legs]).abs().max() > 0.1


def test_standing_at_default_pose_with_zero_actions_stays_up_for_one_second(env):
    env.reset()
    robot = env.unwrapped.scene["robot"]
    for _ in range(50):  # 1 s at 50 Hz
        obs, rewards, dones, extras = env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
        assert not dones.any(), "a standing robot terminated"
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(rewards).all()
    assert (robot.data.root_pos_w.torch[:, 2] > 0.65).all()  # pelvis at ~0.77 m when standing
    assert (robot.data.projected_gravity_b.torch[:, 2] < -0.9).all()  # upright


def _put_base(env, height: float, quat_xyzw: tuple[float, float, float, float]) -> None:
    """Every env's base at rest at ``height`` above its origin with orientation ``quat_xyzw``."""
    env.reset()
    pose = torch.tensor([0.0, 0.0, height, *quat_xyzw]).repeat(env.num_envs, 1)
    pose[:, :2] = env.unwrapped.scene.env_origins[:, :2]
    robot = env.unwrapped.scene["robot"]
    robot.write_root_pose_to_sim_index(root_pose=pose)
    robot.write_root_velocity_to_sim_index(root_velocity=torch.zeros(env.num_envs, 6))


def test_fallen_robot_terminates(env):
    _put_base(env, 0.15, (0.0, 0.7071068, 0.0, 0.7071068))  # on its back: pelvis and torso on the ground
    terminated = torch.zeros(env.num_envs, dtype=torch.bool)
    for _ in range(10):
        _, _, dones, extras = env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
        terminated |= dones.bool() & ~extras["time_outs"].bool()
        if terminated.all():
            break
    assert terminated.all()


def test_crouch_below_the_check_fall_height_terminates(env):
    """Training ends an episode where the sim-to-sim check calls a fall (0.75 of the 0.78 m standing height): an
    upright pelvis put at 0.45 m is a fall in both, though no pelvis or torso contact happens."""
    from sim2real.robots import ROBOTS

    assert env.unwrapped.cfg.terminations.base_too_low.params["minimum_height"] == ROBOTS["g1"].fall_height
    _put_base(env, 0.45, (0.0, 0.0, 0.0, 1.0))
    env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    manager = env.unwrapped.termination_manager
    assert manager.get_term("base_too_low").all() and not manager.get_term("base_contact").any()


def _term(env, name: str) -> torch.Tensor:
    term = env.unwrapped.reward_manager.get_term_cfg(name)
    return term.func(env.unwrapped, **term.params) * term.weight


def test_joint_deviation_penalises_arms_away_from_default(env):
    env.reset()
    robot = env.unwrapped.scene["robot"]
    assert (_term(env, "joint_deviation_arms").abs() < 1e-3).all()
    arm_ids, _ = robot.find_joints(".*_shoulder_pitch_joint")
    joint_pos = robot.data.default_joint_pos.torch.clone()
    joint_pos[:, arm_ids] -= 0.5  # both arms raised
    robot.write_joint_position_to_sim_index(position=joint_pos)
    assert torch.allclose(_term(env, "joint_deviation_arms"), torch.tensor(-0.1 * 0.5 * 2), atol=1e-3)
    for hip in ("joint_deviation_hip_yaw", "joint_deviation_hip_roll"):
        assert (_term(env, hip).abs() < 1e-3).all()  # the legs did not move


def test_hip_roll_posture_steps_aside_only_for_sideways_commands(env):
    """Both hip rolls 0.2 rad out: 0.4 rad of L1 deviation, charged under every command by default. With
    ``max_lateral_command`` 0.1 a 0.4 m/s sideways command frees it and a forward one does not. Hip yaw is its
    own term and reads nothing of the roll."""
    env.reset()
    robot = env.unwrapped.scene["robot"]
    roll_ids, _ = robot.find_joints(".*_hip_roll_joint")
    joint_pos = robot.data.default_joint_pos.torch.clone()
    joint_pos[:, roll_ids] += 0.2
    robot.write_joint_position_to_sim_index(position=joint_pos)
    command = env.unwrapped.command_manager.get_term("base_velocity").vel_command_b
    command[:] = torch.tensor([[0.5, 0.0, 0.0], [0.0, -0.05, 0.0], [0.0, 0.4, 0.0], [0.3, -0.3, 0.2]])
    term = env.unwrapped.reward_manager.get_term_cfg("joint_deviation_hip_roll")
    assert torch.allclose(term.func(env.unwrapped, **term.params), torch.tensor(0.4), atol=1e-4)
    gated = term.func(env.unwrapped, **(term.params | {"max_lateral_command": 0.1}))
    assert torch.allclose(gated, torch.tensor([0.4, 0.4, 0.0, 0.0]), atol=1e-4)
    assert (_term(env, "joint_deviation_hip_yaw").abs() < 1e-3).all()


def test_feet_spin_reads_the_feet_in_contact(env):
    """``feet_spin`` (off by default) points its sensor and its bodies at the spec's feet. Standing, both feet are
    in contact and still (~0). In the air, turning at 2 rad/s, no foot counts."""
    from sim2real.robots import ROBOTS
    from sim2real.tasks.mdp import feet_spin

    term = env.unwrapped.reward_manager.get_term_cfg("feet_spin")
    robot, sensor = env.unwrapped.scene["robot"], env.unwrapped.scene.sensors["contact_forces"]
    feet = list(ROBOTS["g1"].foot_bodies)
    assert [robot.body_names[i] for i in term.params["asset_cfg"].body_ids] == feet
    assert [sensor.sensor_names[i] for i in term.params["sensor_cfg"].body_ids] == feet
    env.reset()
    for _ in range(5):
        env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    assert (feet_spin(env.unwrapped, **term.params) < 0.05).all()
    _put_base(env, 1.2, (0.0, 0.0, 0.0, 1.0))
    velocity = torch.zeros(env.num_envs, 6)
    velocity[:, 5] = 2.0
    robot.write_root_velocity_to_sim_index(root_velocity=velocity)
    for _ in range(5):
        env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    assert (robot.data.body_ang_vel_w.torch[:, term.params["asset_cfg"].body_ids, 2] > 1.0).all()
    assert (feet_spin(env.unwrapped, **term.params) == 0).all()


def test_feet_tilt_is_zero_on_flat_soles_and_the_sine_of_a_roll(env):
    """``feet_tilt`` reads the spec's feet (the ankle-roll links, level in the default pose): ~0 standing, and
    sin(0.3) per foot with the whole robot rolled 0.3 rad in the air (a step later, before it can land)."""
    from sim2real.robots import ROBOTS
    from sim2real.tasks.mdp import feet_tilt

    term = env.unwrapped.reward_manager.get_term_cfg("feet_tilt")
    robot = env.unwrapped.scene["robot"]
    assert [robot.body_names[i] for i in term.params["asset_cfg"].body_ids] == list(ROBOTS["g1"].foot_bodies)
    env.reset()
    env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    assert (feet_tilt(env.unwrapped, **term.params) < 0.05).all()
    _put_base(env, 0.9, (math.sin(0.15), 0.0, 0.0, math.cos(0.15)))  # 0.3 rad about x, feet off the ground
    env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    assert torch.allclose(feet_tilt(env.unwrapped, **term.params), torch.tensor(2 * math.sin(0.3)), atol=0.03)


def test_yaw_rate_error_l2_keeps_growing_where_the_tracking_kernel_flattens(env):
    """The base turning at 1.5 rad/s against a 0.5 rad/s command: the L2 term reads (1.5 - 0.5)^2 = 1.0, and
    Isaac Lab's kernel exp(-1.0 / 0.25) = 0.018; at 2.5 rad/s, 4.0 against 1e-7."""
    from sim2real.tasks.mdp import ang_vel_z_error_l2

    params = env.unwrapped.reward_manager.get_term_cfg("yaw_rate_error").params
    kernel = env.unwrapped.reward_manager.get_term_cfg("track_ang_vel_z_exp")
    robot = env.unwrapped.scene["robot"]
    for yaw_rate, expected in ((1.5, 1.0), (2.5, 4.0)):
        _put_base(env, 0.9, (0.0, 0.0, 0.0, 1.0))
        env.unwrapped.command_manager.get_term("base_velocity").vel_command_b[:] = torch.tensor([0.0, 0.0, 0.5])
        velocity = torch.zeros(env.num_envs, 6)
        velocity[:, 5] = yaw_rate
        robot.write_root_velocity_to_sim_index(root_velocity=velocity)
        error = ang_vel_z_error_l2(env.unwrapped, **params)
        assert torch.allclose(error, torch.tensor(expected), atol=1e-4)
        tracking = kernel.func(env.unwrapped, **kernel.params)
        assert torch.allclose(tracking, torch.tensor(math.exp(-expected / 0.25)), atol=1e-4)


def test_angular_momentum_is_mujocos_whole_body_momentum(env):
    """Rolled 0.6 rad and spun about all three axes in the air: the whole-body angular momentum, as a world-frame
    vector, equals MuJoCo's own (the pelvis subtree's ``subtree_angmom``) for the same pose and twist from the G1
    MJCF, and the term is its squared norm. With no contact, L is conserved through the policy step that updates the
    bodies. By hand: two point masses of 1 kg 1 m apart, spun at 2 rad/s, carry 2 x 1 x 0.5^2 x 2 = 1 kg m^2/s about
    z; a body with inertia diag(1, 2, 3) turned 90 degrees about z and spun at 1 rad/s about the world x (its own
    y) carries 2 kg m^2/s about x. Without yaw the term drops the vertical component."""
    import mujoco
    from isaaclab.managers import SceneEntityCfg

    from sim2real.robots import ROBOTS
    from sim2real.tasks.mdp import angular_momentum_l2
    from sim2real.tasks.mdp.momentum import angular_momentum_w, whole_body_angular_momentum

    points = angular_momentum_w(
        torch.ones(2),
        torch.zeros(2, 9),
        torch.tensor([[0.0, 0, 0, 1]] * 2),
        torch.tensor([[0.5, 0, 0], [-0.5, 0, 0]]),
        torch.tensor([[0, 1.0, 0], [0, -1.0, 0]]),
        torch.zeros(2, 3),
    )
    assert torch.allclose(points, torch.tensor([0.0, 0.0, 1.0]))
    half = math.sqrt(0.5)
    turned = angular_momentum_w(
        torch.ones(1),
        torch.diag(torch.tensor([1.0, 2.0, 3.0])).reshape(1, 9),
        torch.tensor([[0.0, 0.0, half, half]]),
        torch.zeros(1, 3),
        torch.zeros(1, 3),
        torch.tensor([[1.0, 0.0, 0.0]]),
    )
    assert torch.allclose(turned, torch.tensor([2.0, 0.0, 0.0]), atol=1e-6)

    roll, spin = 0.6, torch.tensor([0.4, -0.2, 1.0])
    _put_base(env, 1.5, (math.sin(roll / 2), 0.0, 0.0, math.cos(roll / 2)))
    robot = env.unwrapped.scene["robot"]
    robot.write_root_velocity_to_sim_index(root_velocity=torch.cat([torch.zeros(3), spin]).repeat(env.num_envs, 1))
    joint_pos = dict(zip(robot.joint_names, robot.data.joint_pos.torch[0].tolist(), strict=True))
    env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
    momentum = whole_body_angular_momentum(env.unwrapped, SceneEntityCfg("robot"))

    model = mujoco.MjModel.from_xml_path(str(ROBOTS["g1"].mjcf_path))
    mj = mujoco.MjData(model)
    mj.qpos[:7] = [0.0, 0.0, 1.5, math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0]  # MuJoCo: (w, x, y, z)
    for name, angle in joint_pos.items():
        mj.joint(name).qpos[0] = angle
    # a free joint's angular velocity is in its body frame: the world spin rolled back by -0.6 rad about x
    c, s = math.cos(roll), math.sin(roll)
    mj.qvel[3:6] = [float(spin[0]), c * float(spin[1]) + s * float(spin[2]), -s * float(spin[1]) + c * float(spin[2])]
    mujoco.mj_forward(model, mj)
    mujoco.mj_subtreeVel(model, mj)
    expected = torch.tensor(mj.subtree_angmom[model.body("pelvis").id], dtype=torch.float32)
    assert expected.norm() > 0.5  # the whole body turning, not a rounding error
    assert torch.allclose(momentum, expected.expand_as(momentum), atol=0.02 * float(expected.norm()))
    assert torch.allclose(angular_momentum_l2(env.unwrapped), momentum.square().sum(dim=-1))
    assert torch.allclose(angular_momentum_l2(env.unwrapped, yaw=False), momentum[:, :2].square().sum(dim=-1))
