"""The robot side's forward kinematics (``sim2real_deploy.kinematics``) against MuJoCo's, its pose error on
hand-computed targets, the lift policy's grasp-point term, and the reader's checks of what an arm policy carries."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import pytest

from sim2real.export.metadata import ee_chain_from_mjcf
from sim2real.robots import ROBOTS
from sim2real_deploy.kinematics import EndEffectorChain, axis_rotation, quat_from_matrix, rotation_log
from sim2real_deploy.observations import ObservationBuilder, RobotState
from sim2real_deploy.policy_file import PolicyFileError, validate_metadata

PANDA = ROBOTS["panda"]


@pytest.fixture(scope="module")
def chain() -> EndEffectorChain:
    links = ee_chain_from_mjcf(PANDA.mjcf_path, PANDA.base_body, PANDA.ee_body)
    return EndEffectorChain.from_metadata(links, PANDA.joint_names)


def test_chain_runs_from_the_base_to_the_hand_through_every_arm_joint():
    links = ee_chain_from_mjcf(PANDA.mjcf_path, PANDA.base_body, PANDA.ee_body)
    assert links[-1]["body"] == PANDA.ee_body
    assert [link["joint"] for link in links if "joint" in link] == list(PANDA.joint_names)


def test_hand_pose_matches_mujoco_at_random_joint_angles(chain):
    model = mujoco.MjModel.from_xml_path(str(PANDA.mjcf_path))
    data = mujoco.MjData(model)
    base, hand = model.body(PANDA.base_body).id, model.body(PANDA.ee_body).id
    rng = np.random.default_rng(0)
    for _ in range(20):
        q = rng.uniform(-2.5, 2.5, len(PANDA.joint_names))
        for name, angle in zip(PANDA.joint_names, q, strict=True):
            data.qpos[model.jnt_qposadr[model.joint(name).id]] = angle
        mujoco.mj_kinematics(model, data)
        base_rot = data.xmat[base].reshape(3, 3)
        pos, rot = chain.pose(q)
        np.testing.assert_allclose(pos, base_rot.T @ (data.xpos[hand] - data.xpos[base]), atol=1e-12)
        np.testing.assert_allclose(rot, base_rot.T @ data.xmat[hand].reshape(3, 3), atol=1e-12)


def xyzw(rotation: np.ndarray) -> np.ndarray:
    w, x, y, z = quat_from_matrix(rotation)
    return np.array([x, y, z, w])


def test_pose_error_is_the_offset_and_the_turn_to_the_target(chain):
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.6, -0.5])
    pos, rot = chain.pose(q)
    np.testing.assert_allclose(chain.pose_error(q, pos, xyzw(rot)), np.zeros(6), atol=1e-12)
    # 5 cm along base x and a 0.3 rad turn about base z: the error reads exactly those
    turned = axis_rotation(np.array([0.0, 0.0, 1.0]), 0.3) @ rot
    error = chain.pose_error(q, pos + [0.05, 0.0, 0.0], xyzw(turned))
    np.testing.assert_allclose(error, [0.05, 0.0, 0.0, 0.0, 0.0, 0.3], atol=1e-12)
    # q and -q are one target
    np.testing.assert_allclose(chain.pose_error(q, pos + [0.05, 0.0, 0.0], -xyzw(turned)), error, atol=1e-12)


def test_rotation_log_takes_the_short_way_round():
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    np.testing.assert_allclose(rotation_log(axis_rotation(axis, 2.5)), 2.5 * axis, atol=1e-12)
    # 2 pi - 0.5 one way is 0.5 the other
    np.testing.assert_allclose(rotation_log(axis_rotation(axis, 2 * np.pi - 0.5)), -0.5 * axis, atol=1e-12)
    np.testing.assert_allclose(rotation_log(np.eye(3)), np.zeros(3), atol=1e-15)


@pytest.fixture(scope="module")
def reach_metadata() -> dict:
    from sim2real.config import load_task
    from sim2real.export.task_interface import task_interface

    run = load_task("Sim2Real-Reach-Panda-v0")
    meta = task_interface("Sim2Real-Reach-Panda-v0", run.env, run.agent.clip_actions)
    return meta | {"training": {}}  # what a run adds at export; the reader only needs the key


def test_reach_metadata_carries_the_chain_its_pose_error_term_needs(reach_metadata):
    meta = validate_metadata(copy.deepcopy(reach_metadata))
    assert "ee_pose_error" in [term["name"] for term in meta.observations]
    without = copy.deepcopy(reach_metadata)
    del without["robot"]["ee_chain"]
    with pytest.raises(PolicyFileError, match="needs robot.ee_chain"):
        validate_metadata(without)
    broken = copy.deepcopy(reach_metadata)
    broken["robot"]["ee_chain"][2]["quat"] = [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(PolicyFileError, match="'quat' must be 4 finite numbers"):
        validate_metadata(broken)


@pytest.fixture(scope="module")
def lift_metadata() -> dict:
    from sim2real.config import load_task
    from sim2real.export.task_interface import task_interface

    run = load_task("Sim2Real-Lift-Panda-v0")
    meta = task_interface("Sim2Real-Lift-Panda-v0", run.env, run.agent.clip_actions)
    return meta | {"training": {}}


def test_object_to_grasp_point_is_the_cube_seen_from_between_the_fingertips(lift_metadata):
    """The term a lift policy reads, built from its metadata, against MuJoCo's hand pose plus the spec's offset."""
    meta = validate_metadata(copy.deepcopy(lift_metadata))
    np.testing.assert_allclose(meta.raw["robot"]["grasp_offset"], PANDA.grasp_offset)
    build = ObservationBuilder.from_metadata(meta)
    model = mujoco.MjModel.from_xml_path(str(PANDA.mjcf_path))
    data = mujoco.MjData(model)
    hand = model.body(PANDA.ee_body).id
    q = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.6, -0.5])
    for name, angle in zip(PANDA.joint_names, q, strict=True):
        data.qpos[model.jnt_qposadr[model.joint(name).id]] = angle
    mujoco.mj_kinematics(model, data)  # the Panda's base is the world frame
    grasp = data.xpos[hand] + data.xmat[hand].reshape(3, 3) @ np.asarray(PANDA.grasp_offset)
    cube = np.array([0.5, -0.1, 0.03])
    state = RobotState(q, np.zeros(7), gripper_pos=np.full(2, 0.04), object_pos_b=cube)
    obs = build(state, np.zeros(7), np.zeros(8), tick=0)
    names = [term["name"] for term in meta.observations]
    start = sum(term["size"] for term in meta.observations[: names.index("object_to_grasp_point")])
    np.testing.assert_allclose(obs[start : start + 3], cube - grasp, atol=1e-6)  # float32 input


def test_a_grasp_point_term_needs_the_offset_and_a_sound_one(lift_metadata):
    without = copy.deepcopy(lift_metadata)
    del without["robot"]["grasp_offset"]
    with pytest.raises(PolicyFileError, match="needs robot.grasp_offset"):
        validate_metadata(without)
    broken = copy.deepcopy(lift_metadata)
    broken["robot"]["grasp_offset"] = [0.0, float("nan"), 0.1]
    with pytest.raises(PolicyFileError, match="grasp_offset must be 3 finite numbers"):
        validate_metadata(broken)
