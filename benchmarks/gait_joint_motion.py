"""Which joints move while a legged policy walks, and which of them move with its base's yaw rate.

Runs the policy in native MuJoCo (no ROS, no Isaac Lab) on nominal physics: it stands for 2 s, then follows one
command for ``--seconds``. Over the command's steady part (its first second skipped) it prints the base yaw rate's
mean and RMS, and per joint the peak-to-peak and standard deviation of its angle and the correlation of the angle
with the yaw rate. A pelvis that wobbles in yaw at the gait shows up as a large RMS at a mean near the command.

    .venv/bin/python benchmarks/gait_joint_motion.py assets/policies/g1_flat/policy.onnx --command 0.5 0 0
"""

from __future__ import annotations

import argparse

import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy
from sim2real_deploy.sim2sim import Sim2SimConfig
from sim2real_deploy.sim2sim.config import Segment
from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations

STAND_S = 2.0


def joint_motion(policy_path: str, command: tuple[float, float, float], seconds: float) -> dict:
    """Per-joint motion and the base yaw rate over the command's steady part (plain values)."""
    policy = OnnxPolicy(policy_path)
    robot = MujocoRobot.from_metadata(policy.metadata)
    cfg = Sim2SimConfig(schedule=(Segment("stand", STAND_S, (0.0, 0.0, 0.0)), Segment("walk", seconds, command)))
    perturb = sample_perturbations(cfg.randomization, np.random.default_rng(0), STAND_S + seconds, robot)
    angles, yaw_rates = [], []

    def record(_: int) -> None:
        angles.append(robot.q.copy())
        yaw_rates.append(float(robot.base_gyro[2]))

    episode = run_episode(policy, robot, cfg, perturb, robot.standing_height(), on_control_step=record)
    skip = round((STAND_S + 1.0) / robot.meta.control_dt)
    q, wz = np.array(angles)[skip:], np.array(yaw_rates)[skip:]
    if len(wz) < 2:
        raise SystemExit(f"the robot fell at {episode['fell_at']:.2f} s, before the command's steady part")
    joints = {
        name: {
            "ptp": float(np.ptp(q[:, i])),
            "std": float(q[:, i].std()),
            "corr_yaw_rate": float(np.corrcoef(q[:, i], wz)[0, 1]) if q[:, i].std() > 1e-9 else 0.0,
        }
        for i, name in enumerate(robot.meta.joint_names)
    }
    return {
        "survived": episode["survived"],
        "yaw_rate_mean": float(wz.mean()),
        "yaw_rate_rms_error": float(np.sqrt(np.mean((wz - command[2]) ** 2))),
        "joints": joints,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported policy (.onnx)")
    parser.add_argument("--command", nargs=3, type=float, default=(0.5, 0.0, 0.0), metavar=("VX", "VY", "WZ"))
    parser.add_argument("--seconds", type=float, default=8.0, help="how long the command is held")
    args = parser.parse_args()
    result = joint_motion(args.policy, tuple(args.command), args.seconds)
    print(
        f"survived {result['survived']}; base yaw rate mean {result['yaw_rate_mean']:+.2f} rad/s, "
        f"RMS error {result['yaw_rate_rms_error']:.2f} rad/s"
    )
    for name, row in result["joints"].items():
        print(f"{name:28s} ptp {row['ptp']:.3f}  std {row['std']:.3f}  corr(yaw rate) {row['corr_yaw_rate']:+.2f}")


if __name__ == "__main__":
    main()
