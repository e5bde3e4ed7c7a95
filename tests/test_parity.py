"""Robot side vs Isaac Lab, for every registered task: the same state gives the same policy input and torque.

The robot-side core (``sim2real_deploy.observations`` / ``actuators``) is what sim-to-sim, the ROS node and the
bridge run; this test holds it to the training env's own numbers, from a state reached with random actions beyond
the action clip: Isaac Lab's policy observation vector (noise off), and the joint torques Isaac Lab's actuators
(executed by Newton) write for the current targets. The robot-side state is built as a robot measures it: joint
encoders by name, an IMU's orientation and body-frame gyro, the object position in the base frame.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import GO2_TASK, task_env

from sim2real.config import task_ids
from sim2real.export.task_interface import command_term, policy_terms, task_interface
from sim2real.robots import ROBOTS
from sim2real_deploy.actuators import Actuator
from sim2real_deploy.kinematics import rotation_matrix
from sim2real_deploy.observations import ObservationBuilder, RobotState, projected_gravity
from sim2real_deploy.policy_file import PolicyMetadata

NUM_ENVS = 2


def rotate_into(quat_xyzw: np.ndarray, vec_w: np.ndarray) -> np.ndarray:
    """A world vector in the frame of a body with orientation ``quat`` (Isaac Lab 3 order: x, y, z, w)."""
    return rotation_matrix(quat_xyzw[[3, 0, 1, 2]]).T @ vec_w


def measured_state(env, spec, e: int) -> RobotState:
    """What env ``e``'s robot measures, in policy joint order, read from Isaac Lab's simulation state."""
    robot = env.unwrapped.scene["robot"]
    data = robot.data
    ids = [robot.joint_names.index(n) for n in spec.joint_names]
    quat = data.root_quat_w.torch[e].double().numpy()
    state = RobotState(data.joint_pos.torch[e, ids].double().numpy(), data.joint_vel.torch[e, ids].double().numpy())
    if spec.floating_base:
        state.base_ang_vel = rotate_into(quat, data.root_ang_vel_w.torch[e].double().numpy())
        state.gravity_b = projected_gravity(quat[[3, 0, 1, 2]])
    if spec.gripper_joints:
        state.gripper_pos = data.joint_pos.torch[e, [robot.joint_names.index(n) for n in spec.gripper_joints]].numpy()
    if "object" in env.unwrapped.scene.keys():
        obj = env.unwrapped.scene["object"].data.root_pos_w.torch[e].double().numpy()
        state.object_pos_b = rotate_into(quat, obj - data.root_pos_w.torch[e].double().numpy())
    return state


@pytest.mark.parametrize("task", task_ids())
def test_observation_and_torque_parity(task):
    captured = {}

    def keep_config(run):
        run.env.events.motor_strength = None  # nominal gains: the spec's, which the metadata carries
        run.env.actions.joint_pos.max_target_rate = None  # full target jumps exercise the torque-speed curve
        if hasattr(run.env.actions.joint_pos, "delay_range"):
            run.env.actions.joint_pos.delay_range = (0, 0)  # this step's targets: the robot side's, compared below
        captured["run"] = run

    overrides = ("env.observations.policy.enable_corruption=false", "env.observations.policy.history_length=0")
    with task_env(task, *overrides, num_envs=NUM_ENVS, configure=keep_config) as env:  # history: the test below
        run = captured["run"]
        spec = ROBOTS[run.env.robot]
        torch.manual_seed(0)
        actions = torch.zeros(NUM_ENVS, env.num_actions)
        for _ in range(4):
            actions = 15.0 * torch.randn(NUM_ENVS, env.num_actions)  # beyond clip_actions (10)
            obs = env.step(actions)[0]["policy"]
        clipped = np.clip(actions.double().numpy(), -run.agent.clip_actions, run.agent.clip_actions)
        name, _, _ = command_term(run.env)
        command = env.unwrapped.command_manager.get_command(name).double().numpy()
        meta = PolicyMetadata(task_interface(task, run.env, run.agent.clip_actions))
        build = ObservationBuilder.from_metadata(meta)  # as sim-to-sim and the node build it (an arm's kinematics too)
        for e in range(NUM_ENVS):
            tick = int(env.unwrapped.episode_length_buf[e])  # a clock's time, as the robot counts its ticks
            robot_side = build(measured_state(env, spec, e), command[e], clipped[e], tick=tick)
            np.testing.assert_allclose(robot_side, obs[e].numpy(), atol=1e-5, err_msg=f"{task} env {e}")
        assert np.abs(clipped).max() == run.agent.clip_actions  # the last-action term saw the clip
        assert_target_parity(env, spec, meta, actions)
        assert_torque_parity(env, spec, meta)


def assert_target_parity(env, spec, meta: PolicyMetadata, actions: torch.Tensor) -> None:
    """The exported metadata maps the raw network output to every joint's target as Isaac Lab's action terms did:
    scaled and offset for the commanded joints, the default pose for held ones (a G1's arms)."""
    robot = env.unwrapped.scene["robot"]
    ids = [robot.joint_names.index(n) for n in spec.joint_names]
    trained = robot.actuators.target_command.position.torch[:, ids].double().numpy()
    np.testing.assert_allclose(meta.targets_from_actions(actions.double().numpy()), trained, atol=1e-5)


def assert_torque_parity(env, spec, meta: PolicyMetadata) -> None:
    """Newton's actuator step for the current targets and state vs the robot-side model the metadata describes (Kd
    left to the joint damping where the spec simulates it implicitly: the G1's held arms)."""
    import warp as wp
    from isaaclab_newton.physics.newton_manager import NewtonManager as physics

    robot = env.unwrapped.scene["robot"]
    assert not robot.data.has_joint_ordering  # Newton's dof order is Isaac Lab's joint order
    robot.write_data_to_sim()
    physics._adapter.step(physics.backend.state_0, physics.backend.control, physics.get_physics_dt(), swap_state=False)
    applied = wp.to_torch(robot._root_view.get_attribute("joint_f", physics.backend.control))[:, 0].double().numpy()
    ids = [robot.joint_names.index(n) for n in spec.joint_names]
    actuator = Actuator.from_metadata(meta)
    data = robot.data
    saturated = False
    for e in range(NUM_ENVS):
        target = data.joint_pos_target.torch[e, ids].double().numpy()
        q, qd = data.joint_pos.torch[e, ids].double().numpy(), data.joint_vel.torch[e, ids].double().numpy()
        expected = actuator(target, q, qd)
        np.testing.assert_allclose(applied[e, ids], expected, rtol=1e-5, atol=1e-4, err_msg=f"env {e}")
        saturated |= bool(np.any(np.abs(expected) >= 0.5 * actuator.effort))
    assert saturated  # the torque-speed curve was exercised, not just the linear PD


def test_observation_history_parity():
    """With a 3-frame policy history, the robot side counting ticks from the reset builds Isaac Lab's flattened
    history step by step: every frame filled at the reset, then one frame shifted in per control step."""
    overrides = ("env.observations.policy.enable_corruption=false", "env.observations.policy.history_length=3")
    captured = {}
    with task_env(GO2_TASK, *overrides, num_envs=NUM_ENVS, configure=lambda run: captured.update(run=run)) as env:
        run = captured["run"]
        spec = ROBOTS[run.env.robot]
        terms = policy_terms(run.env)
        assert {t["history"] for t in terms} == {3}
        build = ObservationBuilder(terms, spec.per_joint(spec.default_joint_pos), control_dt=env.unwrapped.step_dt)
        obs, _ = env.reset()
        actions = torch.zeros(NUM_ENVS, env.num_actions)
        torch.manual_seed(0)
        for tick in range(5):
            command = env.unwrapped.command_manager.get_command("base_velocity").double().numpy()
            state = measured_state(env, spec, 0)
            robot_side = build(state, command[0], actions[0].double().numpy(), tick=tick)
            np.testing.assert_allclose(robot_side, obs["policy"][0].numpy(), atol=1e-5, err_msg=f"tick {tick}")
            actions = torch.randn(NUM_ENVS, env.num_actions)
            obs = env.step(actions)[0]
        assert obs["policy"].shape[1] == 3 * sum(t["size"] for t in terms)


def test_height_scan_parity():
    """A perceptive rough Go2: the robot side, given the ground under the exported scan points (placed with the base's
    measured pose, heights from the physics' terrain), builds Isaac Lab's policy input tick by tick: 5 frames of
    every flat term and the latest scan only. Env 1 is moved astride the steps of a stairs terrain after its reset."""
    from test_terrain import GO2_ROUGH, _stairs_terrain

    def configure(run):
        _stairs_terrain(run)
        captured["run"] = run

    overrides = ("env.observations.policy.enable_corruption=false", "env.height_scan_in_policy=true")
    captured = {}
    with task_env(GO2_ROUGH, *overrides, num_envs=NUM_ENVS, configure=configure) as env:
        run, base = captured["run"], env.unwrapped
        spec = ROBOTS[run.env.robot]
        meta = PolicyMetadata(task_interface(GO2_ROUGH, run.env, run.agent.clip_actions))
        points = meta.scan_points
        assert points.shape == (187, 2) and {t.get("history", 1) for t in meta.observations} == {5, 1}
        build = [ObservationBuilder.from_metadata(meta) for _ in range(NUM_ENVS)]  # one history per robot
        obs, _ = env.reset()
        actions, scans = torch.zeros(NUM_ENVS, env.num_actions), []
        torch.manual_seed(0)
        for tick in range(4):
            command = base.command_manager.get_command("base_velocity").double().numpy()
            for e in range(NUM_ENVS):
                state = measured_state(env, spec, e)
                state.ground_b = ground_below(base, e, points)
                robot_side = build[e](state, command[e], actions[e].double().numpy(), tick=tick)
                np.testing.assert_allclose(robot_side, obs["policy"][e].numpy(), atol=1e-5, err_msg=f"{tick}, {e}")
                scans.append(robot_side[-len(points) :])
            if tick == 0:
                robot = base.scene["robot"]
                pose = robot.data.root_pose_w.torch.clone()
                pose[1, :3] = torch.tensor([-1.5, 0.3, 0.52])  # the scan spans three steps on the -x side
                robot.write_root_pose_to_sim_index(root_pose=pose)
            actions = torch.randn(NUM_ENVS, env.num_actions)
            obs = env.step(actions)[0]
        assert max(np.ptp(scan) for scan in scans) > 0.2  # not only floors: the term sees the terrain's shape


def ground_below(env, e: int, points: np.ndarray) -> np.ndarray:
    """Ground minus base height at ``points`` (x, y in the base's yaw frame) around env ``e``'s measured base pose."""
    from sim2real.tasks.mdp.height_grid import ground_height

    data = env.scene["robot"].data
    pos, quat = data.root_pos_w.torch[e].double().numpy(), data.root_quat_w.torch[e].double().numpy()
    rot = rotation_matrix(quat[[3, 0, 1, 2]])
    yaw = np.arctan2(rot[1, 0], rot[0, 0])
    c, s = np.cos(yaw), np.sin(yaw)
    xy = pos[:2] + points @ np.array([[c, s], [-s, c]])
    return ground_height(env, torch.as_tensor(xy)).double().numpy() - pos[2]
