"""Outputs of a sim-to-sim run: the tracking plot, an MP4 of one episode, report.json and the printed summary."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.sim2sim.config import AXES, Segment, Sim2SimConfig, Sim2SimError


def plot_tracking(episodes: Sequence[dict], schedule: Sequence[Segment], path: Path) -> None:
    """Commanded vs measured vx, vy and yaw rate over time, every episode overlaid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(10, 7), sharex=True)
    labels = ("vx [m/s]", "vy [m/s]", "yaw rate [rad/s]")
    boundaries = np.cumsum([s.duration for s in schedule])[:-1]
    for i, ep in enumerate(episodes):
        trace = ep["trace"]
        for axis, ax in enumerate(axes):
            if i == 0:
                ax.plot(trace["t"], trace["command"][:, axis], "k--", label="command")
            ax.plot(trace["t"], trace["measured"][:, axis], alpha=0.8, label=f"episode {i}")
            if ep["fell_at"] is not None:
                ax.axvline(ep["fell_at"], color="r", lw=1)
    for ax, label in zip(axes, labels, strict=True):
        ax.set_ylabel(label)
        for b in boundaries:
            ax.axvline(b, color="0.8", lw=0.8, zorder=0)
    axes[0].legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("time [s] (red: fall)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


class VideoRecorder:
    """Offscreen frames of one episode, written as MP4. Checks its prerequisites on construction."""

    def __init__(self, robot: MujocoRobot, path: str | Path, fps: float = 25.0, size: tuple[int, int] = (480, 640)):
        try:
            self.renderer = mujoco.Renderer(robot.model, *size)
        except Exception as exc:  # GL back-ends fail with several exception types, some unprintable
            raise Sim2SimError(
                f"offscreen rendering unavailable ({type(exc).__name__} with MUJOCO_GL="
                f"{os.environ.get('MUJOCO_GL', '<unset>')}); set MUJOCO_GL=egl (GPU) or MUJOCO_GL=osmesa "
                "(CPU, needs libosmesa6) before starting Python, or run without --video"
            ) from exc
        try:
            import imageio  # noqa: F401
        except ImportError as exc:
            raise Sim2SimError("video needs imageio with ffmpeg: pip install 'imageio[ffmpeg]'") from exc
        self.robot, self.path, self.frames = robot, Path(path), []
        self.every = max(1, round(1.0 / (fps * robot.meta.control_dt)))
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        self.camera.trackbodyid = robot.base_body
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 1.8, 135.0, -20.0

    def __call__(self, step: int) -> None:
        if step % self.every == 0:
            self.renderer.update_scene(self.robot.data, self.camera)
            self.frames.append(self.renderer.render())

    def save(self) -> Path:
        import imageio

        self.path.parent.mkdir(parents=True, exist_ok=True)
        imageio.mimsave(self.path, self.frames, fps=1.0 / (self.every * self.robot.meta.control_dt))
        self.renderer.close()
        return self.path


def write_outputs(report: dict, episodes: Sequence[dict], cfg: Sim2SimConfig, recorder: VideoRecorder | None) -> None:
    if recorder is not None:
        report["video"] = str(recorder.save())
    if cfg.out_dir is None:
        return
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plot_tracking(episodes, cfg.schedule, out / "tracking.png")
    report["plot"] = str(out / "tracking.png")
    report["report_json"] = str(out / "report.json")
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")


def format_summary(report: dict[str, Any]) -> str:
    """A short human-readable verdict: survival, then one tracking line per segment (mean over episodes)."""
    episodes = report["episodes"]
    lines = [
        f"sim2sim {report['policy']} ({report['task_id']}): {'PASSED' if report['passed'] else 'FAILED'}",
        f"{len(episodes)} episode(s), survival {report['survival_rate']:.0%}; per segment, mean over survivors:",
    ]
    for row in report["segments"]:
        if not row["episodes"]:
            lines.append(f"  {row['name']:<15} not reached")
            continue
        measured = " ".join(f"{row['measured_mean'][a]:+.2f}" for a in AXES)
        errors = " ".join(f"{row['err_mean'][a]:.3f}" for a in AXES)
        line = f"  {row['name']:<15} cmd {_fmt(row['command'])}  measured {measured}  |err| {errors}"
        if "drift_m" in row:
            line += f"  drift {row['drift_m']:.3f} m yaw {row['yaw_drift_rad']:.3f} rad sway {row['sway_rms']:.3f} m/s"
        lines.append(line)
    if len(episodes) > 1:
        for i, ep in enumerate(episodes):
            if not ep["survived"]:
                lines.append(f"  episode {i}: fell at {ep['fell_at']:.2f} s ({ep['fall_reason']}); {_fmt_perturb(ep)}")
    lines += [f"FAILED: {f}" for f in report["failed"]] + [f"warning: {w}" for w in report["warnings"]]
    if "report_json" in report:
        lines.append(f"report: {report['report_json']}  plot: {report['plot']}")
    return "\n".join(lines)


def _fmt(values: Sequence[float]) -> str:
    return "(" + ", ".join(f"{v:+.2f}" for v in values) + ")"


def _fmt_perturb(ep: dict[str, Any]) -> str:
    p = ep["perturbations"]
    friction = "MJCF" if p["friction"] is None else f"{p['friction']:.2f}"
    return (
        f"friction {friction}, payload {p['payload_kg']:+.2f} kg, latency {p['latency_physics_steps']} physics steps, "
        f"Kp x{min(p['kp_scale']):.2f}-{max(p['kp_scale']):.2f}"
    )
