"""ROS 2 parameter files of a robot, derived from its spec: ``deploy_ros/config/<robot>.yaml`` (``policy_node``)
and ``<robot>_sim.yaml`` (``mujoco_bridge``). ``sim2real ros-config <robot>`` writes them; a test keeps the committed
files equal to what the spec gives. Everything about the policy itself (joint order, gains, rates) is in its ONNX
metadata; these files hold what is about the robot's driver: the order its controller takes joints in (the MJCF's
actuator order, as on Unitree's drivers) and the safety thresholds.
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from sim2real import REPO_ROOT
from sim2real.robots import RobotSpec

CONFIG_DIR = REPO_ROOT / "deploy_ros" / "config"
TARGET_TOPIC = "/forward_position_controller/commands"  # ros2_control forward_position_controller
GRIPPER_TOPIC = "/gripper_position_controller/commands"  # a second forward position controller, on the fingers
NODE_TILT_FRACTION = 0.7  # the node damps at this fraction of the robot's fall tilt: before the check calls it a fall


def driver_joint_order(spec: RobotSpec) -> list[str]:
    """The policy joints in the MJCF's actuator order: the order the robot's joint controller takes them in."""
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    joint_driven = [a for a in range(model.nu) if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]
    driven = [model.joint(int(model.actuator_trnid[a, 0])).name for a in joint_driven]
    order = [name for name in driven if name in spec.joint_names]
    if sorted(order) != sorted(spec.joint_names):
        missing = sorted(set(spec.joint_names) - set(order))
        raise ValueError(f"{spec.mjcf_path.name}: policy joints without exactly one joint actuator: {missing}")
    return order


def _has_keyframe(spec: RobotSpec, name: str) -> bool:
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    return any(model.key(k).name == name for k in range(model.nkey))


def _yaml_list(names: list[str], indent: int) -> str:
    """A flow list wrapped at 120 columns, continuation lines under the first item."""
    lines, line = [], "["
    for i, name in enumerate(names):
        item = name + ("]" if i == len(names) - 1 else ", ")
        if len(line) + len(item) + indent > 118 and line != "[":
            lines.append(line.rstrip())
            line = ""
        line += item
    lines.append(line)
    return ("\n" + " " * indent).join(lines)


def _command_params(spec: RobotSpec) -> str:
    """What differs between a legged robot (IMU, velocity commands) and a fixed-base arm (pose targets)."""
    if not spec.floating_base:
        return f"""\
    base_frame: {spec.base_body}  # target_pose (and object_pose) must be in this frame (the arm's base)
{_gripper_params(spec)}"""
    return f"""\
    cmd_timeout: 0.5  # [s] a cmd_vel older than this counts as zero
    max_tilt: {round(NODE_TILT_FRACTION * spec.fall_tilt, 2)!r}  # [rad] beyond it the robot is falling -> DAMPING
    height_map_timeout: 0.2  # [s] perceptive policies: ground_heights older than this while RUNNING are a fault
"""


def _gripper_params(spec: RobotSpec) -> str:
    """A hand's topic and, for grasping policies, the perception watchdog; nothing for an arm without one."""
    if not spec.gripper_joints:
        return ""
    return f"""\
    gripper_topic: {GRIPPER_TOPIC}  # grasping policies: {", ".join(spec.gripper_joints)} targets
    object_timeout: 0.5  # [s] grasping policies: an object_pose older than this while RUNNING is a fault
"""


def node_params(spec: RobotSpec) -> str:
    order = driver_joint_order(spec)
    speeds = sorted({round(rate, 2) for rate in spec.max_target_rates().values()}, reverse=True)
    rates = " / ".join(f"{s:g}" for s in speeds)
    inputs = "joint_states and imu" if spec.floating_base else "joint_states"
    key = "    output_joint_names: "
    return f"""\
# policy_node parameters for the {spec.name} (robot or simulation), generated from its robot spec by
# `sim2real ros-config {spec.name}`: edit the spec, not this file. Everything about the policy itself (joint order,
# default pose, scales, gains, control rate) comes from the ONNX metadata. The policy file is not set here: pass it
# with `-p policy_path:=...` (or the launch file's `policy` argument), in any argument order.
policy_node:
  ros__parameters:
    # ros2_control forward_position_controller; its `joints` list must match output_joint_names (the MJCF's order).
    target_topic: {TARGET_TOPIC}
{key}{_yaml_list(order, len(key) + 1)}
    stand_time: 2.0  # [s] soft start from the measured to the default pose
    state_timeout: 0.1  # [s] watchdog on {inputs}
{_command_params(spec)}\
    max_target_rate: 0.0  # [rad/s] target slew limit; 0 = target_rate_fraction x the policy's velocity_limit
    target_rate_fraction: {float(spec.target_rate_fraction)!r}  # {rates} rad/s by joint group
    damping_rate: 1.0  # [rad/s] DAMPING slews from the last target to the held pose (0.02 rad per tick)
    reading_margin: 0.1  # [rad] a joint reading beyond its limits by more than this is a fault
    joint_limit_margin: 0.02  # [rad] keep targets this far inside the joint limits
    status_rate: 5.0  # [Hz] ~/status heartbeat (also published on every mode change)
    onnx_threads: 1
"""


def bridge_params(spec: RobotSpec) -> str:
    order = driver_joint_order(spec)
    key = "    command_joint_names: "
    keyframe = "home" if _has_keyframe(spec, "home") else ""
    mjcf = spec.mjcf_path.relative_to(REPO_ROOT).as_posix()
    return f"""\
# mujoco_bridge parameters: the simulated {spec.name} driver, generated by `sim2real ros-config {spec.name}`. Same
# topics and joint order as the real robot setup.
mujoco_bridge:
  ros__parameters:
    mjcf_path: ""  # empty: the policy's robot.mjcf ({mjcf}) found from the working directory
    target_topic: {TARGET_TOPIC}
{key}{_yaml_list(order, len(key) + 1)}
    publish_rate: 200.0  # [Hz] {"joint_states and imu" if spec.floating_base else "joint_states"}
    physics_dt: 0.0  # [s] 0 = the policy's physics_dt
    initial_keyframe: {keyframe or '""'}  # {"the MJCF's home keyframe" if keyframe else "none: the default pose"}
    hold_initial_pose: true
{_bridge_gantry(spec)}{_bridge_gripper(spec)}"""


def _bridge_gantry(spec: RobotSpec) -> str:
    if not spec.floating_base:
        return ""
    if spec.gantry:
        return "    gantry: true  # the base hangs where it starts until ~/release (lower the robot, then enable)\n"
    return "    gantry: false  # the base is free from the start\n"


def _bridge_gripper(spec: RobotSpec) -> str:
    if not spec.gripper_joints:
        return ""
    return f"""\
    gripper_topic: {GRIPPER_TOPIC}  # grasping policies: hand targets (and a cube on object_pose)
"""


def config_files(spec: RobotSpec, out_dir: Path = CONFIG_DIR) -> dict[Path, str]:
    """Path -> text of both parameter files of ``spec``."""
    return {out_dir / f"{spec.name}.yaml": node_params(spec), out_dir / f"{spec.name}_sim.yaml": bridge_params(spec)}


def write_config_files(spec: RobotSpec, out_dir: Path = CONFIG_DIR) -> list[Path]:
    files = config_files(spec, out_dir)
    for path, text in files.items():
        path.write_text(text)
    return list(files)
