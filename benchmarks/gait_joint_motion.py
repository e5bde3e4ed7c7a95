"""Which joints move while a legged policy walks, and which of them move with its base's yaw rate.

Runs the policy in native MuJoCo (no ROS, no Isaac Lab) on nominal physics: it stands for 2 s, then follows one
command for ``--seconds``. Over the command's steady part (its first second skipped) it prints the base yaw rate's
mean and RMS, and per joint the peak-to-peak and standard deviation of its angle and the correlation of the angle
with the yaw rate. A pelvis that wobbles in yaw at the gait shows up as a large RMS at a mean near the command.
Per foot (metadata ``robot.foot_bodies``) it prints the share of steps the foot touches the floor at three or more
contact points (``--min-points``; on a four-point sole, three is flat, fewer an edge or a corner) and the foot's
own yaw rate RMS over those steps: a planted foot that still turns is pivoting on the floor.

    .venv/bin/python benchmarks/gait_joint_motion.py assets/policies/g1_flat/policy.onnx --command 0.5 0 0
"""

from __future__ import annotations

import argparse

import mujoco
import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy
from sim2real_deploy.sim2sim import Sim2SimConfig
from sim2real_deploy.sim2sim.config import Segment
from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations

STAND_S = 2.0


def joint_motion(policy_path: str, command: tuple[float, float, float], seconds: float, min_points: int = 3) -> dict:
    """Per-joint motion and the base yaw rate over the command's steady part (plain values)."""
    policy = OnnxPolicy(policy_path)
    robot = MujocoRobot.from_metadata(policy.metadata)
    cfg = Sim2SimConfig(schedule=(Segment("stand", STAND_S, (0.0, 0.0, 0.0)), Segment("walk", seconds, command)))
    perturb = sample_perturbations(cfg.randomization, np.random.default_rng(0), STAND_S + seconds, robot)
    model, data = robot.model, robot.data
    feet = {name: model.body(name).id for name in robot.meta.raw["robot"].get("foot_bodies", [])}
    angles, yaw_rates, foot_rows = [], [], []

    def record(_: int) -> None:
        angles.append(robot.q.copy())
        yaw_rates.append(float(robot.base_gyro[2]))
        foot_rows.append([(_contact_points(model, data, body), _yaw_rate(model, data, body)) for body in feet.values()])

    episode = run_episode(policy, robot, cfg, perturb, robot.standing_height(), on_control_step=record)
    skip = round((STAND_S + 1.0) / robot.meta.control_dt)
    q, wz, foot = np.array(angles)[skip:], np.array(yaw_rates)[skip:], np.array(foot_rows)[skip:]
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
        "feet": {name: _planted(foot[:, i], min_points) for i, name in enumerate(feet)},
    }


def _contact_points(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> int:
    return sum(body in (model.geom_bodyid[c.geom1], model.geom_bodyid[c.geom2]) for c in data.contact[: data.ncon])


def _yaw_rate(model: mujoco.MjModel, data: mujoco.MjData, body: int) -> float:
    velocity = np.zeros(6)  # world-frame [angular, linear]
    mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_BODY, body, velocity, 0)
    return float(velocity[2])


def _planted(rows: np.ndarray, min_points: int) -> dict:
    """The share of steps with ``min_points`` or more contact points, and the foot's yaw rate RMS over them."""
    planted = rows[:, 0] >= min_points
    rms = float(np.sqrt(np.mean(rows[planted, 1] ** 2))) if planted.any() else None
    return {"planted_share": float(planted.mean()), "planted_yaw_rate_rms": rms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported policy (.onnx)")
    parser.add_argument("--command", nargs=3, type=float, default=(0.5, 0.0, 0.0), metavar=("VX", "VY", "WZ"))
    parser.add_argument("--seconds", type=float, default=8.0, help="how long the command is held")
    parser.add_argument("--min-points", type=int, default=3, help="contact points that make a foot planted")
    args = parser.parse_args()
    result = joint_motion(args.policy, tuple(args.command), args.seconds, args.min_points)
    print(
        f"survived {result['survived']}; base yaw rate mean {result['yaw_rate_mean']:+.2f} rad/s, "
        f"RMS error {result['yaw_rate_rms_error']:.2f} rad/s"
    )
    for name, row in result["joints"].items():
        print(f"{name:28s} ptp {row['ptp']:.3f}  std {row['std']:.3f}  corr(yaw rate) {row['corr_yaw_rate']:+.2f}")
    for name, row in result["feet"].items():
        rms = "-" if row["planted_yaw_rate_rms"] is None else f"{row['planted_yaw_rate_rms']:.2f} rad/s"
        print(f"{name}: planted {row['planted_share']:.0%} of steps, yaw rate then {rms}")


if __name__ == "__main__":
    main()
