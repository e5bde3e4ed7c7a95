"""The cases an operator's own rclpy client found wanting, each over real ROS 2 (issue: policy_node safety).

Every test here failed against the node before these behaviours were decided (docs/deploy_ros.md, "Faults").
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import numpy as np
import pytest
from conftest import BIN, PACKAGE, REPO, Spinner, make_feeder, make_probe, stop_node, wait_for
from fixture_policy import JOINT_NAMES
from rclpy.qos import QoSProfile, QoSReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from test_ros_safety import run_to, stack  # noqa: F401  (the in-process node + feeder + probe fixture)

GO2_YAML = PACKAGE / "config" / "go2.yaml"
CALF = JOINT_NAMES.index("FL_calf_joint")


def test_estop_while_waiting_never_commands_the_robot(stack):  # noqa: F811
    """Valid joint_states, no imu yet, an e-stop: DAMPING, and still nothing is published."""
    node, feeder, probe = stack(feed=False)
    feeder.send_joints = True
    time.sleep(0.3)
    assert probe.mode == "WAITING", node.controller.transitions
    probe.estop_pub.publish(Bool(data=True))
    probe.wait_mode("DAMPING")
    time.sleep(0.5)
    assert not probe.targets


def test_out_of_range_reading_is_a_fault_and_targets_do_not_jump(stack, joint_limits):  # noqa: F811
    node, feeder, probe = stack()
    run_to(probe, "RUNNING")
    t_glitch = time.monotonic()
    feeder.pos = [3.0 if i == CALF else p for i, p in enumerate(feeder.pos)]  # +3 rad on a calf: [-2.72, -0.84]
    t_damp = probe.wait_mode("DAMPING", timeout=2)
    assert "outside its limits" in node.controller.reason
    time.sleep(0.3)
    dt = node.controller.meta.control_dt
    before = np.abs(np.diff([x for t, x in probe.targets_since(t_glitch - 0.2) if t < t_damp - 0.01], axis=0))
    after = np.abs(np.diff([x for _, x in probe.targets_since(t_damp - 0.05)], axis=0))
    assert np.all(before <= 0.5 * node.controller.meta.joint_array("velocity_limit") * dt + 1e-9)
    assert np.all(after <= node.controller.config.damping_rate * dt + 1e-9), after.max(axis=0)  # no jump


def test_best_effort_estop_publisher_is_heard(stack):  # noqa: F811
    node, feeder, probe = stack()
    run_to(probe, "RUNNING")
    qos = QoSProfile(depth=10, reliability=QoSReliabilityPolicy.BEST_EFFORT)
    publisher = probe.create_publisher(Bool, "estop", qos)
    wait_for(lambda: publisher.get_subscription_count() > 0, 10, "estop subscription matched")
    publisher.publish(Bool(data=True))
    probe.wait_mode("DAMPING", timeout=2)
    assert "e-stop topic" in node.controller.reason


def test_nan_cmd_vel_does_not_stick(stack):  # noqa: F811
    """NaN cmd_vel -> DAMPING; after silence (an old cmd_vel counts as zero) reset and enable work again."""
    node, feeder, probe = stack(cmd_timeout=0.3)
    run_to(probe, "RUNNING")
    probe.send_cmd(np.nan)
    probe.wait_mode("DAMPING", timeout=2)
    time.sleep(0.6)
    assert probe.call("reset").success
    run_to(probe, "RUNNING")
    time.sleep(0.3)
    assert probe.mode == "RUNNING", node.controller.reason


def test_a_lone_bad_sample_between_good_ones_faults_every_time(stack):  # noqa: F811
    node, feeder, probe = stack()
    publisher = probe.create_publisher(JointState, "joint_states", 10)
    for trial in range(5):
        run_to(probe, "RUNNING")
        good = JointState(name=list(JOINT_NAMES), position=list(feeder.pos), velocity=[0.0] * len(JOINT_NAMES))
        bad = JointState(name=list(JOINT_NAMES), position=[np.nan, *feeder.pos[1:]], velocity=good.velocity)
        publisher.publish(bad)
        publisher.publish(good)  # the next good sample arrives before the control tick
        probe.wait_mode("DAMPING", timeout=2)
        assert "NaN" in node.controller.reason, trial
        assert probe.call("reset").success


def test_duplicate_joint_names_are_a_fault(stack):  # noqa: F811
    node, feeder, probe = stack()
    run_to(probe, "RUNNING")
    feeder.names = [JOINT_NAMES[0], *JOINT_NAMES]
    feeder.pos = [feeder.pos[0] + 0.5, *feeder.pos]
    probe.wait_mode("DAMPING", timeout=2)
    assert "more than once" in node.controller.reason


def start_policy_node(*args: str, log) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "policy_node"), "--ros-args", *args], stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=REPO
    )


@pytest.fixture
def operator(ros_context):
    """A stand-in driver and an operator's probe in this process, for a policy_node started as its own process."""
    feeder, probe = make_feeder(ros_context), make_probe(ros_context, "/forward_position_controller/commands")
    spinner = Spinner(ros_context, [feeder, probe])
    yield feeder, probe
    spinner.close()


def test_policy_path_before_params_file_is_used(operator, fixture_policy, tmp_path):
    """`-p policy_path:=... --params-file go2.yaml` (either order) serves the policy."""
    feeder, probe = operator
    node = start_policy_node(
        "-p", f"policy_path:={fixture_policy}", "--params-file", str(GO2_YAML), log=tmp_path / "log"
    )
    try:
        probe.wait_mode("STANDING", timeout=30)
    finally:
        stop_node(node)


def test_a_stall_of_the_node_itself_is_reported_as_such(operator, fixture_policy, tmp_path):
    """The node's process paused for 300 ms while the driver publishes on time: DAMPING, blaming the stall."""
    feeder, probe = operator
    node = start_policy_node(
        "--params-file", str(GO2_YAML), "-p", f"policy_path:={fixture_policy}", log=tmp_path / "log"
    )
    try:
        probe.wait_mode("STANDING", timeout=30)
        os.kill(node.pid, signal.SIGSTOP)
        time.sleep(0.3)
        os.kill(node.pid, signal.SIGCONT)
        probe.wait_mode("DAMPING", timeout=5)
        reason = probe.status[-1][1]["reason"]
        assert "stalled" in reason and "stale" not in reason, reason
    finally:
        stop_node(node)
