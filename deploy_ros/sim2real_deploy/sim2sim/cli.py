"""``sim2real sim2sim`` / ``python -m sim2real_deploy.sim2sim``: argument parsing, the run, the exit status."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sim2real_deploy.mujoco_robot import RobotModelError
from sim2real_deploy.policy_file import PolicyFileError
from sim2real_deploy.sim2sim.config import (
    DEFAULT_SCHEDULE,
    RANDOMIZED,
    Randomization,
    Segment,
    Sim2SimConfig,
    Sim2SimError,
    Thresholds,
)
from sim2real_deploy.sim2sim.report import format_summary
from sim2real_deploy.sim2sim.run import run_sim2sim


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sim2real sim2sim",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run an exported sim2real policy (.onnx) in native MuJoCo with its actuator model at the physics rate,\n"
            "drive it through a command schedule and check survival and velocity tracking.\n\n"
            "Default schedule (20 s): stand 3 s, forward 0.5 m/s 4 s, forward 1.0 m/s 4 s,\n"
            "sideways 0.3 m/s 3 s, turn 0.8 rad/s 3 s, stop 3 s.\n"
            "Pass criteria: survive every episode; mean |vx error| <= 0.15 m/s in both forward segments;\n"
            "mean |yaw-rate error| <= 0.3 rad/s in the turn. Joint-limit violations and peak torques are reported."
        ),
        epilog="Exit status: 0 passed, 1 failed a criterion, 2 could not run (bad file, bad arguments).",
    )
    parser.add_argument("policy", help="exported policy file (.onnx with sim2real metadata)")
    parser.add_argument(
        "--out", help="output folder for report.json and tracking.png (default: logs/sim2sim/<policy stem>)"
    )
    parser.add_argument("--episodes", type=int, default=1, help="number of episodes (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomisation")
    parser.add_argument(
        "--randomize",
        action="store_true",
        help=f"friction {RANDOMIZED.friction}, pushes every {RANDOMIZED.push_interval_s} s "
        f"(<= {RANDOMIZED.push_velocity} m/s), latency {RANDOMIZED.latency_steps} control steps",
    )
    parser.add_argument("--friction", type=float, nargs=2, metavar=("LO", "HI"), help="sliding friction range")
    parser.add_argument("--push-interval", type=float, nargs=2, metavar=("LO", "HI"), help="seconds between pushes")
    parser.add_argument("--push-velocity", type=float, help="max push velocity per horizontal axis [m/s]")
    parser.add_argument("--latency", type=int, nargs=2, metavar=("LO", "HI"), help="action delay in control steps")
    parser.add_argument(
        "--segment",
        nargs=5,
        action="append",
        metavar=("NAME", "VX", "VY", "WZ", "SECONDS"),
        help="replace the schedule with these segments (repeat, in order); the lin-x limit then applies to every "
        "segment with VX != 0 and the yaw limit to every segment with WZ != 0",
    )
    parser.add_argument("--max-lin-x-err", type=float, help="limit on mean |vx error| in forward segments [m/s]")
    parser.add_argument("--max-yaw-err", type=float, help="limit on mean |yaw-rate error| in the turn [rad/s]")
    parser.add_argument("--max-limit-violations", type=int, help="fail above this many out-of-limit physics steps")
    parser.add_argument("--mjcf", help="robot MJCF instead of the metadata's robot.mjcf")
    parser.add_argument("--video", help="write an MP4 of episode 0 here (needs offscreen GL and imageio[ffmpeg])")
    return parser


def config_from_args(args: argparse.Namespace) -> Sim2SimConfig:
    """Sim2SimConfig from parsed CLI arguments (only the options given override the defaults)."""
    rand = RANDOMIZED if args.randomize else Randomization()
    rand = replace(
        rand,
        **_given(
            friction=args.friction,
            push_interval_s=args.push_interval,
            push_velocity=args.push_velocity,
            latency_steps=args.latency,
        ),
    )
    th = replace(
        Thresholds(),
        **_given(
            max_lin_x_err=args.max_lin_x_err,
            max_yaw_err=args.max_yaw_err,
            max_joint_limit_violations=args.max_limit_violations,
        ),
    )
    schedule = DEFAULT_SCHEDULE
    if args.segment:
        schedule = tuple(Segment(n, float(s), (float(vx), float(vy), float(wz))) for n, vx, vy, wz, s in args.segment)
        # a custom schedule is judged by what its segments command, not by the default schedule's names
        th = replace(
            th,
            lin_x_segments=tuple(seg.name for seg in schedule if seg.command[0] != 0.0),
            yaw_segments=tuple(seg.name for seg in schedule if seg.command[2] != 0.0),
        )
    return Sim2SimConfig(
        schedule=schedule,
        episodes=args.episodes,
        seed=args.seed,
        randomization=rand,
        thresholds=th,
        mjcf=args.mjcf,
        out_dir=args.out or str(Path("logs/sim2sim") / Path(args.policy).stem),
        video=args.video,
    )


def _given(**values: Any) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if v is not None}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``sim2real sim2sim <policy.onnx>``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        report = run_sim2sim(args.policy, config_from_args(args))
    except (PolicyFileError, RobotModelError, Sim2SimError) as exc:
        print(f"sim2sim: {exc}", file=sys.stderr)
        return 2
    print(format_summary(report))
    return 0 if report["passed"] else 1
