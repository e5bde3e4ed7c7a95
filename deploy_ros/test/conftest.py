"""Test harness: real rclpy (Fast DDS) in an isolated domain, fixture policies, and small helper nodes.

Run with the ROS venv: ``.venv-ros/bin/python -m pytest deploy_ros/test -q`` (see scripts/setup_ros.sh).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

# Before rclpy is initialised: ament_index needs a prefix, and a private domain on loopback keeps
# concurrent test runs (and other people's ROS traffic) apart.
os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")

from fixture_policy import JOINT_NAMES, REPO, default_pose, write_foreign, write_policy  # noqa: E402

PACKAGE = REPO / "deploy_ros"
BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def policy_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("policies")


@pytest.fixture(scope="session")
def fixture_policy(policy_dir) -> Path:
    return write_policy(policy_dir / "go2_fixture.onnx")


@pytest.fixture(scope="session")
def foreign_policy(policy_dir) -> Path:
    return write_foreign(policy_dir / "foreign.onnx")


@pytest.fixture(scope="session")
def joint_limits(fixture_policy) -> np.ndarray:
    from sim2real_deploy.policy_file import read_metadata

    return read_metadata(fixture_policy).joint_array("joint_pos_limits")


@pytest.fixture(scope="session")
def ros_context():
    """One rclpy context (one DDS participant) for every in-process node of the session."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


class Spinner:
    """A single-threaded executor spinning the given nodes in a background thread."""

    def __init__(self, context, nodes: list):
        from rclpy.executors import SingleThreadedExecutor

        self.executor = SingleThreadedExecutor(context=context)
        self.nodes = nodes
        for node in nodes:
            self.executor.add_node(node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.stop = False
        self.thread.start()

    def _spin(self) -> None:
        while not self.stop:
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self.stop = True
        self.thread.join(timeout=2.0)
        for node in self.nodes:
            self.executor.remove_node(node)
            node.destroy_node()
        self.executor.shutdown()


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def make_probe(
    context,
    target_topic: str = "joint_targets",
    policy_node: str = "policy_node",
    pose_topic: str = "/mujoco_bridge/base_pose",
):
    """The operator's side: records status, targets, joint_states and the sim's ground-truth pose (a legged
    robot's base, an arm's end effector: ``pose_topic``); sends commands; calls services."""
    from geometry_msgs.msg import PoseStamped, Twist
    from rclpy.node import Node
    from rclpy.qos import QoSDurabilityPolicy, QoSProfile, qos_profile_sensor_data
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Bool, Float64MultiArray, String
    from std_srvs.srv import Trigger

    class Probe(Node):
        def __init__(self):
            super().__init__("test_probe", context=context)
            self.lock = threading.Lock()
            self.status: list[tuple[float, dict]] = []
            self.targets: list[tuple[float, np.ndarray]] = []
            self.joint_states: list[tuple[float, JointState]] = []
            self.poses: list[tuple[float, np.ndarray]] = []
            latched = QoSProfile(depth=1, durability=QoSDurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, f"/{policy_node}/status", self._on_status, latched)
            self.target_sub = self.create_subscription(Float64MultiArray, target_topic, self._on_target, 100)
            self.create_subscription(JointState, "joint_states", self._on_js, qos_profile_sensor_data)
            self.create_subscription(PoseStamped, pose_topic, self._on_pose, qos_profile_sensor_data)
            self.cmd_pub = self.create_publisher(Twist, "cmd_vel", 10)
            self.target_pose_pub = self.create_publisher(PoseStamped, "target_pose", 10)
            self.estop_pub = self.create_publisher(Bool, "estop", 10)
            self.services_ = {
                name: self.create_client(Trigger, f"/{policy_node}/{name}") for name in ("enable", "estop", "reset")
            }
            self.services_["release"] = self.create_client(Trigger, "/mujoco_bridge/release")  # a bridge's gantry

        def _on_status(self, msg):
            with self.lock:
                self.status.append((time.monotonic(), json.loads(msg.data)))

        def _on_target(self, msg):
            with self.lock:
                self.targets.append((time.monotonic(), np.array(msg.data)))

        def _on_js(self, msg):
            with self.lock:
                self.joint_states.append((time.monotonic(), msg))
                del self.joint_states[:-50]

        def _on_pose(self, msg):
            p, o = msg.pose.position, msg.pose.orientation
            with self.lock:
                self.poses.append((time.monotonic(), np.array([p.x, p.y, p.z, o.w, o.x, o.y, o.z])))

        @property
        def mode(self) -> str | None:
            with self.lock:
                return self.status[-1][1]["mode"] if self.status else None

        def wait_mode(self, mode: str, timeout: float = 10.0) -> float:
            wait_for(lambda: self.mode == mode, timeout, f"mode {mode} (now {self.mode})")
            with self.lock:
                return next(t for t, s in reversed(self.status) if s["mode"] == mode)

        def call(self, name: str, timeout: float = 10.0):
            client = self.services_[name]
            wait_for(client.service_is_ready, timeout, f"service {name}")
            future = client.call_async(Trigger.Request())
            wait_for(future.done, timeout, f"reply of {name}")
            return future.result()

        def send_cmd(self, vx: float, vy: float = 0.0, wz: float = 0.0) -> None:
            msg = Twist()
            msg.linear.x, msg.linear.y, msg.angular.z = float(vx), float(vy), float(wz)
            self.cmd_pub.publish(msg)

        def send_target_pose(self, position, quat_xyzw, frame: str) -> None:
            msg = PoseStamped()
            msg.header.stamp, msg.header.frame_id = self.get_clock().now().to_msg(), frame
            p, o = msg.pose.position, msg.pose.orientation
            p.x, p.y, p.z = (float(v) for v in position)
            o.x, o.y, o.z, o.w = (float(v) for v in quat_xyzw)
            self.target_pose_pub.publish(msg)

        def targets_since(self, since: float) -> list[tuple[float, np.ndarray]]:
            with self.lock:
                return [(t, x) for t, x in self.targets if t >= since]

    return Probe()


def make_feeder(context, rate: float = 100.0):
    """A stand-in robot driver publishing a standing Go2 state; tests corrupt what it sends."""
    from rclpy.node import Node
    from sensor_msgs.msg import Imu, JointState

    class Feeder(Node):
        def __init__(self):
            super().__init__("test_feeder", context=context)
            self.names = list(JOINT_NAMES)
            self.pos = [default_pose(n) for n in JOINT_NAMES]
            self.quat = (0.0, 0.0, 0.0, 1.0)
            self.send_joints = self.send_imu = True
            self.js_pub = self.create_publisher(JointState, "joint_states", 10)
            self.imu_pub = self.create_publisher(Imu, "imu", 10)
            self.create_timer(1.0 / rate, self._publish)

        def _publish(self) -> None:
            if self.send_joints:
                msg = JointState(
                    name=list(self.names), position=[float(p) for p in self.pos], velocity=[0.0] * len(self.names)
                )
                msg.header.stamp = self.get_clock().now().to_msg()
                self.js_pub.publish(msg)
            if self.send_imu:
                imu = Imu()
                imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = self.quat
                self.imu_pub.publish(imu)

    return Feeder()


def start_node(executable: str, params_file: Path, *overrides: str, log: Path) -> subprocess.Popen:
    """Start a node from its console entry point, as `ros2 run` would, with a YAML parameter file."""
    args = [str(BIN / executable), "--ros-args", "--params-file", str(params_file)]
    for override in overrides:
        args += ["-p", override]
    return subprocess.Popen(args, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=REPO)


def stop_node(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(2)  # SIGINT: rclpy shuts down cleanly
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def assert_in_limits(targets, limits: np.ndarray, order: list[str] | None = None) -> None:
    """Every published target within the joint limits (targets in ``order``, default policy order)."""
    if order is not None:
        limits = limits[[JOINT_NAMES.index(n) for n in order]]
    for _, target in targets:
        assert np.all(np.isfinite(target)) and target.shape == (len(limits),)
        assert np.all(target >= limits[:, 0] - 1e-9) and np.all(target <= limits[:, 1] + 1e-9), target
