"""``run_sim2sim``: every episode of the schedule with one policy file, and the report."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy, read_metadata
from sim2real_deploy.sim2sim.config import FallRule, Sim2SimConfig, Sim2SimError
from sim2real_deploy.sim2sim.episode import SlewLimit, run_episode, sample_perturbations, target_steps
from sim2real_deploy.sim2sim.report import VideoRecorder, write_outputs
from sim2real_deploy.sim2sim.terrain import TerrainGround, add_tile, load_tiles
from sim2real_deploy.sim2sim.verdict import evaluate, range_warnings, segment_metrics


def run_sim2sim(policy_path: str | Path, cfg: Sim2SimConfig | None = None) -> dict[str, Any]:
    """Run ``cfg.episodes`` episodes of the schedule with the policy file; return the report.

    ``report["passed"]`` is the verdict and ``report["failed"]`` lists the failed criteria. Raises
    ``PolicyFileError`` for a file that is not a valid sim2real policy and ``RobotModelError`` when the
    metadata does not fit the MJCF.
    """
    cfg = cfg or Sim2SimConfig()
    if cfg.episodes < 1:
        raise Sim2SimError(f"episodes must be >= 1, got {cfg.episodes}")
    policy = OnnxPolicy(policy_path)
    meta = policy.metadata
    if not meta.legged_velocity:
        raise Sim2SimError(f"{policy_path}: this check is for floating-base velocity policies (arms: the reach check)")
    robot = _robot(meta, cfg)
    height = cfg.init_base_height or robot.standing_height()
    fall = FallRule.of(meta, cfg)
    duration = sum(s.duration for s in cfg.schedule)
    recorder = VideoRecorder(robot, cfg.video) if cfg.video else None
    steps = target_steps(meta, cfg.target_rate_fraction)
    episodes = []
    for i in range(cfg.episodes):
        perturb = sample_perturbations(cfg.randomization, np.random.default_rng([cfg.seed, i]), duration, robot)
        # the node limits its first target against the soft start's last one, the default pose
        slew = SlewLimit(steps, start=meta.joint_array("default_joint_pos")) if steps is not None else None
        episode = run_episode(policy, robot, cfg, perturb, height, recorder if i == 0 else None, slew, fall)
        episode.update(
            segments=segment_metrics(episode["trace"], cfg.schedule, cfg.transition_s),
            perturbations=_plain(perturb),
        )
        episodes.append(episode)
    robot.set_dynamics()
    failed, segments, survival = evaluate(episodes, cfg)
    report = {
        "policy": str(policy_path),
        "task_id": meta.raw["task_id"],
        "training": {k: meta.raw["training"].get(k) for k in ("run_id", "git_revision", "exported_at")},
        "mjcf": str(robot.mjcf_path),
        "physics_dt": meta.physics_dt,
        "control_dt": meta.control_dt,
        "decimation": robot.decimation,
        "init_base_height": height,
        "fall_rule": asdict(fall),
        "passed": not failed,
        "failed": failed,
        "survival_rate": survival,
        "segments": segments,
        "warnings": range_warnings(meta, cfg.schedule) + _fall_rule_warning(fall),
        "config": asdict(cfg),
        "episodes": [{k: v for k, v in ep.items() if k != "trace"} for ep in episodes],
    }
    write_outputs(report, episodes, cfg, recorder)
    return report


def run_terrain(policy_path: str | Path, cfg: Sim2SimConfig, tiles: list[str] | None = None) -> dict[str, Any]:
    """``cfg`` (its episodes, randomisation and criteria) on each tile of the file ``cfg.terrain`` (``tiles``: a
    subset, in order); passes when every tile passes. Each tile's full report goes to ``<out_dir>/<tile>/``, its video
    (``cfg.video``) to ``<video stem>_<tile>.mp4``."""
    available = load_tiles(cfg.terrain)
    names = list(available) if tiles is None else tiles
    made_for = next(iter(available.values())).info.get("robot")
    robot = read_metadata(policy_path).raw["robot"]["name"]
    warnings = [] if made_for in (None, robot) else [f"tiles made for the {made_for}; the policy is the {robot}'s"]
    rows = []
    for name in names:
        out = None if cfg.out_dir is None else str(Path(cfg.out_dir) / name)
        video = None if cfg.video is None else str(Path(cfg.video).with_stem(f"{Path(cfg.video).stem}_{name}"))
        report = run_sim2sim(policy_path, replace(cfg, terrain_tile=name, out_dir=out, video=video))
        rows.append({"tile": name, **_tile_row(report, cfg)})
    summary = {
        "policy": str(policy_path),
        "terrain": cfg.terrain,
        "passed": all(row["passed"] for row in rows),
        "tiles": rows,
        "warnings": warnings,
        "config": asdict(replace(cfg, terrain_tile=None)),
    }
    if cfg.out_dir is not None:
        Path(cfg.out_dir).mkdir(parents=True, exist_ok=True)
        (Path(cfg.out_dir) / "terrain_report.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _tile_row(report: dict[str, Any], cfg: Sim2SimConfig) -> dict[str, Any]:
    """A tile's verdict, survival and forward speed over its command (the walking segments' mean; None without one)."""
    ratios = []
    for segment, row in zip(cfg.schedule, report["segments"], strict=True):
        vx = row.get("measured_mean", {}).get("vx")
        if segment.command[0] and vx is not None:
            ratios.append(vx / segment.command[0])
    return {
        "passed": report["passed"],
        "survival_rate": report["survival_rate"],
        "speed_ratio": round(float(np.mean(ratios)), 3) if ratios else None,
        "failed": report["failed"],
    }


def _robot(meta: Any, cfg: Sim2SimConfig) -> MujocoRobot:
    """The robot on the flat floor, or on ``cfg.terrain``'s tile ``cfg.terrain_tile``."""
    if cfg.terrain is None:
        return MujocoRobot.from_metadata(meta, cfg.mjcf, limit_tolerance=cfg.limit_tolerance)
    tiles = load_tiles(cfg.terrain)
    if cfg.terrain_tile not in tiles:
        raise Sim2SimError(f"{cfg.terrain} has no tile {cfg.terrain_tile!r} (tiles: {', '.join(tiles)})")
    tile = tiles[cfg.terrain_tile]
    robot = MujocoRobot.from_metadata(
        meta, cfg.mjcf, extend=lambda spec: add_tile(spec, tile), floor=False, limit_tolerance=cfg.limit_tolerance
    )
    robot.ground = TerrainGround(tile)
    return robot


def _fall_rule_warning(fall: FallRule) -> list[str]:
    if not fall.source.startswith("default"):
        return []
    return [
        f"no robot.fall in the file: the quadruped rule ({fall.min_base_height} m, {fall.max_tilt} rad) applies; "
        "for a humanoid re-export the policy"
    ]


def _plain(perturb: dict[str, Any]) -> dict[str, Any]:
    """The perturbations as JSON-ready values, rounded for reading."""
    out: dict[str, Any] = {}
    for key, value in perturb.items():
        if key == "pushes":
            out[key] = [{"t": round(t, 3), "delta_v": dv.round(3).tolist()} for t, dv in value]
        elif key == "joint_dynamics":
            out[key] = {k: np.round(v, 4).tolist() for k, v in value.items()}
        elif isinstance(value, np.ndarray):
            out[key] = np.round(value, 4).tolist()
        else:
            out[key] = value if value is None or isinstance(value, int) else round(float(value), 4)
    return out
