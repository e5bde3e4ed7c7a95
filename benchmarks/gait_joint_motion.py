"""Which joints move while a legged policy walks, and which of them move with its base's yaw rate.

Runs the policy in native MuJoCo (no ROS, no Isaac Lab) on nominal physics: it stands for 2 s, then follows one
command for ``--seconds``. Over the command's steady part (its first second skipped) it prints the base yaw rate's
mean and RMS, and per joint the peak-to-peak and standard deviation of its angle and the correlation of the angle
with the yaw rate. A pelvis that wobbles in yaw at the gait shows up as a large RMS at a mean near the command.
Per foot (metadata ``robot.foot_bodies``) it prints the share of steps the foot touches the floor at three or more
contact points (``--min-points``; on a four-point sole, three is flat, fewer an edge or a corner) and the foot's
own yaw rate RMS over those steps: a planted foot that still turns is pivoting on the floor.
It splits the yaw rate's variance into frequency bands (the gait's 1-2 Hz against chatter up to the 25 Hz Nyquist
rate of a 50 Hz policy), and per joint prints the mean step-to-step change of the policy's action and the joint's
RMS velocity: a joint whose action flips every step shakes the base at high frequency. Each joint's angle range over
the window is printed beside the MJCF's limits, with the share of steps within 0.05 rad of one: a joint that walks
at its limit shows.

    .venv/bin/python benchmarks/gait_joint_motion.py assets/policies/g1_flat/policy.onnx --command 0.5 0 0
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import mujoco
import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy
from sim2real_deploy.sim2sim import Sim2SimConfig
from sim2real_deploy.sim2sim.config import Segment
from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations

STAND_S = 2.0
NEAR_LIMIT_RAD = 0.05
BAND_EDGES_HZ = (0.0, 3.0, 6.0, 12.0)


def joint_motion(policy_path: str, command: tuple[float, float, float], seconds: float, min_points: int = 3) -> dict:
    """Per-joint motion and the base yaw rate over the command's steady part (plain values)."""
    policy = OnnxPolicy(policy_path)
    robot = MujocoRobot.from_metadata(policy.metadata)
    cfg = Sim2SimConfig(schedule=(Segment("stand", STAND_S, (0.0, 0.0, 0.0)), Segment("walk", seconds, command)))
    perturb = sample_perturbations(cfg.randomization, np.random.default_rng(0), STAND_S + seconds, robot)
    model, data = robot.model, robot.data
    feet = {name: model.body(name).id for name in robot.meta.raw["robot"].get("foot_bodies", [])}
    angles, velocities, actions, yaw_rates, foot_rows = [], [], [], [], []

    def act(obs: np.ndarray) -> np.ndarray:
        actions.append(np.asarray(policy(obs), dtype=np.float64).reshape(-1))
        return actions[-1]

    def record(_: int) -> None:
        angles.append(robot.q.copy())
        velocities.append(robot.qd.copy())
        yaw_rates.append(float(robot.base_gyro[2]))
        foot_rows.append([(_contact_points(model, data, body), _yaw_rate(model, data, body)) for body in feet.values()])

    episode = run_episode(act, robot, cfg, perturb, robot.standing_height(), on_control_step=record)
    skip = round((STAND_S + 1.0) / robot.meta.control_dt)
    q, qd, wz = np.array(angles)[skip:], np.array(velocities)[skip:], np.array(yaw_rates)[skip:]
    a, foot = np.array(actions)[skip:], np.array(foot_rows)[skip:]
    if len(wz) < 2:
        raise SystemExit(f"the robot fell at {episode['fell_at']:.2f} s, before the command's steady part")
    joints = {
        name: {
            "min": float(q[:, i].min()),
            "max": float(q[:, i].max()),
            "range": robot.model.joint(name).range.tolist(),  # the MJCF's limits
            "near_limit_share": _near_limit_share(q[:, i], robot.model.joint(name).range),
            "ptp": float(np.ptp(q[:, i])),
            "std": float(q[:, i].std()),
            "corr_yaw_rate": float(np.corrcoef(q[:, i], wz)[0, 1]) if q[:, i].std() > 1e-9 else 0.0,
            "velocity_rms": float(np.sqrt(np.mean(qd[:, i] ** 2))),
        }
        for i, name in enumerate(robot.meta.joint_names)
    }
    # the action covers the commanded joints only (metadata action.joints), in their order
    for name, change in zip(robot.meta.action_joints, np.abs(np.diff(a, axis=0)).mean(0), strict=True):
        joints[name]["action_step_change"] = float(change)
    return {
        "survived": episode["survived"],
        "yaw_rate_mean": float(wz.mean()),
        "yaw_rate_rms_error": float(np.sqrt(np.mean((wz - command[2]) ** 2))),
        "yaw_rate_variance_share": _band_shares(wz, robot.meta.control_dt),
        "joints": joints,
        "feet": {name: _planted(foot[:, i], min_points) for i, name in enumerate(feet)},
    }


def _near_limit_share(angles: np.ndarray, limits: np.ndarray) -> float:
    """The share of steps within ``NEAR_LIMIT_RAD`` of either limit."""
    return float(np.mean((angles < limits[0] + NEAR_LIMIT_RAD) | (angles > limits[1] - NEAR_LIMIT_RAD)))


def _band_shares(signal: np.ndarray, dt: float) -> dict[str, float]:
    """The share of ``signal``'s variance in each band from ``BAND_EDGES_HZ`` up (a periodogram; the last band runs
    to the Nyquist rate)."""
    power = (np.abs(np.fft.rfft(signal - signal.mean())) ** 2)[1:]
    band = np.searchsorted(BAND_EDGES_HZ, np.fft.rfftfreq(len(signal), dt)[1:], side="right") - 1
    upper = [f"{hi:g} Hz" for hi in BAND_EDGES_HZ[1:]] + ["Nyquist"]
    names = [f"{lo:g}-{hi}" for lo, hi in zip(BAND_EDGES_HZ, upper, strict=True)]
    total = power.sum() or 1.0
    return {name: float(power[band == i].sum() / total) for i, name in enumerate(names)}


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
    parser.add_argument("--out", type=Path, help="also write the result as JSON here")
    args = parser.parse_args()
    result = joint_motion(args.policy, tuple(args.command), args.seconds, args.min_points)
    if args.out:
        args.out.write_text(json.dumps({"policy": args.policy, "command": args.command, **result}, indent=1) + "\n")
    print(
        f"survived {result['survived']}; base yaw rate mean {result['yaw_rate_mean']:+.2f} rad/s, "
        f"RMS error {result['yaw_rate_rms_error']:.2f} rad/s"
    )
    bands = ", ".join(f"{band} {share:.0%}" for band, share in result["yaw_rate_variance_share"].items())
    print(f"yaw rate variance by frequency: {bands}")
    for name, row in result["joints"].items():
        change = f"  action step change {row['action_step_change']:.2f}" if "action_step_change" in row else ""
        print(
            f"{name:28s} {row['min']:+.3f}..{row['max']:+.3f} of {row['range'][0]:+.3f}..{row['range'][1]:+.3f}"
            f" ({row['near_limit_share']:.0%} near)  ptp {row['ptp']:.3f}  std {row['std']:.3f}"
            f"  corr(yaw rate) {row['corr_yaw_rate']:+.2f}"
            f"  vel RMS {row['velocity_rms']:.2f} rad/s{change}"
        )
    for name, row in result["feet"].items():
        rms = "-" if row["planted_yaw_rate_rms"] is None else f"{row['planted_yaw_rate_rms']:.2f} rad/s"
        print(f"{name}: planted {row['planted_share']:.0%} of steps, yaw rate then {rms}")


if __name__ == "__main__":
    main()
