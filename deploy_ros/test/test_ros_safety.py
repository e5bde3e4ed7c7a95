"""Safety behaviour of the policy node over real ROS 2 topics and services, fed by a stand-in driver node."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import BIN, REPO, Spinner, assert_in_limits, make_feeder, make_probe, wait_for
from fixture_policy import JOINT_NAMES
from rclpy.parameter import Parameter

from sim2real_deploy.policy_file import PolicyFileError
from sim2real_deploy.policy_node import PolicyNode

STATE_TIMEOUT = 0.25  # generous: the machine running the tests is shared and loaded


@pytest.fixture
def stack(ros_context, fixture_policy):
    """Policy node + feeder + probe in this process, each on one executor thread."""
    made = []

    def build(policy=fixture_policy, feed=True, **params):
        overrides = {"policy_path": str(policy), "stand_time": 0.3, "state_timeout": STATE_TIMEOUT, **params}
        node = PolicyNode(
            context=ros_context, parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()]
        )
        feeder, probe = make_feeder(ros_context), make_probe(ros_context)
        feeder.send_joints = feeder.send_imu = feed
        made.append(Spinner(ros_context, [node, feeder, probe]))
        wait_for(lambda: probe.mode is not None, 10, "first status")
        return node, feeder, probe

    yield build
    for spinner in made:
        spinner.close()


def run_to(probe, mode: str) -> None:
    probe.wait_mode("STANDING")
    if mode == "RUNNING":
        time.sleep(0.4)  # soft start (0.3 s) finished
        assert probe.call("enable").success
        probe.wait_mode("RUNNING")


def test_estop_from_every_mode_needs_reset(stack, joint_limits):
    node, feeder, probe = stack(feed=False)
    assert probe.mode == "WAITING" and not probe.call("enable").success
    time.sleep(0.2)
    assert not probe.targets  # WAITING publishes nothing
    # WAITING -> DAMPING: no measured pose to hold, so still nothing published.
    assert probe.call("estop").success
    probe.wait_mode("DAMPING")
    feeder.send_joints = feeder.send_imu = True
    time.sleep(0.3)
    assert probe.mode == "DAMPING" and not probe.targets
    for source, via_topic in (("STANDING", True), ("RUNNING", False)):
        assert probe.call("reset").success
        run_to(probe, source)
        if via_topic:
            from std_msgs.msg import Bool

            probe.estop_pub.publish(Bool(data=True))
        else:
            assert probe.call("estop").success
        t_damp = probe.wait_mode("DAMPING")
        assert not probe.call("enable").success  # only reset leaves DAMPING
        time.sleep(0.2)
        assert probe.mode == "DAMPING"
        held = probe.targets_since(t_damp + 0.05)
        assert held and np.allclose(held[-1][1], node.controller.safe_pos, atol=0.05)  # holds the measured pose
    assert "e-stop service" in node.controller.transitions[-1].reason
    assert_in_limits(probe.targets, joint_limits)


@pytest.mark.parametrize("stream", ["joint_states", "imu"])
def test_watchdog_stale_input_damps(stack, stream):
    node, feeder, probe = stack()
    run_to(probe, "RUNNING")
    stopped = time.monotonic()
    setattr(feeder, "send_joints" if stream == "joint_states" else "send_imu", False)
    t_damp = probe.wait_mode("DAMPING", timeout=5)
    # Timeout plus one control period plus scheduling slack on a loaded machine.
    assert t_damp - stopped < STATE_TIMEOUT + 0.2, t_damp - stopped
    assert f"{stream} stale" in node.controller.reason
    feeder.send_joints = feeder.send_imu = True
    time.sleep(0.3)
    assert probe.mode == "DAMPING"  # fresh data does not leave DAMPING by itself
    assert probe.call("reset").success
    probe.wait_mode("STANDING")


@pytest.mark.parametrize("case", ["nan_joint", "missing_joint", "reordered", "absurd_cmd", "nan_cmd", "tilt"])
def test_bad_inputs(stack, joint_limits, case):
    node, feeder, probe = stack()
    run_to(probe, "RUNNING")
    if case == "nan_joint":
        feeder.pos = [np.nan] + feeder.pos[1:]
    elif case == "missing_joint":
        feeder.names, feeder.pos = feeder.names[:-1], feeder.pos[:-1]
    elif case == "reordered":
        feeder.names, feeder.pos = feeder.names[::-1] + ["extra_joint"], feeder.pos[::-1] + [0.0]
    elif case == "tilt":
        feeder.quat = (np.sin(0.5), 0.0, 0.0, np.cos(0.5))  # 1 rad roll
    for _ in range(10):
        probe.send_cmd(*{"absurd_cmd": (100.0, -50.0, 1e9), "nan_cmd": (np.nan, 0, 0)}.get(case, (0.0, 0.0, 0.0)))
        time.sleep(0.05)
    expected = {"nan_joint": "NaN", "missing_joint": "lacks joint", "nan_cmd": "cmd_vel has NaN", "tilt": "tilt"}
    if case in expected:
        probe.wait_mode("DAMPING")
        assert expected[case] in node.controller.reason
    else:
        time.sleep(0.2)
        assert probe.mode == "RUNNING", node.controller.reason
    if case == "absurd_cmd":
        from fixture_policy import go2_metadata

        (_, vx_hi), (vy_lo, _), (_, wz_hi) = go2_metadata()["commands"]["ranges"]
        clamped = [vx_hi, vy_lo, wz_hi]
        wait_for(lambda: probe.status[-1][1]["command"] == clamped, 2, "clamped command in status")
    if case == "reordered":
        assert np.allclose(node.controller.q, [feeder.pos[feeder.names.index(n)] for n in JOINT_NAMES])
    assert_in_limits(probe.targets, joint_limits)


def test_policy_for_another_robot_waits(stack, policy_dir):
    from fixture_policy import go2_metadata, write_policy

    meta = go2_metadata(joint_names=[n.replace("_joint", "_motor") for n in JOINT_NAMES])
    node, feeder, probe = stack(policy=write_policy(policy_dir / "other_robot.onnx", meta))
    time.sleep(0.5)
    assert probe.mode == "WAITING" and not probe.targets
    wait_for(lambda: "lacks joint" in probe.status[-1][1]["reason"], 2, "reason in status")


def test_foreign_onnx_refused(ros_context, foreign_policy, tmp_path):
    with pytest.raises(PolicyFileError, match="no 'sim2real' metadata"):
        PolicyNode(context=ros_context, parameter_overrides=[Parameter("policy_path", value=str(foreign_policy))])
    # The entry point exits non-zero with the reason instead of serving anything.
    import subprocess

    out = subprocess.run(
        [str(BIN / "policy_node"), "--ros-args", "-p", f"policy_path:={foreign_policy}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 1 and "not exported by sim2real" in out.stdout + out.stderr


def test_each_policy_kind_listens_to_its_own_inputs_only(ros_context, fixture_policy, policy_dir):
    """A legged policy reads imu and cmd_vel; an arm reads target_pose (a stray cmd_vel must not reach it: its
    controller refuses velocity commands), a grasping arm object_pose too."""
    from fixture_policy import write_closing_lift_policy

    reach = REPO / "assets/policies/panda_reach/policy.onnx"
    lift = write_closing_lift_policy(policy_dir / "lift.onnx")
    common = {"joint_states", "estop"}
    expected = {
        fixture_policy: common | {"imu", "cmd_vel"},
        reach: common | {"target_pose"},
        lift: common | {"target_pose", "object_pose"},
    }
    for policy, topics in expected.items():
        node = PolicyNode(context=ros_context, parameter_overrides=[Parameter("policy_path", value=str(policy))])
        try:
            assert {sub.topic_name.lstrip("/") for sub in node.subscriptions} == topics, policy.name
        finally:
            node.destroy_node()
