"""The verdict: tracking errors per segment, the pass criteria applied to every episode, range warnings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim2real_deploy.commands import BASE_VELOCITY
from sim2real_deploy.policy_file import PolicyMetadata
from sim2real_deploy.sim2sim.config import Segment, Sim2SimConfig


def segment_metrics(trace: dict[str, np.ndarray], schedule: Sequence[Segment], transition_s: float) -> list[dict]:
    """Tracking errors per segment, after its first ``transition_s`` seconds; ``samples`` 0 after a fall."""
    metrics, start = [], 0.0
    for segment in schedule:
        end = start + segment.duration
        mask = (trace["t"] > start + transition_s) & (trace["t"] <= end + 1e-9)
        entry: dict[str, Any] = {
            "name": segment.name,
            "command": list(segment.command),
            "start": start,
            "end": end,
            "samples": int(mask.sum()),
        }
        if mask.any():
            measured, command = trace["measured"][mask], trace["command"][mask]
            lin = np.linalg.norm(measured[:, :2] - command[:, :2], axis=1)
            lin_x = np.abs(measured[:, 0] - command[:, 0])
            yaw = np.abs(measured[:, 2] - command[:, 2])
            entry.update(
                lin_vel_err_mean=float(lin.mean()),
                lin_vel_err_p95=float(np.percentile(lin, 95)),
                lin_x_err_mean=float(lin_x.mean()),
                yaw_rate_err_mean=float(yaw.mean()),
                yaw_rate_err_p95=float(np.percentile(yaw, 95)),
                measured_mean=measured.mean(axis=0).round(4).tolist(),
            )
        metrics.append(entry)
        start = end
    return metrics


def evaluate(episodes: Sequence[dict], cfg: Sim2SimConfig) -> tuple[list[str], list[str]]:
    """(failed criteria, skipped criteria), each a readable sentence; every episode must meet every criterion."""
    th, names = cfg.thresholds, {s.name for s in cfg.schedule}
    failed: list[str] = []
    skipped = [
        f"{metric} <= {limit} {unit} in '{seg}': segment not in schedule"
        for metric, limit, segments, unit in th.segment_criteria()
        for seg in segments
        if seg not in names
    ]
    for i, ep in enumerate(episodes):
        if th.require_survival and not ep["survived"]:
            failed.append(f"episode {i}: fell at {ep['fell_at']:.2f} s ({ep['fall_reason']})")
        by_name = {m["name"]: m for m in ep["segments"]}
        for metric, limit, segments, unit in th.segment_criteria():
            for seg in (s for s in segments if s in by_name):
                value = by_name[seg].get(metric)
                if value is None:
                    failed.append(f"episode {i}: no {metric} in '{seg}' (fell before it)")
                elif value > limit:
                    failed.append(f"episode {i}: {metric} {value:.3f} > {limit} {unit} in '{seg}'")
        limit = th.max_joint_limit_violations
        if limit is not None and ep["joint_limit_violation_steps"] > limit:
            steps = ep["joint_limit_violation_steps"]
            failed.append(f"episode {i}: {steps} steps with joints outside limits > {limit}")
    return failed, skipped


def range_warnings(meta: PolicyMetadata, schedule: Sequence[Segment]) -> list[str]:
    """Commands outside the trained ranges: a failure there is the schedule's fault, not the export's."""
    index, ranges, warnings = BASE_VELOCITY.index(meta.command_names), meta.command_ranges, []
    for segment in schedule:
        for name, i, (lo, hi) in zip(meta.command_names, index, ranges, strict=True):
            if not lo - 1e-9 <= segment.command[i] <= hi + 1e-9:
                warnings.append(f"segment '{segment.name}': {name} {segment.command[i]} outside trained [{lo}, {hi}]")
    return warnings
