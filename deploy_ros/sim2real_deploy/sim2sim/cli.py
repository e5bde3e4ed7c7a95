"""``sim2real sim2sim`` / ``python -m sim2real_deploy.sim2sim``: argument parsing, the run, the exit status."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from sim2real_deploy.commands import EE_POSE
from sim2real_deploy.mujoco_robot import RobotModelError
from sim2real_deploy.policy_file import PolicyFileError, read_metadata
from sim2real_deploy.sim2sim.config import (
    DEFAULT_SCHEDULE,
    RANDOMIZED,
    RANDOMIZED_CONFIG,
    TERRAIN_SCHEDULE,
    TERRAIN_THRESHOLDS,
    Segment,
    Sim2SimConfig,
    Sim2SimError,
    Thresholds,
    terrain_config,
)
from sim2real_deploy.sim2sim.lift import LiftConfig, run_lift
from sim2real_deploy.sim2sim.reach import ReachConfig, run_reach
from sim2real_deploy.sim2sim.report import format_summary
from sim2real_deploy.sim2sim.run import run_sim2sim, run_terrain


def _schedule_text() -> str:
    return ", ".join(f"{s.name} {s.duration:g} s" for s in DEFAULT_SCHEDULE)


def _parser() -> argparse.ArgumentParser:
    th, r = Thresholds(), RANDOMIZED
    rth = RANDOMIZED_CONFIG.thresholds
    parser = argparse.ArgumentParser(
        prog="sim2real sim2sim",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run an exported sim2real policy (.onnx) in native MuJoCo with its actuator model at the physics rate,\n"
            "drive it through a command schedule and judge survival and tracking on every commanded axis.\n\n"
            f"Default schedule ({sum(s.duration for s in DEFAULT_SCHEDULE):g} s): {_schedule_text()}.\n"
            f"Each segment is judged after its first {Sim2SimConfig().transition_s:g} s, on the mean over the episodes"
            " that survived:\n"
            f"  moving: mean |error| <= {th.max_lin_err} m/s per horizontal axis and <= {th.max_yaw_err} rad/s in yaw,"
            f"\n          and each commanded axis at {1 - th.rel_tol:.0%}-{1 + th.rel_tol:.0%} of its command;\n"
            f"  standing: drift <= {th.max_stand_drift} m and yaw change <= {th.max_stand_yaw} rad (sway reported).\n"
            "Every episode must survive: base above the robot's fall height and tilt below its limit (metadata\n"
            "robot.fall: Go2 0.15 m and 1 rad, G1 0.59 m and 0.8 rad).\n\n"
            f"--randomize: {RANDOMIZED_CONFIG.episodes} episodes, each combining floor friction {r.friction}, "
            f"payload {r.payload_kg} kg,\n  latency {tuple(1000 * v for v in r.latency_s)} ms, Kp and Kd x{r.kp_scale}"
            f" per joint, joint damping x{r.joint_damping},\n  friction x{r.joint_friction} and armature "
            f"x{r.joint_armature} of the MJCF's, pushes every {r.push_interval_s} s (<= {r.push_velocity} m/s);\n"
            f"  passes with survival >= {rth.min_survival:.0%} and tracking within {rth.max_lin_err} m/s, "
            f"{rth.max_yaw_err} rad/s, {rth.rel_tol:.0%}.\n"
            "  --joint-dynamics trained samples the joint ranges the policy was trained with (from its metadata).\n\n"
            "--terrain FILE (`sim2real terrain-tiles` writes assets/terrain/<robot>_rough.npz): instead of the floor,"
            " each tile\n  of the file (stairs, slopes, rough ground, boxes, each at a middle and the hardest "
            "difficulty) under the robot,\n  which starts where a training env spawns and walks across it: "
            f"{', '.join(f'{s.name} {s.duration:g} s' for s in TERRAIN_SCHEDULE)};\n"
            f"  each tile passes with every episode surviving and forward speed at {1 - TERRAIN_THRESHOLDS.rel_tol:.0%}"
            f"-{1 + TERRAIN_THRESHOLDS.rel_tol:.0%} of the command\n  (mean |error| <= {TERRAIN_THRESHOLDS.max_lin_err}"
            f" m/s, {TERRAIN_THRESHOLDS.max_yaw_err} rad/s); with --randomize, {RANDOMIZED_CONFIG.episodes} randomised "
            f"episodes per tile, {RANDOMIZED_CONFIG.thresholds.min_survival:.0%} surviving."
        ),
        epilog="An arm policy (ee_pose targets) gets the reach check instead: --targets poses sampled in its trained\n"
        f"workspace, each held {ReachConfig().hold_s:g} s from the default pose; passes with mean position error <= "
        f"{ReachConfig().max_pos_err} m\nand orientation error <= {ReachConfig().max_rot_err} rad over the last "
        f"{ReachConfig().measure_s:g} s of each, the hand holding still (sway <= {ReachConfig().max_sway} m).\n"
        f"A grasping arm policy (lift) gets the lift check: --targets trials, each a cube of random size, mass and "
        f"friction on the table\nand a target; success when the cube stays within {LiftConfig().goal_tol} m of it "
        f"for {LiftConfig().hold_s:g} s within {LiftConfig().episode_s:g} s; passes at >= "
        f"{LiftConfig().min_success:.0%} success.\n\n"
        "Exit status: 0 passed, 1 failed a criterion, 2 could not run (bad file, bad arguments).",
    )
    parser.add_argument("policy", help="exported policy file (.onnx with sim2real metadata)")
    parser.add_argument(
        "--out", help="output folder for report.json and tracking.png (default: logs/sim2sim/<policy stem>)"
    )
    parser.add_argument("--episodes", type=int, help="number of episodes (default 1; with --randomize 20)")
    parser.add_argument(
        "--targets", type=int, default=ReachConfig().targets, help="arm policies: pose targets (lift: trials)"
    )
    parser.add_argument(
        "--target-rate-fraction",
        type=float,
        default=None,
        help="slew-limit joint targets to this x no-load speed, as policy_node's target_rate_fraction "
        "(0: unlimited; default: the limit the policy was trained behind, if its file records one)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomisation")
    parser.add_argument("--randomize", action="store_true", help="combined disturbances, see above")
    pair = dict(type=float, nargs=2, metavar=("LO", "HI"))
    parser.add_argument("--friction", **pair, help="floor friction range")
    parser.add_argument("--payload", **pair, help="mass added to the base [kg]")
    parser.add_argument("--latency-ms", **pair, help="action latency [ms], rounded to physics steps")
    parser.add_argument("--kp-scale", **pair, help="actuator stiffness scale, per joint")
    parser.add_argument("--kd-scale", **pair, help="actuator damping scale, per joint")
    parser.add_argument("--joint-damping", **pair, help="passive joint damping, scale of the MJCF's")
    parser.add_argument("--joint-friction", **pair, help="joint Coulomb friction, scale of the MJCF's")
    parser.add_argument("--joint-armature", **pair, help="joint armature, scale of the MJCF's")
    parser.add_argument("--joint-dynamics", choices=("scale", "trained"), help="joint ranges: scales or as trained")
    parser.add_argument("--push-interval", **pair, help="seconds between pushes")
    parser.add_argument("--push-velocity", type=float, help="max push velocity per horizontal axis [m/s]")
    parser.add_argument(
        "--segment",
        nargs=5,
        action="append",
        metavar=("NAME", "VX", "VY", "WZ", "SECONDS"),
        help="replace the schedule with these segments (repeat, in order); judged by the same rules",
    )
    parser.add_argument("--max-lin-err", type=float, help="limit on mean |vx|, |vy| error [m/s]")
    parser.add_argument("--max-yaw-err", type=float, help="limit on mean |yaw-rate error| [rad/s]")
    parser.add_argument("--rel-tol", type=float, help="allowed |measured/command - 1| on commanded axes")
    parser.add_argument("--min-survival", type=float, help="fraction of episodes that must survive")
    parser.add_argument("--max-stand-drift", type=float, help="limit on drift while standing [m]")
    parser.add_argument("--max-stand-yaw", type=float, help="limit on the yaw change while standing [rad]")
    parser.add_argument("--max-limit-violations", type=int, help="fail above this many out-of-limit physics steps")
    parser.add_argument("--mjcf", help="robot MJCF instead of the metadata's robot.mjcf")
    parser.add_argument("--terrain", help="terrain tile file: run the terrain check (see above)")
    parser.add_argument("--tiles", help="comma-separated tiles of --terrain (default: all)")
    parser.add_argument("--video", help="write an MP4 of episode 0 here (MUJOCO_GL=osmesa on a CPU, egl on a GPU)")
    return parser


def config_from_args(args: argparse.Namespace) -> Sim2SimConfig:
    """Sim2SimConfig from parsed CLI arguments (only the options given override the defaults)."""
    if args.terrain:
        base = terrain_config(args.terrain, args.randomize)
    else:
        base = RANDOMIZED_CONFIG if args.randomize else Sim2SimConfig()
    latency = tuple(v / 1000.0 for v in args.latency_ms) if args.latency_ms else None
    rand = replace(
        base.randomization,
        **_given(
            friction=args.friction,
            payload_kg=args.payload,
            latency_s=latency,
            kp_scale=args.kp_scale,
            kd_scale=args.kd_scale,
            joint_damping=args.joint_damping,
            joint_friction=args.joint_friction,
            joint_armature=args.joint_armature,
            joint_dynamics=args.joint_dynamics,
            push_interval_s=args.push_interval,
            push_velocity=args.push_velocity,
        ),
    )
    th = replace(
        base.thresholds,
        **_given(
            max_lin_err=args.max_lin_err,
            max_yaw_err=args.max_yaw_err,
            rel_tol=args.rel_tol,
            min_survival=args.min_survival,
            max_stand_drift=args.max_stand_drift,
            max_stand_yaw=args.max_stand_yaw,
            max_joint_limit_violations=args.max_limit_violations,
        ),
    )
    schedule = base.schedule
    if args.segment:
        schedule = tuple(Segment(n, float(s), (float(vx), float(vy), float(wz))) for n, vx, vy, wz, s in args.segment)
    return replace(
        base,
        schedule=schedule,
        episodes=args.episodes or base.episodes,
        seed=args.seed,
        randomization=rand,
        thresholds=th,
        mjcf=args.mjcf,
        out_dir=_out_dir(args),
        video=args.video,
        target_rate_fraction=args.target_rate_fraction,
    )


def _given(**values: Any) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if v is not None}


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: ``sim2real sim2sim <policy.onnx>``; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.episodes is not None and args.episodes < 1:
        print("sim2sim: --episodes must be >= 1", file=sys.stderr)
        return 2
    try:
        meta = read_metadata(args.policy)
        if meta.command_interface == EE_POSE.name:
            return _lift(args) if meta.gripper else _reach(args)
        if args.terrain:
            return _terrain(args)
        report = run_sim2sim(args.policy, config_from_args(args))
    except (PolicyFileError, RobotModelError, Sim2SimError) as exc:
        print(f"sim2sim: {exc}", file=sys.stderr)
        return 2
    print(format_summary(report))
    return 0 if report["passed"] else 1


def _terrain(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    report = run_terrain(args.policy, cfg, args.tiles.split(",") if args.tiles else None)
    lines = [f"sim2sim {args.policy} on {args.terrain} ({cfg.episodes} episode(s) per tile):"]
    for row in report["tiles"]:
        speed = "-" if row["speed_ratio"] is None else f"{row['speed_ratio']:.0%}"
        lines.append(f"  {row['tile']:<18} survival {row['survival_rate']:4.0%}  speed {speed:>5}  {_verdict(row)}")
    lines += [f"warning: {w}" for w in report["warnings"]]
    lines.append(("PASSED" if report["passed"] else "FAILED") + f"; report: {cfg.out_dir}/terrain_report.json")
    print("\n".join(lines))
    return 0 if report["passed"] else 1


def _lift(args: argparse.Namespace) -> int:
    cfg = _arm_config(args, LiftConfig, count_field="trials")
    report = run_lift(args.policy, cfg)
    print(
        f"sim2sim {args.policy} ({report['task_id']}): {len(report['trials'])} trials, success "
        f"{report['success_rate']:.0%} (cube held within {cfg.goal_tol * 100:.0f} cm of the target for "
        f"{cfg.hold_s:g} s): {_verdict(report)}\nreport: {cfg.out_dir}/report.json"
    )
    return 0 if report["passed"] else 1


def _reach(args: argparse.Namespace) -> int:
    cfg = _arm_config(args, ReachConfig, count_field="targets")
    report = run_reach(args.policy, cfg)
    print(
        f"sim2sim {args.policy} ({report['task_id']}): {len(report['targets'])} targets, mean position error "
        f"{report['mean_pos_err'] * 100:.2f} cm, orientation {report['mean_rot_err']:.3f} rad, sway "
        f"{report['max_sway'] * 100:.2f} cm: {_verdict(report)}\nreport: {cfg.out_dir}/report.json"
    )
    return 0 if report["passed"] else 1


def _arm_config[Config: (LiftConfig, ReachConfig)](
    args: argparse.Namespace, config: type[Config], count_field: str
) -> Config:
    """An arm check's config from the arguments the reach and lift checks share (``--targets`` counts
    ``count_field``)."""
    return config(
        **{count_field: args.targets},
        seed=args.seed,
        target_rate_fraction=args.target_rate_fraction,
        mjcf=args.mjcf,
        out_dir=_out_dir(args),
    )


def _out_dir(args: argparse.Namespace) -> str:
    return args.out or str(Path("logs/sim2sim") / Path(args.policy).stem)


def _verdict(report: dict[str, Any]) -> str:
    return "passed" if report["passed"] else "FAILED: " + "; ".join(report["failed"])
