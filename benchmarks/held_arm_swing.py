"""What swinging a legs-only humanoid's held arms on the gait clock does to a policy trained without it: the sim-to-sim
check on a copy of the policy whose metadata adds ``action.held_swing`` (the robot side then swings them, as a policy
trained with ``env.held_swing`` would), and how much of the pelvis yaw rate moves at the gait's own frequency.

The swing: each listed joint's target is its default plus amplitude x clip(vx / speed, -1, 1) x sin(2 pi phase), on
the clock of the policy's ``gait_phase`` term (``docs/policy_schema.md``). ``--amplitude A`` swings the first joint by
-A and the second by +A (the G1's shoulder pitches: each arm forward as the other leg is). ``--amplitude 0`` is the
plain policy. ``--phase-vx`` walks that speed for 6 s (after 2 s standing) and prints, for the hip pitches, the
shoulder pitches and the pelvis yaw rate, their sin and cos components at the clock's frequency and their standard
deviation: the part of the yaw error a counter-swing could cancel is the first two.

    .venv/bin/python benchmarks/held_arm_swing.py assets/policies/g1_flat/policy.onnx --amplitude 0.2 --out /tmp/s02
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from sim2real.export.metadata import rewrite_metadata
from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy, read_metadata
from sim2real_deploy.sim2sim import Sim2SimConfig
from sim2real_deploy.sim2sim.cli import main as sim2sim
from sim2real_deploy.sim2sim.config import Segment
from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations

G1_ARMS = ("left_shoulder_pitch_joint", "right_shoulder_pitch_joint")
G1_HIPS = ("left_hip_pitch_joint", "right_hip_pitch_joint")


def swung_policy(policy: str, amplitude: float, joints: tuple[str, str], out: Path) -> Path:
    """A copy of ``policy`` in ``out`` whose metadata swings ``joints`` by -/+ ``amplitude`` at 1 m/s."""
    meta = read_metadata(policy).raw
    period = next(term["params"]["period"] for term in meta["observations"] if term["name"] == "gait_phase")
    if amplitude:
        amplitudes = {joints[0]: -amplitude, joints[1]: amplitude}
        meta["action"]["held_swing"] = {"period": period, "speed": 1.0, "amplitude": amplitudes}
    out.mkdir(parents=True, exist_ok=True)
    return rewrite_metadata(policy, out / f"swing_{amplitude:g}.onnx", meta)


def clock_components(policy: Path, vx: float, joints: tuple[str, ...]) -> dict[str, tuple[float, float, float]]:
    """Per joint (and ``yaw_rate``, the pelvis gyro), walking ``vx``: (sin, cos, std) at the clock's frequency."""
    onnx = OnnxPolicy(str(policy))
    robot = MujocoRobot.from_metadata(onnx.metadata)
    period = next(t["params"]["period"] for t in onnx.metadata.observations if t["name"] == "gait_phase")
    cfg = Sim2SimConfig(schedule=(Segment("stand", 2.0, (0, 0, 0)), Segment("walk", 6.0, (vx, 0, 0))))
    perturb = sample_perturbations(cfg.randomization, np.random.default_rng(0), 8.0, robot)
    index = [onnx.metadata.joint_names.index(j) for j in joints]
    rows: list[list[float]] = []
    record = lambda k: rows.append([k, *robot.q[index], robot.base_gyro[2]])  # noqa: E731
    run_episode(onnx, robot, cfg, perturb, robot.standing_height(), on_control_step=record)
    data = np.array(rows)[round(3.0 / onnx.metadata.control_dt) :]  # the walk's first second skipped
    angle = 2 * np.pi * (data[:, 0] * onnx.metadata.control_dt / period % 1.0)
    components = {}
    for name, column in zip((*joints, "yaw_rate"), data[:, 1:].T, strict=True):
        x = column - column.mean()
        components[name] = (2 * np.mean(x * np.sin(angle)), 2 * np.mean(x * np.cos(angle)), x.std())
    return components


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported legs-only policy with a gait clock (.onnx)")
    parser.add_argument("--amplitude", type=float, default=0.2, help="[rad] at 1 m/s forward")
    parser.add_argument("--joints", nargs=2, default=G1_ARMS, help="the two held joints swung -A and +A")
    parser.add_argument("--phase-vx", type=float, default=1.0, help="forward speed of the clock analysis [m/s]")
    parser.add_argument("--out", type=Path, required=True, help="folder for the policy copy and the check's report")
    args = parser.parse_args()
    policy = swung_policy(args.policy, args.amplitude, tuple(args.joints), args.out)
    for name, (s, c, std) in clock_components(policy, args.phase_vx, (*G1_HIPS, *args.joints)).items():
        print(f"{name:28s} at the clock: sin {s:+.3f} cos {c:+.3f}; std {std:.3f}")
    sys.exit(sim2sim([str(policy), "--out", str(args.out / "check")]))


if __name__ == "__main__":
    main()
