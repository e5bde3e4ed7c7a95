"""Every registered robot: its MJCF compiles and meets the contract the robot side relies on, and the spec's
names exist in it (mjlab's per-robot constants test, run over the registry)."""

from __future__ import annotations

from pathlib import Path

import mujoco
import pytest
import yaml

from sim2real.robots import ROBOTS
from sim2real_deploy.mujoco_robot import build_scene, motors_on


def names(model: mujoco.MjModel, kind: mujoco.mjtObj, count: int) -> set[str]:
    return {mujoco.mj_id2name(model, kind, i) for i in range(count)}


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_mjcf_matches_spec(robot):
    spec = ROBOTS[robot]
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    joints = names(model, mujoco.mjtObj.mjOBJ_JOINT, model.njnt)
    bodies = names(model, mujoco.mjtObj.mjOBJ_BODY, model.nbody)
    assert set(spec.joint_names) | set(spec.gripper_joints) <= joints
    for joint in spec.joint_names:  # exported policies carry the MJCF's limits
        assert model.jnt_limited[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)], joint
    wanted = {spec.base_body, *spec.foot_bodies, *spec.foot_frames, *spec.undesired_contact_bodies}
    wanted |= set(spec.fall_contact_bodies)
    wanted |= {b for b in (spec.ee_body, *spec.finger_bodies) if b}
    assert wanted <= bodies
    free = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
    assert len(free) == (1 if spec.floating_base else 0)
    if spec.floating_base:
        assert mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, model.jnt_bodyid[free[0]]) == spec.base_body
    spec.joint_table()  # every joint in exactly one actuator group, one default position
    assert spec.usd_path.is_file()


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_scene_gives_every_policy_joint_one_motor(robot):
    """The robot side drives each policy joint through exactly one joint motor, added if the MJCF has none."""
    spec = ROBOTS[robot]
    model = build_scene(spec.mjcf_path, 0.005, spec.joint_names)
    for joint in spec.joint_names:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        motors = motors_on(model, jid)
        assert len(motors) == 1, joint
        assert model.actuator_gaintype[motors[0]] == 0 and model.actuator_biastype[motors[0]] == 0  # torque
    original = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    for a in range(original.nu):  # keyframe ctrl of the actuators kept follows them (the Panda's gripper stays open)
        kept = mujoco.mj_name2id(
            model, mujoco.mjtObj.mjOBJ_ACTUATOR, mujoco.mj_id2name(original, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        )
        if kept >= 0:
            assert (model.key_ctrl[:, kept] == original.key_ctrl[:, a]).all()


ROS_CONFIG = Path(__file__).resolve().parent.parent / "deploy_ros" / "config"


@pytest.mark.parametrize("path", sorted(ROS_CONFIG.glob("*.yaml")), ids=lambda p: p.name)
def test_ros_parameter_files_list_a_robots_joints_in_driver_order(path):
    """The ROS package is self-contained on the robot (no spec there), so its joint lists are checked here: each is
    one registered robot's policy joints, in the order of its MJCF's motors (the driver's order)."""
    for node, section in yaml.safe_load(path.read_text()).items():
        params = section["ros__parameters"]
        for key in ("output_joint_names", "command_joint_names"):
            if not params.get(key):
                continue
            joints = params[key]
            robots = [r for r in ROBOTS.values() if sorted(r.joint_names) == sorted(joints)]
            assert robots, f"{path.name} {node}.{key} is no registered robot's joint set"
            assert joints in [driver_order(r) for r in robots], f"{path.name} {node}.{key}: not the driver's order"


def driver_order(spec) -> list[str]:
    """The policy joints in the order of the MJCF's motors (of its joints, for an MJCF without motors)."""
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    motors = [a for a in range(model.nu) if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]  # not tendons
    if motors:
        order = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.actuator_trnid[a, 0]) for a in motors]
    else:
        order = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(model.njnt)]
    return [j for j in order if j in spec.joint_names]


def test_implicit_damping_adds_kd_to_the_mjcf_damping_and_refuses_a_gripper():
    """An implicit group's joints get the MJCF's joint damping plus Kd as Isaac Lab's viscous friction (the robot side
    adds Kd to the MJCF's too); on a gripper group, whose joints the metadata does not list, it is refused."""
    from dataclasses import replace

    from sim2real.robots.isaaclab import actuator_cfg

    g1, panda = ROBOTS["g1"], ROBOTS["panda"]
    arms = replace(g1.group_of("left_elbow_joint"), damping=10.0, implicit_damping=True)
    cfg = actuator_cfg(g1, arms)
    assert cfg.damping == 0.0 and cfg.viscous_friction["left_elbow_joint"] == pytest.approx(10.0 + 0.05)
    assert len(cfg.viscous_friction) == 10  # both arms' five joints
    fingers = replace(panda.group_of(panda.gripper_joints[0]), implicit_damping=True)
    with pytest.raises(ValueError, match="gripper"):
        actuator_cfg(panda, fingers)
