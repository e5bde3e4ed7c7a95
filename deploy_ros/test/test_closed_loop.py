"""Closed loop over real ROS 2: mujoco_bridge and policy_node as separate processes started from their
console entry points with the shipped parameter files (config/<robot>_sim.yaml, config/<robot>.yaml), as
sim.launch.py does: the Go2 and the G1 walking on cmd_vel, the Panda reaching target poses and lifting a cube."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import PACKAGE, REPO, Spinner, assert_in_limits, make_probe, start_node, stop_node, wait_for
from fixture_policy import default_pose
from std_msgs.msg import Bool, Float64MultiArray

CONFIG = PACKAGE / "config"
# SIM2REAL_POLICY=path runs the walking test on another export (e.g. a fresh one before it is shipped).
SHIPPED_POLICY = Path(os.environ.get("SIM2REAL_POLICY", REPO / "assets/policies/go2_flat/policy.onnx")).resolve()
# SIM2REAL_G1_POLICY=path likewise for the G1
G1_POLICY = Path(os.environ.get("SIM2REAL_G1_POLICY", REPO / "assets/policies/g1_flat/policy.onnx")).resolve()
ROUGH_POLICY = REPO / "assets/policies/go2_rough/policy.onnx"
REACH_POLICY = REPO / "assets/policies/panda_reach/policy.onnx"
LIFT_POLICY = REPO / "assets/policies/panda_lift/policy.onnx"
STAND_TIME = 1.0
# 5x the shipped 0.1 s: at 0.25 s a load stall of the 2-core CI machine (imu 0.252 s old, sessions 14 and 16)
# damped a walking robot mid-test; test_ros_safety.py times the watchdog tightly in-process
STATE_TIMEOUT = 0.5


def yaml_params(name: str, node: str) -> dict:
    return yaml.safe_load((CONFIG / name).read_text())[node]["ros__parameters"]


OUTPUT_ORDER = yaml_params("go2.yaml", "policy_node")["output_joint_names"]
TARGET_TOPIC = yaml_params("go2.yaml", "policy_node")["target_topic"]


@contextlib.contextmanager
def simulation(ros_context, policy: Path, tmp_path: Path, robot: str = "go2"):
    """Bridge + policy node processes and an in-process probe; prints the node logs on failure."""
    logs = {name: tmp_path / f"{name}.log" for name in ("bridge", "policy")}
    pose_topic = "/mujoco_bridge/" + ("base_pose" if robot != "panda" else "ee_pose")
    probe = make_probe(ros_context, target_topic=TARGET_TOPIC, pose_topic=pose_topic)
    spinner = Spinner(ros_context, [probe])
    node = start_node(
        "policy_node",
        CONFIG / f"{robot}.yaml",
        f"policy_path:={policy}",
        f"stand_time:={STAND_TIME}",
        f"state_timeout:={STATE_TIMEOUT}",
        log=logs["policy"],
    )
    # Start the robot only once the probe is matched to the policy node, so it sees the whole soft start.
    wait_for(lambda: probe.mode == "WAITING" and probe.target_sub.get_publisher_count() > 0, 60, "policy node")
    bridge = start_node("mujoco_bridge", CONFIG / f"{robot}_sim.yaml", f"policy_path:={policy}", log=logs["bridge"])
    try:
        yield bridge, probe
    except BaseException:
        for name, path in logs.items():
            print(f"----- {name} log -----\n{path.read_text()[-3000:]}")
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(bridge.pid, signal.SIGCONT)
        stop_node(node)
        stop_node(bridge)
        spinner.close()


def measured(probe, names: list[str]) -> np.ndarray:
    with probe.lock:
        msg = probe.joint_states[-1][1]
    return np.array([msg.position[list(msg.name).index(n)] for n in names])


def test_fixture_policy_closed_loop(ros_context, fixture_policy, joint_limits, tmp_path):
    """Soft start reaches the default pose; RUNNING publishes in-limit targets at 50 Hz; the watchdog trips."""
    default = np.array([default_pose(n) for n in OUTPUT_ORDER])
    with simulation(ros_context, fixture_policy, tmp_path) as (bridge, probe):
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.5, 10, "soft start")
        wait_for(lambda: probe.joint_states, 10, "probe matched to joint_states")  # discovery is per endpoint
        first, last = probe.targets[0][1], probe.targets[-1][1]
        assert np.abs(first - default).max() > 0.1  # started from the measured (keyframe) pose, not default
        assert np.allclose(last, default, atol=1e-6)
        # Kp 25 sags under the robot's weight (rear calves ~0.35 rad); the hips carry no load.
        error = np.abs(measured(probe, OUTPUT_ORDER) - default)
        assert error.max() < 0.45 and error[0::3].max() < 0.1, error

        assert probe.call("enable").success
        t_run = probe.wait_mode("RUNNING")
        time.sleep(2.0)
        running = [(t, x) for t, x in probe.targets_since(t_run + 0.1) if t < t_run + 2.0]
        periods = np.diff([t for t, _ in running])
        assert len(running) > 0.75 * 1.9 / 0.02 and abs(np.median(periods) - 0.02) < 0.004, periods
        assert_in_limits(probe.targets, joint_limits, OUTPUT_ORDER)
        assert probe.mode == "RUNNING" and probe.poses[-1][1][2] > 0.15  # still up

        # Watchdog: the driver hangs (SIGSTOP) -> DAMPING within the timeout; resuming does not clear it.
        stopped = time.monotonic()
        os.kill(bridge.pid, signal.SIGSTOP)
        t_damp = probe.wait_mode("DAMPING", timeout=5)
        # Typically timeout + 20 ms; the slack covers scheduler stalls of this shared 2-core machine
        # (test_ros_safety.py checks the timing tightly in-process).
        assert t_damp - stopped < STATE_TIMEOUT + 1.0, t_damp - stopped
        os.kill(bridge.pid, signal.SIGCONT)
        time.sleep(0.5)
        assert probe.mode == "DAMPING"
        assert probe.call("reset").success
        probe.wait_mode("STANDING")
        assert_in_limits(probe.targets, joint_limits, OUTPUT_ORDER)


@pytest.mark.parametrize("robot", ["go2", "g1", "go2_rough"])
def test_shipped_policy_walks(ros_context, tmp_path, robot):
    """The trained walking policy soft-starts, walks forward on cmd_vel with its base upright (above a quarter of the
    way from its fall height to its standing height, the robot's own rule from the metadata) and stops on a zero
    command; every target stays inside the joint limits."""
    from sim2real_deploy.policy_file import read_metadata

    policy = {"go2": SHIPPED_POLICY, "g1": G1_POLICY, "go2_rough": ROUGH_POLICY}[robot]
    robot = robot.removesuffix("_rough")  # the rough policy runs on the same robot, with the same parameters
    if not policy.is_file():
        pytest.xfail(f"shipped policy {policy} not exported yet (train and export the {robot} flat policy first)")
    meta = read_metadata(policy)
    fall = meta.raw["robot"]["fall"]
    upright = fall["min_base_height"] + 0.25 * (fall["standing_height"] - fall["min_base_height"])
    order = yaml_params(f"{robot}.yaml", "policy_node")["output_joint_names"]
    limits = meta.joint_array("joint_pos_limits")[[meta.joint_names.index(n) for n in order]]
    with simulation(ros_context, policy, tmp_path, robot) as (bridge, probe):
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.3, 10, "soft start")
        wait_for(lambda: probe.poses, 10, "probe matched to base_pose")
        if yaml_params(f"{robot}_sim.yaml", "mujoco_bridge")["gantry"]:  # the G1 hangs until lowered
            with probe.lock:
                hanging = [p[2] for _, p in probe.poses]
            assert np.ptp(hanging) < 1e-3, np.ptp(hanging)  # held through the soft start
            assert probe.call("release").success and not probe.call("release").success  # released once
        assert probe.call("enable").success
        t_run = probe.wait_mode("RUNNING")
        start = probe.poses[-1][1]
        for _ in range(40):  # 4 s at 0.5 m/s
            probe.send_cmd(0.5)
            time.sleep(0.1)
        walked = probe.poses[-1][1]
        for _ in range(30):  # 3 s of zero command
            probe.send_cmd(0.0)
            time.sleep(0.1)
        with probe.lock:
            settle = np.array([(t, p[0]) for t, p in probe.poses if t > time.monotonic() - 2.0])
            heights = [p[2] for t, p in probe.poses if t >= t_run]
        assert walked[0] - start[0] > 0.5, (start, walked)
        assert abs(walked[1] - start[1]) < 0.5
        # Base never dropped while the policy ran (the soft start before it may sag on Kp 25; its test is above).
        assert min(heights) > upright, (min(heights), upright)
        # Stopped: the last 2 s drift forward at under a quarter of the walking speed. The slope of a line fit, not
        # the spread: the G1 keeps stepping in place, rocking +-0.1 m (1.5 s period) at zero command (session 19).
        drift_speed, _ = np.polyfit(settle[:, 0], settle[:, 1], 1)
        assert abs(drift_speed) < 0.25 * (walked[0] - start[0]) / 4.0, drift_speed
        assert probe.mode == "RUNNING"
        assert_in_limits(probe.targets, limits)


def test_perceptive_policy_reads_the_bridges_height_map_and_damps_without_it(ros_context, tmp_path):
    """A Go2 fixture with a height-scan term: the bridge's ground_heights (the floor under the scan points, the base
    height below it) reach the node, whose enable needs them; when they stop, the node damps on them first (their
    0.2 s timeout is shorter than the joint states' 0.5 s here)."""
    from fixture_policy import perceptive_metadata, write_policy
    from rclpy.qos import qos_profile_sensor_data

    policy = write_policy(tmp_path / "perceptive.onnx", perceptive_metadata())
    with simulation(ros_context, policy, tmp_path) as (bridge, probe):
        heights: list[np.ndarray] = []
        probe.create_subscription(
            Float64MultiArray, "ground_heights", lambda msg: heights.append(np.array(msg.data)), qos_profile_sensor_data
        )
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.3 and heights and probe.poses, 10, "soft start")
        base_z = probe.poses[-1][1][2]
        assert heights[-1].shape == (9,) and np.allclose(heights[-1], -base_z, atol=0.01), (heights[-1], base_z)
        assert probe.call("enable").success
        probe.wait_mode("RUNNING")
        time.sleep(1.0)
        assert probe.mode == "RUNNING"
        os.kill(bridge.pid, signal.SIGSTOP)
        probe.wait_mode("DAMPING", timeout=5)
        with probe.lock:
            assert "ground_heights stale" in probe.status[-1][1]["reason"], probe.status[-1][1]


def test_shipped_reach_policy_reaches_target_poses(ros_context, tmp_path):
    """The Panda reach policy moves the hand to a PoseStamped target and to the next; a target in another frame is
    ignored; the e-stop holds the arm. Targets stay inside the joint limits throughout."""
    from sim2real_deploy.commands import workspace_center_quat
    from sim2real_deploy.policy_file import read_metadata

    meta = read_metadata(REACH_POLICY)
    limits = meta.joint_array("joint_pos_limits")  # the Panda's output order is the policy's
    down = tuple(workspace_center_quat(meta.raw["commands"]["workspace"]))  # the middle of the trained turns
    targets = [(0.5, 0.0, 0.3), (0.4, 0.15, 0.45)]

    def hand_after(target, seconds: float, frame: str = "link0") -> np.ndarray:
        """Send ``target`` at 10 Hz for at least ``seconds``, then until the hand has settled (a loaded machine
        slows the bridge's physics below real time); the mean hand position over the last 0.5 s."""
        deadline = time.monotonic() + seconds
        while True:
            probe.send_target_pose(target, down, frame)
            time.sleep(0.1)
            with probe.lock:
                recent = np.array([p[:3] for t, p in probe.poses if t > time.monotonic() - 0.5])
            settled = len(recent) > 10 and np.ptp(recent, axis=0).max() < 0.002
            if time.monotonic() > deadline and (settled or time.monotonic() > deadline + 10):
                return recent.mean(axis=0)

    with simulation(ros_context, REACH_POLICY, tmp_path, robot="panda") as (bridge, probe):
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.3, 10, "soft start")
        wait_for(lambda: probe.poses, 10, "probe matched to ee_pose")
        refused = probe.call("enable")
        assert not refused.success and "target pose" in refused.message
        start = hand_after(targets[0], 0.5)
        assert probe.call("enable").success
        probe.wait_mode("RUNNING")
        for target in targets:
            reached = hand_after(target, 4.0)
            assert np.linalg.norm(start - target) > 0.1  # a real move, not a hold
            assert np.linalg.norm(reached - target) < 0.05, (target, reached)
            start = reached
        # a target in the world frame is not a base-frame target: ignored, the hand stays
        held = hand_after((0.6, -0.15, 0.2), 2.0, frame="world")
        assert np.linalg.norm(held - reached) < 0.02, (held, reached)
        assert probe.mode == "RUNNING"
        probe.estop_pub.publish(Bool(data=True))
        t_damp = probe.wait_mode("DAMPING")
        stopped = hand_after((0.6, -0.15, 0.2), 1.5)  # settled: still for 0.5 s
        # DAMPING slews from the last target to the hold pose (the last target, or the measured pose where a joint's
        # target is over 0.1 rad from it) without a step, then holds it constant; the arm comes to rest near where it
        # was (the policy's last target is a few cm from its equilibrium while it still corrects)
        holding = np.array([x for t, x in probe.targets_since(t_damp)])
        max_step = yaml_params("panda.yaml", "policy_node")["damping_rate"] * meta.control_dt
        assert len(holding) > 40 and np.abs(np.diff(holding, axis=0)).max() <= max_step + 1e-9
        assert np.ptp(holding[-20:], axis=0).max() < 1e-9
        assert np.linalg.norm(stopped - held) < 0.05, (stopped, held)  # the policy still corrects when stopped
        assert_in_limits(probe.targets, limits)


def test_shipped_lift_policy_lifts_the_cube_to_the_target(ros_context, tmp_path):
    """The Panda lift policy over rclpy: it grasps the bridge's cube (whose pose reaches it on object_pose, the
    perception stand-in) and holds it within 5 cm of a PoseStamped target 0.35 m up for 1 s, the lift check's
    success, within three attempts, each with a fresh bridge and node. Joint targets stay inside the limits. The
    policy succeeds in 85-90 % of the lift check's trials, so one attempt alone would make a flaky test."""
    from sim2real_deploy.policy_file import read_metadata

    limits = read_metadata(LIFT_POLICY).joint_array("joint_pos_limits")
    held = any(_lift_attempt(ros_context, tmp_path / str(i), limits) for i in range(3))  # stops at the first
    assert held, "the cube was never held at the target in three attempts"


def _lift_attempt(ros_context, tmp_path: Path, limits: np.ndarray, hold_s: float = 1.0) -> bool:
    """One run of the shipped lift policy from the soft start: whether the cube stayed within 5 cm of the target
    for ``hold_s`` within 15 s."""
    from geometry_msgs.msg import PoseStamped

    tmp_path.mkdir()
    target, identity = np.array([0.5, 0.0, 0.35]), (0.0, 0.0, 0.0, 1.0)
    cube: list[tuple[float, np.ndarray]] = []

    def on_cube(msg: PoseStamped) -> None:
        position = np.array([msg.pose.position.x, msg.pose.position.y, msg.pose.position.z])
        cube.append((time.monotonic(), position))

    def held_since() -> float | None:
        """When the cube last came within 5 cm of the target, if it is there now."""
        since = None
        for stamp, position in cube:
            since = (since or stamp) if np.linalg.norm(position - target) <= 0.05 else None
        return since

    with simulation(ros_context, LIFT_POLICY, tmp_path, robot="panda") as (bridge, probe):
        probe.create_subscription(PoseStamped, "/object_pose", on_cube, 10)
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.3 and cube, 10, "soft start and object_pose")
        probe.send_target_pose(target, identity, "link0")
        wait_for(lambda: probe.call("enable").success, 10, "enable")
        probe.wait_mode("RUNNING")
        cube.clear()
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline and not ((since := held_since()) and cube[-1][0] - since >= hold_s):
            probe.send_target_pose(target, identity, "link0")  # the node holds its last target; sent on, as users do
            time.sleep(0.1)
        assert probe.mode == "RUNNING"
        assert_in_limits(probe.targets, limits)
        since = held_since()
        return since is not None and cube[-1][0] - since >= hold_s


def test_grasping_policy_commands_the_hand_and_a_fault_keeps_it_closed(ros_context, tmp_path):
    """A lift fixture whose hand output always closes: the bridge's cube pose reaches the node (enable needs it), the
    soft start leaves the hand alone, the policy closes it, and it stays closed through the e-stop and the reset."""
    from fixture_policy import PANDA_GRIPPER, write_closing_lift_policy

    policy = write_closing_lift_policy(tmp_path / "lift.onnx")
    fingers, gripper_topic = PANDA_GRIPPER["joints"], yaml_params("panda.yaml", "policy_node")["gripper_topic"]
    assert yaml_params("panda_sim.yaml", "mujoco_bridge")["gripper_topic"] == gripper_topic
    with simulation(ros_context, policy, tmp_path, robot="panda") as (bridge, probe):
        hand: list[tuple[float, np.ndarray]] = []
        probe.create_subscription(
            Float64MultiArray, gripper_topic, lambda msg: hand.append((time.monotonic(), np.array(msg.data))), 100
        )
        t_stand = probe.wait_mode("STANDING", timeout=60)
        wait_for(lambda: time.monotonic() > t_stand + STAND_TIME + 0.3 and probe.joint_states, 10, "soft start")
        assert not hand  # nothing to the hand before the policy runs
        probe.send_target_pose((0.5, 0.0, 0.4), (0.0, 1.0, 0.0, 0.0), "link0")
        wait_for(lambda: probe.call("enable").success, 10, "enable (needs the bridge's object_pose)")
        t_run = probe.wait_mode("RUNNING")
        wait_for(lambda: np.abs(measured(probe, fingers)).max() < 0.005, 5, "fingers closed")  # from 4 cm open
        assert hand and all(np.allclose(x, PANDA_GRIPPER["closed"]) for t, x in hand if t > t_run)
        probe.estop_pub.publish(Bool(data=True))
        t_damp = probe.wait_mode("DAMPING")
        assert probe.call("reset").success
        probe.wait_mode("STANDING")
        time.sleep(1.0)
        after = [x for t, x in hand if t > t_damp + 0.1]
        assert len(after) > 20 and all(np.allclose(x, PANDA_GRIPPER["closed"]) for x in after)  # never reopened
        assert np.abs(measured(probe, fingers)).max() < 0.005
