"""rclpy shell around PolicyController: parameters, topics, services and the control timer.

Topics (all relative, so namespaces and remaps apply):
  sub  joint_states (sensor_msgs/JointState), estop (std_msgs/Bool, true = e-stop), and by the policy's command
       interface: imu (sensor_msgs/Imu) and cmd_vel (geometry_msgs/Twist) for a legged base_velocity policy;
       target_pose (geometry_msgs/PoseStamped, in ``base_frame``) for a fixed-base ee_pose arm, and object_pose
       (geometry_msgs/PoseStamped, in ``base_frame``: perception) for a grasping one; ground_heights
       (std_msgs/Float64MultiArray: ground minus base height at the policy's scan points, in their order) for a
       perceptive legged one.
       Best effort, so best-effort publishers are heard too (estop also reliable)
  pub  <target_topic> (std_msgs/Float64MultiArray, ``output_joint_names`` order), ~/status (std_msgs/String, JSON);
       a grasping policy's finger targets on <gripper_topic> (std_msgs/Float64MultiArray, ``action.gripper.joints``
       order: the open or the closed positions), for a forward position controller on the fingers
  srv  ~/enable, ~/estop, ~/reset (std_srvs/Trigger)
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from typing import Any

from geometry_msgs.msg import PoseStamped, Twist
from rclpy.node import Node
from rclpy.qos import QoSDurabilityPolicy, QoSProfile, QoSReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Bool, Float64MultiArray, String
from std_srvs.srv import Trigger

from sim2real_deploy.controller import ControllerConfig, Mode, PolicyController
from sim2real_deploy.policy_file import OnnxPolicy, PolicyFileError
from sim2real_deploy.ros_main import declare_parameters, run_node

NODE_NAME = "policy_node"
# Every parameter the node declares, with its default; parameter files may name only these.
PARAMETERS: dict[str, Any] = {
    "policy_path": "",
    "target_topic": "joint_targets",
    "output_joint_names": [],  # forward controller's joint order; empty = policy order
    "stand_time": 2.0,
    "state_timeout": 0.1,
    "cmd_timeout": 0.5,
    "max_tilt": 0.7,
    "max_target_rate": 0.0,
    "target_rate_fraction": 0.5,
    "damping_rate": 1.0,
    "joint_limit_margin": 0.0,
    "reading_margin": 0.1,
    "status_rate": 5.0,
    "onnx_threads": 1,
    "base_frame": "",  # ee_pose: the frame target_pose and object_pose must be in; empty = robot.base_body
    "gripper_topic": "gripper_targets",  # grasping policies: finger position targets
    "object_timeout": 0.5,  # [s] grasping policies: an older object_pose while RUNNING is a fault
    "height_map_timeout": 0.2,  # [s] perceptive policies: older ground_heights while RUNNING are a fault
}


class PolicyNode(Node):
    def __init__(self, **kwargs: Any):
        super().__init__(NODE_NAME, **kwargs)
        p = declare_parameters(self, PARAMETERS)
        if not p["policy_path"]:
            raise PolicyFileError(
                "parameter 'policy_path' is empty: pass the exported policy with -p policy_path:=<policy.onnx> "
                "(ROS applies --ros-args in order: a --params-file after -p that sets policy_path overrides it)"
            )
        self.policy = OnnxPolicy(p["policy_path"], intra_op_threads=int(p["onnx_threads"]))
        meta = self.policy.metadata
        config = ControllerConfig(
            stand_time=p["stand_time"],
            state_timeout=p["state_timeout"],
            cmd_timeout=p["cmd_timeout"],
            max_tilt=p["max_tilt"],
            max_target_rate=p["max_target_rate"],
            target_rate_fraction=p["target_rate_fraction"],
            damping_rate=p["damping_rate"],
            joint_limit_margin=p["joint_limit_margin"],
            reading_margin=p["reading_margin"],
            output_joint_names=list(p["output_joint_names"]),
            object_timeout=p["object_timeout"],
            height_map_timeout=p["height_map_timeout"],
        )
        self.controller = PolicyController(meta, self.policy, config, log=self._log_transition)
        self.output_names = config.output_joint_names or meta.joint_names
        self.timing: deque | None = None  # (tick start, joint_states stamp, publish done), for the benchmark
        self._joint_stamp = 0.0
        self.base_frame = p["base_frame"] or meta.raw["robot"].get("base_body", "")
        self._ignored_frames: set[tuple[str, str]] = set()
        self._make_interfaces(p["target_topic"], p["gripper_topic"])
        self._status_every = max(1, round(1.0 / (p["status_rate"] * meta.control_dt))) if p["status_rate"] > 0 else 0
        self._ticks = 0
        self._last_mode = self.controller.mode
        self.timer = self.create_timer(meta.control_dt, self._tick)
        self.get_logger().info(
            f"policy {p['policy_path']} ({meta.raw['task_id']}): {meta.num_joints} joints, obs {meta.obs_dim}, "
            f"{1.0 / meta.control_dt:.0f} Hz; targets on '{self.target_pub.topic_name}'; mode WAITING"
        )

    def _make_interfaces(self, target_topic: str, gripper_topic: str) -> None:
        self.target_pub = self.create_publisher(Float64MultiArray, target_topic, 1)
        self.gripper_pub = None
        if self.controller.finger_names:
            self.gripper_pub = self.create_publisher(Float64MultiArray, gripper_topic, 1)
        latched = QoSProfile(depth=1, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
        self.status_pub = self.create_publisher(String, "~/status", latched)
        # Best-effort subscriptions match both best-effort and reliable publishers (a reliable one would not hear a
        # best-effort e-stop or teleop node at all).
        self.create_subscription(JointState, "joint_states", self._on_joint_state, qos_profile_sensor_data)
        best_effort = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.BEST_EFFORT)
        if self.controller.interface.setpoint:
            self.create_subscription(PoseStamped, "target_pose", self._on_target_pose, best_effort)
            if "object_pose" in self.controller.perceived:
                self.create_subscription(PoseStamped, "object_pose", self._on_object_pose, best_effort)
        else:
            self.create_subscription(Imu, "imu", self._on_imu, qos_profile_sensor_data)
            self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, best_effort)
            if "ground_heights" in self.controller.perceived:
                self.create_subscription(Float64MultiArray, "ground_heights", self._on_ground_heights, best_effort)
        # e-stop twice: best effort hears best-effort publishers; reliable keeps a reliable publisher's single
        # message from being dropped (a best-effort reader downgrades that link to best effort too)
        self.create_subscription(Bool, "estop", self._on_estop, best_effort)
        self.create_subscription(Bool, "estop", self._on_estop, QoSProfile(depth=10))
        self.create_service(Trigger, "~/enable", self._srv(lambda: self.controller.enable(time.monotonic())))
        self.create_service(Trigger, "~/estop", self._srv(lambda: self.controller.estop("e-stop service")))
        self.create_service(Trigger, "~/reset", self._srv(lambda: self.controller.reset(time.monotonic())))

    def _srv(self, action):
        def callback(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            response.success, response.message = action()
            self.get_logger().info(f"service: {response.message}")
            if response.success:
                self._tick_status()  # e-stop is applied at the next tick; enable/reset now
            return response

        return callback

    # ----- subscriptions: hand plain arrays to the controller -----
    def _on_joint_state(self, msg: JointState) -> None:
        self._joint_stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.controller.set_joint_state(msg.name, msg.position, msg.velocity, time.monotonic())

    def _on_imu(self, msg: Imu) -> None:
        o, w = msg.orientation, msg.angular_velocity
        self.controller.set_imu((o.x, o.y, o.z, o.w), (w.x, w.y, w.z), time.monotonic())

    def _on_cmd_vel(self, msg: Twist) -> None:
        self.controller.set_command(msg.linear.x, msg.linear.y, msg.angular.z, time.monotonic())

    def _in_base_frame(self, msg: PoseStamped, topic: str) -> bool:
        """A pose in another frame is not meant for this robot's base: never guess a transform (logged once)."""
        frame = msg.header.frame_id
        if frame and frame != self.base_frame:
            if (topic, frame) not in self._ignored_frames:
                self._ignored_frames.add((topic, frame))
                self.get_logger().error(f"ignoring {topic} in frame '{frame}': poses are in '{self.base_frame}'")
            return False
        return True

    def _on_target_pose(self, msg: PoseStamped) -> None:
        if self._in_base_frame(msg, "target_pose"):
            p, o = msg.pose.position, msg.pose.orientation
            self.controller.set_pose_target((p.x, p.y, p.z), (o.x, o.y, o.z, o.w), time.monotonic())

    def _on_object_pose(self, msg: PoseStamped) -> None:
        if self._in_base_frame(msg, "object_pose"):
            p = msg.pose.position
            self.controller.set_object_position((p.x, p.y, p.z), time.monotonic())

    def _on_ground_heights(self, msg: Float64MultiArray) -> None:
        self.controller.set_ground_heights(msg.data, time.monotonic())

    def _on_estop(self, msg: Bool) -> None:
        if msg.data:
            self.controller.estop("e-stop topic")

    # ----- control tick -----
    def _tick(self) -> None:
        start = time.time()
        target = self.controller.step(time.monotonic())
        if target is not None:
            self.target_pub.publish(Float64MultiArray(data=target.tolist()))
            if self.gripper_pub is not None and self.controller.gripper_target is not None:
                self.gripper_pub.publish(Float64MultiArray(data=self.controller.gripper_target.tolist()))
        if self.timing is not None and target is not None:
            self.timing.append((start, self._joint_stamp, time.time()))
        self._ticks += 1
        if self.controller.mode != self._last_mode or (self._status_every and self._ticks % self._status_every == 0):
            self._tick_status()

    def _tick_status(self) -> None:
        ctrl = self.controller
        self._last_mode = ctrl.mode
        status = {
            "mode": ctrl.mode.value,
            "reason": ctrl.reason,
            "command": None if (command := ctrl.command(time.monotonic())) is None else command.tolist(),
            "joint_names": self.output_names,
        }
        self.status_pub.publish(String(data=json.dumps(status)))

    def _log_transition(self, text: str) -> None:
        logger = self.get_logger()
        (logger.warning if text.split("-> ")[-1].startswith(Mode.DAMPING.value) else logger.info)(text)

    def enable_timing(self, size: int = 100_000) -> None:
        self.timing = deque(maxlen=size)


def main(args: list[str] | None = None) -> int:
    return run_node(PolicyNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
