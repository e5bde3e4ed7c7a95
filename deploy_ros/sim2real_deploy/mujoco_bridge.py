"""A MuJoCo robot that behaves like the robot's ROS driver, to rehearse the policy node over real ROS 2.

It publishes ``joint_states`` (and for a floating base ``imu``) at ``publish_rate`` and takes joint position targets
(std_msgs/Float64MultiArray, ``command_joint_names`` order) on ``target_topic``. The robot is
:class:`~sim2real_deploy.mujoco_robot.MujocoRobot`: the policy metadata's actuator model (the motor training and
sim-to-sim use) turns targets into torques at the physics rate. It also publishes the simulator's ground truth for
tests (geometry_msgs/PoseStamped): a floating base's pose in the world on ``~/base_pose``; a fixed-base arm's end
effector (``robot.ee_body``) in its base frame on ``~/ee_pose``. For a grasping policy (``action.gripper``) it also
simulates the hand as the lift check does (finger targets on ``gripper_topic``, moving at the gripper's speed under
the trained PD; the finger joints in ``joint_states``) and a cube on the table, whose pose in the base frame it
publishes on ``object_pose``: the stand-in for perception. For a perceptive legged policy (a ``height_scan`` term)
it publishes the ground under the policy's scan points on ``ground_heights`` (std_msgs/Float64MultiArray, ground minus
base height [m], the points' order): a perfect height map, with every joint state.

Needs ``mujoco`` (a simulator dependency; the policy node never imports this module).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy._rclpy_pybind11 import RCLError
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from sim2real_deploy.mujoco_robot import EndEffectorFrame, MujocoRobot
from sim2real_deploy.policy_file import PolicyFileError, read_metadata
from sim2real_deploy.ros_main import declare_parameters, run_node
from sim2real_deploy.sim2sim import lift

NODE_NAME = "mujoco_bridge"
PARAMETERS: dict[str, Any] = {
    "policy_path": "",  # actuator model, gains, joint names and physics_dt come from the policy's metadata
    "mjcf_path": "",  # empty: the metadata's robot.mjcf, searched from the working directory upwards
    "target_topic": "joint_targets",
    "command_joint_names": [],  # joint order of incoming targets; empty = policy order
    "publish_rate": 200.0,  # [Hz] joint_states and imu
    "physics_dt": 0.0,  # [s] 0 = the metadata's physics_dt
    "initial_keyframe": "home",  # MJCF keyframe to start in; empty or absent: the default pose, feet on the floor
    "hold_initial_pose": True,  # hold the initial pose until the first target, like a locked driver
    "gantry": False,  # floating base: held where it starts until ~/release is called (a humanoid's gantry)
    "gripper_topic": "gripper_targets",  # grasping policies: finger position targets (gripper.joints order)
}


class MujocoBridge(Node):
    def __init__(self, **kwargs: Any):
        super().__init__(NODE_NAME, **kwargs)
        p = declare_parameters(self, PARAMETERS)
        if not p["policy_path"]:
            raise PolicyFileError(
                "parameter 'policy_path' is empty: pass -p policy_path:=<policy.onnx> (the bridge takes its motor "
                "model from the policy; a --params-file after -p that sets policy_path overrides it)"
            )
        meta = read_metadata(p["policy_path"])
        extend = lift.add_cube if meta.gripper else None
        self.robot = MujocoRobot.from_metadata(meta, p["mjcf_path"] or None, p["physics_dt"] or None, extend=extend)
        self.end_effector = None if meta.floating_base else EndEffectorFrame(self.robot)
        self.base_frame = meta.raw["robot"].get("base_body", "base_link")
        self.gripper = lift.Gripper(self.robot) if meta.gripper else None
        if self.gripper is None:
            self.robot.reset(keyframe=p["initial_keyframe"])
        else:
            self.cube = self.robot.model.body(lift.CUBE).id
            if p["initial_keyframe"]:  # add_cube drops the MJCF's keyframes (they no longer fit the model)
                self.get_logger().warning(f"keyframe {p['initial_keyframe']!r} ignored with the cube: default pose")
            lift.reset_with_cube(self.robot, self.gripper, lift.nominal_cube(meta))
        names = meta.joint_names
        command_names = list(p["command_joint_names"])
        self.command_index = np.array([names.index(n) for n in command_names]) if command_names else None
        # publish in MJCF order, like a driver that knows nothing of the policy's order
        self.pub_order = np.argsort(self.robot.qpos_adr)
        self.names = [names[i] for i in self.pub_order]
        self.q_des = self.robot.q.copy() if p["hold_initial_pose"] else None
        base = self.robot.base_qpos
        self.gantry = self.robot.data.qpos[base : base + 7].copy() if p["gantry"] and base is not None else None
        self.tau = np.zeros(len(names))
        self.lock = threading.Lock()
        dt = self.robot.model.opt.timestep
        self.publish_every = max(1, round(1.0 / (p["publish_rate"] * dt)))
        self.joint_pub = self.create_publisher(JointState, "joint_states", 10)
        if self.end_effector is None:
            self.imu_pub = self.create_publisher(Imu, "imu", 10)
            self.pose_pub = self.create_publisher(PoseStamped, "~/base_pose", 10)
            if self.robot.scan_points is not None:
                self.ground_pub = self.create_publisher(Float64MultiArray, "ground_heights", 10)
        else:
            self.pose_pub = self.create_publisher(PoseStamped, "~/ee_pose", 10)
        self.create_subscription(Float64MultiArray, p["target_topic"], self._on_target, 10)
        if self.gripper is not None:
            self.finger_names = list(meta.gripper["joints"])
            self.object_pub = self.create_publisher(PoseStamped, "object_pose", 10)
            self.create_subscription(Float64MultiArray, p["gripper_topic"], self._on_gripper, 10)
        if self.gantry is not None:
            self.create_service(Trigger, "~/release", self._on_release)
        self.running = True
        self.paused = False  # tests: True stops publishing and physics, like a hung driver
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        self.get_logger().info(
            f"MuJoCo {Path(p['policy_path']).name}: {len(names)} joints, {meta.actuator_model} motors, physics "
            f"{1 / dt:.0f} Hz, publishing every {self.publish_every} steps"
        )

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

    def _on_release(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self.lock:
            response.success, self.gantry = self.gantry is not None, None
        response.message = "base released" if response.success else "the base was not held"
        return response

    def _on_gripper(self, msg: Float64MultiArray) -> None:
        goal = np.asarray(msg.data, dtype=np.float64)
        if goal.shape != (len(self.finger_names),) or not np.all(np.isfinite(goal)):
            self.get_logger().error(f"ignoring gripper target of shape {goal.shape}")
            return
        with self.lock:
            self.gripper.command(goal)

    # ----- physics thread, paced to wall-clock time -----
    def _loop(self) -> None:
        dt = self.robot.model.opt.timestep
        next_time, steps = time.monotonic(), 0
        while self.running and rclpy.ok(context=self.context):
            if self.paused:
                time.sleep(dt)
                next_time = time.monotonic()
                continue
            with self.lock:
                q_des, gantry = self.q_des, self.gantry
                if self.gripper is not None:
                    self.gripper.apply(dt)
            self.tau = self.robot.physics_step(q_des)
            if gantry is not None:
                self.robot.hold_base(gantry)
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

    def _publish(self) -> None:
        stamp = self.get_clock().now().to_msg()
        robot, order = self.robot, self.pub_order
        names, pos, vel, tau = list(self.names), robot.q[order], robot.qd[order], self.tau[order]
        if self.gripper is not None:  # the fingers, as a Franka Hand's joint_states carries them
            names += self.finger_names
            pos = np.concatenate([pos, self.gripper.position])
            vel = np.concatenate([vel, robot.data.qvel[self.gripper.dof]])
            tau = np.concatenate([tau, np.zeros(len(self.finger_names))])
        js = JointState(name=names, position=pos.tolist(), velocity=vel.tolist(), effort=tau.tolist())
        js.header.stamp, js.header.frame_id = stamp, self.base_frame
        self.joint_pub.publish(js)
        if self.end_effector is not None:
            position, (w, x, y, z) = self.end_effector.ee_pose()
            self.pose_pub.publish(_pose(stamp, self.base_frame, position, (x, y, z, w)))
            if self.gripper is not None:
                position, (w, x, y, z) = self.end_effector.body_pose(self.cube)
                self.object_pub.publish(_pose(stamp, self.base_frame, position, (x, y, z, w)))
            return
        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, "imu"
        w, x, y, z = robot.base_quat
        imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = x, y, z, w
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = robot.base_gyro
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = robot.base_accel()
        self.imu_pub.publish(imu)
        base = robot.data.qpos[robot.base_qpos : robot.base_qpos + 3]
        self.pose_pub.publish(_pose(stamp, "world", base, (x, y, z, w)))
        if robot.scan_points is not None:
            self.ground_pub.publish(Float64MultiArray(data=robot.ground_below_scan().tolist()))

    def destroy_node(self) -> None:
        self.running = False
        self.thread.join(timeout=1.0)
        super().destroy_node()


def _pose(stamp: Any, frame: str, position: Any, quat_xyzw: Any) -> PoseStamped:
    pose = PoseStamped()
    pose.header.stamp, pose.header.frame_id = stamp, frame
    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(v) for v in position)
    o = pose.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quat_xyzw)
    return pose


def main(args: list[str] | None = None) -> int:
    return run_node(MujocoBridge, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
