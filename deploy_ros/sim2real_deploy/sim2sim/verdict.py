"""The verdict: tracking per segment and axis, the pass criteria over all episodes, range warnings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim2real_deploy.commands import BASE_VELOCITY
from sim2real_deploy.policy_file import PolicyMetadata
from sim2real_deploy.sim2sim.config import AXES, Segment, Sim2SimConfig, Thresholds


def segment_metrics(trace: dict[str, np.ndarray], schedule: Sequence[Segment], transition_s: float) -> list[dict]:
    """Per segment, after its first ``transition_s`` seconds (at most half the segment): per-axis mean velocity and
    mean |error|, and for standing segments the drift (base displacement), yaw change and sway (RMS horizontal
    speed). ``samples`` is 0 when the robot fell before the window."""
    metrics, start = [], 0.0
    for segment in schedule:
        end = start + segment.duration
        skip = min(transition_s, segment.duration / 2)  # a short segment keeps its second half
        mask = (trace["t"] > start + skip) & (trace["t"] <= end + 1e-9)
        entry: dict[str, Any] = {
            "name": segment.name,
            "command": list(segment.command),
            "start": start,
            "end": end,
            "samples": int(mask.sum()),
        }
        if mask.any():
            measured, command = trace["measured"][mask], trace["command"][mask]
            error = np.abs(measured - command)
            entry["measured_mean"] = dict(zip(AXES, measured.mean(axis=0).round(4).tolist(), strict=True))
            entry["err_mean"] = dict(zip(AXES, error.mean(axis=0).round(4).tolist(), strict=True))
            entry["err_p95"] = dict(zip(AXES, np.percentile(error, 95, axis=0).round(4).tolist(), strict=True))
            entry["tilt_max"] = round(float(trace["tilt"][mask].max()), 4)
            if segment.standing:
                xy, yaw = trace["xy"][mask], np.unwrap(trace["yaw"][mask])
                since = (trace["t"] > start) & (trace["t"] <= end + 1e-9)  # a push in the transition moves it too
                entry["pushed"] = bool(trace["pushed"][since].any()) if "pushed" in trace else False
                entry["drift_m"] = round(float(np.linalg.norm(xy[-1] - xy[0])), 4)
                entry["yaw_drift_rad"] = round(float(abs(yaw[-1] - yaw[0])), 4)
                entry["sway_rms"] = round(float(np.sqrt((measured[:, :2] ** 2).sum(axis=1).mean())), 4)
        metrics.append(entry)
        start = end
    return metrics


def aggregate(episodes: Sequence[dict], schedule: Sequence[Segment]) -> list[dict]:
    """Per segment, the mean over the episodes that reached its judged window of every metric above."""
    rows = []
    for i, segment in enumerate(schedule):
        reached = [ep["segments"][i] for ep in episodes if ep["segments"][i]["samples"]]
        row: dict[str, Any] = {"name": segment.name, "command": list(segment.command), "episodes": len(reached)}
        if reached:
            for key in ("measured_mean", "err_mean", "err_p95"):
                row[key] = {a: round(float(np.mean([m[key][a] for m in reached])), 4) for a in AXES}
            row["tilt_max"] = round(float(np.mean([m["tilt_max"] for m in reached])), 4)
            unpushed = [m for m in reached if "drift_m" in m and not m["pushed"]]  # a push is not the policy's drift
            for key in ("drift_m", "yaw_drift_rad", "sway_rms") if unpushed else ():
                row[key] = round(float(np.mean([m[key] for m in unpushed])), 4)
        rows.append(row)
    return rows


def segment_failures(row: dict, th: Thresholds) -> list[str]:
    """The criteria one aggregated segment fails, as sentences."""
    name, command = row["name"], row["command"]
    if not row["episodes"]:
        return [f"'{name}': no episode reached it"]
    failed = []
    for axis, cmd in zip(AXES, command, strict=True):
        limit, unit = (th.max_yaw_err, "rad/s") if axis == "yaw_rate" else (th.max_lin_err, "m/s")
        err = row["err_mean"][axis]
        if err > limit:
            failed.append(f"'{name}': mean |{axis} error| {err:.3f} > {limit} {unit}")
        if cmd != 0.0:
            ratio = row["measured_mean"][axis] / cmd
            if abs(ratio - 1.0) > th.rel_tol + 1e-9:  # the bounds themselves pass
                failed.append(
                    f"'{name}': {axis} at {round(ratio, 3) + 0.0:.1%} of the command "  # + 0.0: no "-0.0%"
                    f"(allowed {1 - th.rel_tol:.0%}-{1 + th.rel_tol:.0%})"
                )
    if "drift_m" in row:  # absent when every episode was pushed in this window
        if row["drift_m"] > th.max_stand_drift:
            failed.append(f"'{name}': drifted {row['drift_m']:.3f} m > {th.max_stand_drift} m standing still")
        if row["yaw_drift_rad"] > th.max_stand_yaw:
            failed.append(f"'{name}': turned {row['yaw_drift_rad']:.3f} rad > {th.max_stand_yaw} rad standing still")
    return failed


def evaluate(episodes: Sequence[dict], cfg: Sim2SimConfig) -> tuple[list[str], list[dict], float]:
    """(failed criteria as sentences, aggregated segment rows, survival rate)."""
    th = cfg.thresholds
    if not episodes:
        raise ValueError("no episodes to judge")
    survived = [ep for ep in episodes if ep["survived"]]
    rate = len(survived) / len(episodes)
    failed = [] if survived else ["no episode survived: tracking not judged"]
    if rate < th.min_survival:
        falls = "; ".join(
            f"episode {i} at {ep['fell_at']:.2f} s ({ep['fall_reason']})"
            for i, ep in enumerate(episodes)
            if not ep["survived"]
        )
        failed.append(f"survival {rate:.0%} < {th.min_survival:.0%}: {falls}")
    rows = aggregate(survived, cfg.schedule)
    if survived:
        for row in rows:
            failed += segment_failures(row, th)
    limit = th.max_joint_limit_violations
    for i, ep in enumerate(episodes):
        if limit is not None and ep["joint_limit_violation_steps"] > limit:
            steps = ep["joint_limit_violation_steps"]
            failed.append(f"episode {i}: {steps} steps with joints outside limits > {limit}")
    return failed, rows, rate


def range_warnings(meta: PolicyMetadata, schedule: Sequence[Segment]) -> list[str]:
    """Commands outside the trained ranges: a failure there is the schedule's fault, not the export's."""
    index, ranges, warnings = BASE_VELOCITY.index(meta.command_names), meta.command_ranges, []
    for segment in schedule:
        for name, i, (lo, hi) in zip(meta.command_names, index, ranges, strict=True):
            if not lo - 1e-9 <= segment.command[i] <= hi + 1e-9:
                warnings.append(f"segment '{segment.name}': {name} {segment.command[i]} outside trained [{lo}, {hi}]")
    return warnings
