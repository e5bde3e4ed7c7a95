"""A MuJoCo robot that behaves like the robot's ROS driver, to rehearse the policy node over real ROS 2.

It publishes ``joint_states`` and ``imu`` at ``publish_rate`` and takes joint position targets
(std_msgs/Float64MultiArray, ``command_joint_names`` order) on ``target_topic``, turning them into torques
with the policy metadata's PD gains at the physics rate, clamped to ``effort_limit``. It also publishes the
simulator's ground-truth base pose on ``~/base_pose`` (geometry_msgs/PoseStamped) for tests.

Needs ``mujoco`` (a simulator dependency; the policy node never imports this module).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy._rclpy_pybind11 import RCLError
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray

from sim2real_deploy.policy_file import PolicyFileError, PolicyMetadata, read_metadata
from sim2real_deploy.policy_node import declare_parameters
from sim2real_deploy.ros_main import run_node

NODE_NAME = "mujoco_bridge"
PARAMETERS: dict[str, Any] = {
    "policy_path": "",  # gains, joint names and physics_dt come from the policy's metadata
    "mjcf_path": "",  # empty: the metadata's robot.mjcf, searched from the working directory upwards
    "target_topic": "joint_targets",
    "command_joint_names": [],  # joint order of incoming targets; empty = policy order
    "publish_rate": 200.0,  # [Hz] joint_states and imu
    "physics_dt": 0.0,  # [s] 0 = the metadata's physics_dt
    "initial_keyframe": "home",
    "hold_initial_pose": True,  # PD-hold the keyframe pose until the first target, like a locked driver
}


def find_mjcf(meta: PolicyMetadata, mjcf_path: str) -> Path:
    if mjcf_path:
        return Path(mjcf_path)
    relative = meta.raw["robot"]["mjcf"]
    for base in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
        if (base / relative).is_file():
            return base / relative
    raise PolicyFileError(f"MJCF '{relative}' not found from {Path.cwd()}: set parameter 'mjcf_path'")


def load_model(path: Path) -> mujoco.MjModel:
    """The robot MJCF on a flat floor."""
    spec = mujoco.MjSpec.from_file(str(path))
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    return spec.compile()


class MujocoBridge(Node):
    def __init__(self, **kwargs: Any):
        super().__init__(NODE_NAME, **kwargs)
        p = declare_parameters(self, PARAMETERS)
        if not p["policy_path"]:
            raise PolicyFileError("parameter 'policy_path' is empty: the bridge takes its PD gains from the policy")
        meta = read_metadata(p["policy_path"])
        self.model = load_model(find_mjcf(meta, p["mjcf_path"]))
        self.model.opt.timestep = p["physics_dt"] or meta.physics_dt
        self.data = mujoco.MjData(self.model)
        self._setup_joints(meta, list(p["command_joint_names"]))
        self._reset(p["initial_keyframe"])
        self.q_des = self.data.qpos[self.qadr].copy() if p["hold_initial_pose"] else None
        self.lock = threading.Lock()
        self.publish_every = max(1, round(1.0 / (p["publish_rate"] * self.model.opt.timestep)))
        self.joint_pub = self.create_publisher(JointState, "joint_states", 10)
        self.imu_pub = self.create_publisher(Imu, "imu", 10)
        self.pose_pub = self.create_publisher(PoseStamped, "~/base_pose", 10)
        self.create_subscription(Float64MultiArray, p["target_topic"], self._on_target, 10)
        self.running = True
        self.paused = False  # tests: True stops publishing and physics, like a hung driver
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        self.get_logger().info(
            f"MuJoCo {Path(p['policy_path']).name}: {len(self.names)} joints, physics "
            f"{1 / self.model.opt.timestep:.0f} Hz, publishing every {self.publish_every} steps"
        )

    def _setup_joints(self, meta: PolicyMetadata, command_names: list[str]) -> None:
        names = meta.joint_names
        self.command_index = np.array([names.index(n) for n in command_names]) if command_names else None
        jids = [mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in names]
        if min(jids) < 0:
            raise PolicyFileError(f"joints {[n for n, j in zip(names, jids, strict=True) if j < 0]} not in the MJCF")
        self.qadr = self.model.jnt_qposadr[jids]
        self.vadr = self.model.jnt_dofadr[jids]
        by_joint = {int(self.model.actuator_trnid[a, 0]): a for a in range(self.model.nu)}
        self.act = np.array([by_joint[j] for j in jids])
        self.kp, self.kd = meta.joint_array("stiffness"), meta.joint_array("damping")
        self.effort = meta.joint_array("effort_limit")
        # Publish in MJCF order, like a driver that knows nothing of the policy's order.
        order = np.argsort(self.qadr)
        self.names, self.pub_order = [names[i] for i in order], order
        self.imu_quat = self._sensor_adr("imu_quat")
        self.imu_gyro = self._sensor_adr("imu_gyro")
        self.imu_acc = self._sensor_adr("imu_acc")

    def _sensor_adr(self, name: str) -> slice:
        sid = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SENSOR, name)
        adr = self.model.sensor_adr[sid]
        return slice(adr, adr + self.model.sensor_dim[sid])

    def _reset(self, keyframe: str) -> None:
        key = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe) if keyframe else -1
        if key >= 0:
            mujoco.mj_resetDataKeyframe(self.model, self.data, key)
        mujoco.mj_forward(self.model, self.data)

    def _on_target(self, msg: Float64MultiArray) -> None:
        target = np.asarray(msg.data, dtype=np.float64)
        if target.shape != (len(self.names),) or not np.all(np.isfinite(target)):
            self.get_logger().error(f"ignoring target of shape {target.shape} (finite: {np.all(np.isfinite(target))})")
            return
        if self.command_index is not None:
            ordered = np.empty_like(target)
            ordered[self.command_index] = target
            target = ordered
        with self.lock:
            self.q_des = target

    # ----- physics thread, paced to wall-clock time -----
    def _loop(self) -> None:
        dt = self.model.opt.timestep
        next_time, steps = time.monotonic(), 0
        while self.running and rclpy.ok(context=self.context):
            if self.paused:
                time.sleep(dt)
                next_time = time.monotonic()
                continue
            self._physics_step()
            steps += 1
            if steps % self.publish_every == 0:
                try:
                    self._publish()
                except RCLError:  # context shut down (SIGINT/SIGTERM) between the check and the publish
                    if rclpy.ok(context=self.context):
                        raise
                    return
            next_time += dt
            delay = next_time - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.1:  # far behind (loaded machine): slow the simulation down instead of bursting
                next_time = time.monotonic()

    def _physics_step(self) -> None:
        with self.lock:
            q_des = self.q_des
        tau = np.zeros(len(self.qadr))
        if q_des is not None:
            q, dq = self.data.qpos[self.qadr], self.data.qvel[self.vadr]
            tau = np.clip(self.kp * (q_des - q) - self.kd * dq, -self.effort, self.effort)
        self.data.ctrl[self.act] = tau
        mujoco.mj_step(self.model, self.data)

    def _publish(self) -> None:
        stamp = self.get_clock().now().to_msg()
        d, order = self.data, self.pub_order
        js = JointState(
            name=self.names,
            position=d.qpos[self.qadr][order].tolist(),
            velocity=d.qvel[self.vadr][order].tolist(),
            effort=d.ctrl[self.act][order].tolist(),
        )
        js.header.stamp, js.header.frame_id = stamp, "base_link"
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, "imu"
        w, x, y, z = d.sensordata[self.imu_quat]
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = x, y, z, w
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = d.sensordata[self.imu_gyro]
        acc = d.sensordata[self.imu_acc]
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = acc
        self.joint_pub.publish(js)
        self.imu_pub.publish(imu)
        pose = PoseStamped()
        pose.header.stamp, pose.header.frame_id = stamp, "world"
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = d.qpos[0:3]
        pose.pose.orientation.w, pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z = d.qpos[3:7]
        self.pose_pub.publish(pose)

    def destroy_node(self) -> None:
        self.running = False
        self.thread.join(timeout=1.0)
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    return run_node(MujocoBridge, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
