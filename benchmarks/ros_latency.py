"""Policy-node latency over real ROS 2 (run in .venv-ros): `.venv-ros/bin/python benchmarks/ros_latency.py`.

The MuJoCo bridge runs as its own process (a 200 Hz driver stamping joint_states with the send time); the
policy node runs in this process so every tick can be timed. Measures, while RUNNING:
  - latency from a joint_states message (its header stamp) to the target publish that used it,
  - control-period jitter of the 50 Hz timer,
  - ONNX inference time alone.
Uses the shipped Go2 policy if present, else a fixture 45-256-128-12 MLP with the Go2 metadata.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
sys.path.insert(0, str(REPO / "deploy_ros/test"))

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from sim2real_deploy.controller import Mode  # noqa: E402
from sim2real_deploy.policy_file import OnnxPolicy  # noqa: E402
from sim2real_deploy.policy_node import PolicyNode  # noqa: E402

SHIPPED = REPO / "assets/policies/go2_flat/policy.onnx"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def policy_path(tmp: Path) -> Path:
    if SHIPPED.is_file():
        return SHIPPED
    from fixture_policy import write_policy

    return write_policy(tmp / "bench_policy.onnx", hidden=(256, 128), out_gain=0.05)


def inference_times(path: Path, n: int = 3000) -> np.ndarray:
    policy = OnnxPolicy(path)
    obs = np.random.default_rng(0).standard_normal(policy.metadata.obs_dim).astype(np.float32)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        policy(obs)
        times.append(time.perf_counter() - start)
    return np.array(times[100:])


def run_node(path: Path, seconds: float) -> np.ndarray:
    """(tick start, joint_states stamp, publish done) per RUNNING tick, wall-clock seconds."""
    bridge = subprocess.Popen(
        [str(Path(sys.executable).parent / "mujoco_bridge"), "--ros-args", "-p", f"policy_path:={path}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rclpy.init()
    node = PolicyNode(
        parameter_overrides=[Parameter("policy_path", value=str(path)), Parameter("stand_time", value=0.5)]
    )
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (node.controller.mode == Mode.STANDING and node.controller.enable(time.monotonic())[0]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"policy node did not reach STANDING: {node.controller.reason}")
            time.sleep(0.1)
        node.enable_timing()
        time.sleep(seconds)
        mode = node.controller.mode
        timing = np.array(node.timing)
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        bridge.terminate()
        bridge.wait()
    if mode != Mode.RUNNING:
        print(f"warning: node left RUNNING during the run ({node.controller.reason})")
    return timing


def row(name: str, values_ms: np.ndarray) -> str:
    p50, p99, worst = np.percentile(values_ms, [50, 99, 100])
    return f"| {name} | {p50:.3f} | {p99:.3f} | {worst:.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="RUNNING time to measure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = policy_path(Path(tmp))
        infer_ms = inference_times(path) * 1e3
        timing = run_node(path, args.seconds)
    start, stamp, done = timing.T
    periods_ms = np.diff(start) * 1e3
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
        f"python {platform.python_version()}, rclpy Jazzy (Fast DDS)"
    )
    print(
        f"policy: {path.name if path == SHIPPED else 'fixture MLP 45-256-128-12'}; {len(timing)} ticks over "
        f"{args.seconds:.0f} s RUNNING; bridge publishing joint_states+imu at 200 Hz from another process"
    )
    print("| metric [ms] | p50 | p99 | max |\n| --- | --- | --- | --- |")
    print(row("joint_states stamp -> target published", (done - stamp) * 1e3))
    print(row("  of which: tick start -> target published", (done - start) * 1e3))
    print(row("control period (50 Hz timer)", periods_ms))
    print(row("|period - 20 ms| (jitter)", np.abs(periods_ms - 20.0)))
    print(row("ONNX inference (onnxruntime, 1 thread)", infer_ms))
    print(f"control period mean {periods_ms.mean():.3f} ms, std {periods_ms.std():.3f} ms")


if __name__ == "__main__":
    main()
