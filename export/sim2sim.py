"""Sim-to-sim check: run an exported policy file in native MuJoCo, as the robot would run it.

Reads only what a robot has: the ONNX file, its embedded metadata and the robot's MJCF. Joints are bound
by name, PD torques with Isaac Lab's DC-motor saturation are computed here at the physics rate, and
observations are assembled by term name from the MuJoCo state. A scripted command schedule drives the
policy and the report says whether it survived and tracked the commands. Joint-order, action-scale or
observation bugs in the export or the metadata show up here instead of on hardware.

No torch or Isaac Lab anywhere in this module's imports (tested): it runs on a deployment install with
numpy, mujoco, onnxruntime (and matplotlib for the plot).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from sim2real import REPO_ROOT

from ._reader import OnnxPolicy, PolicyFileError, PolicyMetadata
from .obs_terms import TERM_SIZES

# Command names the schedule's (vx, vy, yaw rate) triple maps to, by name.
COMMAND_INDEX = {"lin_vel_x": 0, "lin_vel_y": 1, "ang_vel_z": 2}


class Sim2SimError(RuntimeError):
    """The check could not run (model/metadata mismatch, rendering unavailable...). Not a policy failure."""


@dataclass(frozen=True)
class Segment:
    """A constant command held for ``duration`` seconds: (lin_vel_x [m/s], lin_vel_y [m/s], ang_vel_z [rad/s])."""

    name: str
    duration: float
    command: tuple[float, float, float]

    def __post_init__(self) -> None:  # plain floats, so reports and comparisons do not depend on the caller's types
        object.__setattr__(self, "duration", float(self.duration))
        object.__setattr__(self, "command", tuple(float(c) for c in self.command))


DEFAULT_SCHEDULE = (
    Segment("stand", 3.0, (0.0, 0.0, 0.0)),
    Segment("forward_0.5", 4.0, (0.5, 0.0, 0.0)),
    Segment("forward_1.0", 4.0, (1.0, 0.0, 0.0)),
    Segment("sideways_0.3", 3.0, (0.0, 0.3, 0.0)),
    Segment("turn_0.8", 3.0, (0.0, 0.0, 0.8)),
    Segment("stop", 3.0, (0.0, 0.0, 0.0)),
)


@dataclass(frozen=True)
class Thresholds:
    """Pass criteria. A criterion naming a segment absent from the schedule is skipped (and listed)."""

    require_survival: bool = True
    max_lin_x_err: float = 0.15  # mean |vx - cmd_x| [m/s]
    lin_x_segments: tuple[str, ...] = ("forward_0.5", "forward_1.0")
    max_yaw_err: float = 0.3  # mean |yaw rate - cmd| [rad/s]
    yaw_segments: tuple[str, ...] = ("turn_0.8",)
    max_joint_limit_violations: int | None = None  # physics steps with a joint outside its limits; None: report only

    def segment_criteria(self) -> tuple[tuple[str, float, tuple[str, ...], str], ...]:
        """(metric, limit, segments, unit) for each per-segment tracking criterion."""
        return (
            ("lin_x_err_mean", self.max_lin_x_err, self.lin_x_segments, "m/s"),
            ("yaw_rate_err_mean", self.max_yaw_err, self.yaw_segments, "rad/s"),
        )


@dataclass(frozen=True)
class Randomization:
    """Per-episode perturbations, all off by default; sampled from a generator seeded by (seed, episode)."""

    # sliding friction of every contact (all geoms set alike, so MJCF priorities do not matter); None: the MJCF's
    friction: tuple[float, float] | None = None
    push_interval_s: tuple[float, float] | None = None  # time between pushes
    push_velocity: float = 0.5  # max |delta v| per horizontal axis [m/s], as Isaac Lab's push_by_setting_velocity
    latency_steps: tuple[int, int] = (0, 0)  # action delay in control steps, inclusive range


# Friction as the Go2 task's training range (0.4-1.25); the MJCF's own foot friction is 0.4.
RANDOMIZED = Randomization(friction=(0.4, 1.25), push_interval_s=(4.0, 7.0), latency_steps=(0, 1))


@dataclass(frozen=True)
class Sim2SimConfig:
    """Everything a run depends on besides the policy file; stored in the report for reproducibility."""

    schedule: tuple[Segment, ...] = DEFAULT_SCHEDULE
    episodes: int = 1
    seed: int = 0
    randomization: Randomization = field(default_factory=Randomization)
    thresholds: Thresholds = field(default_factory=Thresholds)
    transition_s: float = 0.5  # skipped at the start of each segment when measuring tracking
    min_base_height: float = 0.15  # fall: base below this [m] ...
    max_tilt: float = 1.0  # ... or base z axis this far from vertical [rad]
    limit_tolerance: float = 0.01  # MuJoCo limits are soft: slack before a joint counts as outside [rad]
    mjcf: str | None = None  # override the metadata's robot.mjcf (relative to the repo root or absolute)
    init_base_height: float | None = None  # None: feet just touching the floor in the default pose
    out_dir: str | None = None  # where report.json and tracking.png go; None writes nothing
    video: str | None = None  # MP4 of episode 0 (needs offscreen GL and imageio[ffmpeg])


# ----------------------------------------------------------------------------------------------- scene


def build_scene(mjcf: str | Path, physics_dt: float) -> mujoco.MjModel:
    """The robot MJCF plus a flat floor and a light; the MJCF's own contact options are kept."""
    spec = mujoco.MjSpec.from_file(str(mjcf))
    spec.option.timestep = physics_dt
    spec.add_texture(
        name="sim2sim_grid",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.2, 0.3, 0.4],
        rgb2=[0.1, 0.2, 0.3],
        width=300,
        height=300,
    )
    material = spec.add_material(name="sim2sim_grid", texrepeat=[5, 5], texuniform=True)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "sim2sim_grid"
    spec.worldbody.add_geom(
        name="sim2sim_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="sim2sim_grid"
    )
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    return spec.compile()


def dc_motor_torque(
    target: np.ndarray,
    q: np.ndarray,
    qd: np.ndarray,
    kp: np.ndarray,
    kd: np.ndarray,
    effort: np.ndarray,
    vmax: np.ndarray,
) -> np.ndarray:
    """PD torque saturated by Isaac Lab's ``DCMotor`` torque-speed curve (saturation effort = effort limit).

    Driving with the motion, the available torque falls linearly from ``effort`` at rest to 0 at ``vmax``;
    braking against it, up to ``effort``.
    """
    tau = kp * (target - q) - kd * qd
    hi = np.clip(effort * (1.0 - qd / vmax), 0.0, effort)
    lo = np.clip(effort * (-1.0 - qd / vmax), -effort, 0.0)
    return np.clip(tau, lo, hi)


class RobotSim:
    """MuJoCo model + data with the policy's joints bound by name and PD control at the physics rate."""

    def __init__(self, model: mujoco.MjModel, meta: PolicyMetadata, limit_tolerance: float = 0.0):
        self.model, self.data, self.meta = model, mujoco.MjData(model), meta
        self.limit_tolerance = limit_tolerance
        self.decimation = _decimation(meta)
        self._bind_base()
        self._bind_joints(meta.joint_names)
        self.kp, self.kd = meta.joint_array("stiffness"), meta.joint_array("damping")
        self.effort, self.vmax = meta.joint_array("effort_limit"), meta.joint_array("velocity_limit")
        self.default_pos = meta.joint_array("default_joint_pos")
        self.limits = meta.joint_array("joint_pos_limits")
        self.nominal_friction = model.geom_friction[:, 0].copy()

    def _bind_base(self) -> None:
        free = [j for j in range(self.model.njnt) if self.model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        if len(free) != 1:
            raise Sim2SimError(f"expected one floating base (free joint) in the MJCF, found {len(free)}")
        self.base_body = int(self.model.jnt_bodyid[free[0]])
        self.base_qpos = int(self.model.jnt_qposadr[free[0]])
        self.base_dof = int(self.model.jnt_dofadr[free[0]])

    def _bind_joints(self, names: Sequence[str]) -> None:
        """Addresses of each policy joint and of the motor driving it, matched by joint name."""
        qpos, dof, act, gear = [], [], [], []
        for name in names:
            joint = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if joint < 0:
                raise Sim2SimError(f"policy joint {name!r} is not in the MJCF")
            motors = [
                a
                for a in range(self.model.nu)
                if self.model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                and self.model.actuator_trnid[a, 0] == joint
            ]
            if len(motors) != 1:
                raise Sim2SimError(f"joint {name!r} is driven by {len(motors)} actuators in the MJCF, expected 1")
            qpos.append(self.model.jnt_qposadr[joint])
            dof.append(self.model.jnt_dofadr[joint])
            act.append(motors[0])
            gear.append(self.model.actuator_gear[motors[0], 0])
        self.qpos_adr, self.dof_adr = np.array(qpos), np.array(dof)
        self.act_id, self.gear = np.array(act), np.array(gear)

    def standing_height(self) -> float:
        """Base height at which the lowest collision geom just touches z = 0 in the default pose."""
        self.data.qpos[:] = self.model.qpos0
        self.data.qpos[self.base_qpos : self.base_qpos + 7] = [0, 0, 0, 1, 0, 0, 0]
        self.data.qpos[self.qpos_adr] = self.default_pos
        mujoco.mj_kinematics(self.model, self.data)
        lowest = np.inf
        for g in range(self.model.ngeom):
            if self.model.geom_bodyid[g] == 0 or not (self.model.geom_contype[g] or self.model.geom_conaffinity[g]):
                continue
            rot_z = self.data.geom_xmat[g].reshape(3, 3)[2]
            center, half = self.model.geom_aabb[g, :3], self.model.geom_aabb[g, 3:]
            lowest = min(lowest, self.data.geom_xpos[g, 2] + rot_z @ center - np.abs(rot_z) @ half)
        return float(-lowest + 0.005)

    def reset(self, base_height: float, friction: float | None = None) -> None:
        """Default pose, base level at ``base_height``, at rest; per-episode counters cleared."""
        self.model.geom_friction[:, 0] = self.nominal_friction if friction is None else friction
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.base_qpos : self.base_qpos + 7] = [0, 0, base_height, 1, 0, 0, 0]
        self.data.qpos[self.qpos_adr] = self.default_pos
        mujoco.mj_forward(self.model, self.data)
        self.max_torque = np.zeros(len(self.act_id))
        self.violations = np.zeros(len(self.act_id), dtype=int)
        self.violation_steps = 0

    @property
    def q(self) -> np.ndarray:
        return self.data.qpos[self.qpos_adr]

    @property
    def qd(self) -> np.ndarray:
        return self.data.qvel[self.dof_adr]

    @property
    def base_rot(self) -> np.ndarray:
        return self.data.xmat[self.base_body].reshape(3, 3)

    @property
    def base_height(self) -> float:
        return float(self.data.qpos[self.base_qpos + 2])

    def step(self, target: np.ndarray) -> None:
        """One control period: ``decimation`` physics steps of PD torque towards ``target`` (policy order).

        Torques go to ``data.ctrl`` of each joint's own motor (divided by its gear); the MJCF motors'
        ctrlrange equals the effort limit, so MuJoCo's clamp never binds after ours.
        """
        lo, hi = self.limits[:, 0] - self.limit_tolerance, self.limits[:, 1] + self.limit_tolerance
        for _ in range(self.decimation):
            tau = dc_motor_torque(target, self.q, self.qd, self.kp, self.kd, self.effort, self.vmax)
            self.data.ctrl[self.act_id] = tau / self.gear
            mujoco.mj_step(self.model, self.data)
            self.max_torque = np.maximum(self.max_torque, np.abs(tau))
            outside = (self.q < lo) | (self.q > hi)
            self.violations += outside
            self.violation_steps += bool(outside.any())

    def push(self, delta_v: np.ndarray) -> None:
        self.data.qvel[self.base_dof : self.base_dof + 2] += delta_v

    def observe(self, command: np.ndarray, last_action: np.ndarray) -> dict[str, np.ndarray]:
        """Every known observation term, raw (before scale and clip), from the current state."""
        rot = self.base_rot
        return {
            # MuJoCo's free-joint angular velocity is already in the body frame (the IMU gyro).
            "base_ang_vel": self.data.qvel[self.base_dof + 3 : self.base_dof + 6].copy(),
            "projected_gravity": rot.T @ np.array([0.0, 0.0, -1.0]),
            "velocity_commands": command,
            "joint_pos": self.q - self.default_pos,
            "joint_vel": self.qd.copy(),
            "actions": last_action,
        }

    def measured_velocity(self) -> np.ndarray:
        """(vx, vy) in the yaw-aligned frame and the yaw rate: what the commands ask for, free of pitch/roll."""
        rot = self.base_rot
        yaw = np.arctan2(rot[1, 0], rot[0, 0])
        vx_w, vy_w = self.data.qvel[self.base_dof : self.base_dof + 2]
        c, s = np.cos(yaw), np.sin(yaw)
        yaw_rate = (rot @ self.data.qvel[self.base_dof + 3 : self.base_dof + 6])[2]
        return np.array([c * vx_w + s * vy_w, -s * vx_w + c * vy_w, yaw_rate])

    def tilt(self) -> float:
        return float(np.arccos(np.clip(self.base_rot[2, 2], -1.0, 1.0)))


def _decimation(meta: PolicyMetadata) -> int:
    ratio = meta.control_dt / meta.physics_dt
    if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
        raise Sim2SimError(f"control_dt {meta.control_dt} is not a multiple of physics_dt {meta.physics_dt}")
    return round(ratio)


class ObservationAssembler:
    """Builds the policy input from the metadata's terms, by name, applying each term's scale and clip."""

    def __init__(self, meta: PolicyMetadata):
        self.terms = []
        for term in meta.observations:
            if term["name"] not in TERM_SIZES:
                raise Sim2SimError(f"observation term {term['name']!r} has no robot-side implementation")
            scale = np.broadcast_to(np.asarray(term["scale"], dtype=np.float64), (int(term["size"]),))
            self.terms.append((term["name"], int(term["size"]), scale, term["clip"]))
        self.command_index = _command_index(meta.command_names)

    def __call__(self, raw: dict[str, np.ndarray]) -> np.ndarray:
        parts = []
        for name, size, scale, clip in self.terms:
            value = raw[name] if name != "velocity_commands" else raw[name][self.command_index]
            if value.shape != (size,):
                raise Sim2SimError(f"observation term {name!r}: computed size {value.shape}, metadata says {size}")
            value = scale * value
            parts.append(np.clip(value, clip[0], clip[1]) if clip is not None else value)
        return np.concatenate(parts).astype(np.float32)


def _command_index(names: Sequence[str]) -> np.ndarray:
    unknown = [n for n in names if n not in COMMAND_INDEX]
    if unknown:
        raise Sim2SimError(f"commands {unknown} unknown to the sim-to-sim schedule (known: {list(COMMAND_INDEX)})")
    return np.array([COMMAND_INDEX[n] for n in names])


# ----------------------------------------------------------------------------------------------- episodes


def _sample_perturbations(rand: Randomization, rng: np.random.Generator, duration: float) -> dict[str, Any]:
    friction = float(rng.uniform(*rand.friction)) if rand.friction else None
    latency = int(rng.integers(rand.latency_steps[0], rand.latency_steps[1] + 1))
    pushes = []
    if rand.push_interval_s:
        t = float(rng.uniform(*rand.push_interval_s))
        while t < duration:
            pushes.append((t, rng.uniform(-rand.push_velocity, rand.push_velocity, 2)))
            t += float(rng.uniform(*rand.push_interval_s))
    return {"friction": friction, "latency_steps": latency, "pushes": pushes}


def _command_at(schedule: Sequence[Segment], t: float) -> np.ndarray:
    end = 0.0
    for segment in schedule:
        end += segment.duration
        if t < end:
            return np.asarray(segment.command, dtype=np.float64)
    return np.asarray(schedule[-1].command, dtype=np.float64)


def run_episode(
    policy: Callable[[np.ndarray], np.ndarray],
    sim: RobotSim,
    cfg: Sim2SimConfig,
    perturb: dict[str, Any],
    base_height: float,
    on_control_step: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run the schedule once; return the trace (per control step) and the episode's summary."""
    meta, assemble = sim.meta, ObservationAssembler(sim.meta)
    sim.reset(base_height, perturb["friction"])
    dt = meta.control_dt
    n_steps = round(sum(s.duration for s in cfg.schedule) / dt)
    last_action = np.zeros(meta.num_joints)
    queue = deque([last_action] * perturb["latency_steps"])  # actions in flight (latency)
    pushes = list(perturb["pushes"])
    trace: dict[str, list] = {"t": [], "command": [], "measured": [], "height": []}
    fell_at, fall_reason = None, None
    for k in range(n_steps):
        t = k * dt
        if pushes and t >= pushes[0][0]:
            sim.push(pushes.pop(0)[1])
        command = _command_at(cfg.schedule, t)
        action = np.asarray(policy(assemble(sim.observe(command, last_action))), dtype=np.float64)
        queue.append(action)
        sim.step(meta.targets_from_actions(queue.popleft()))
        last_action = action  # the observation term is the latest network output, delayed or not
        trace["t"].append(t + dt)
        trace["command"].append(command)
        trace["measured"].append(sim.measured_velocity())
        trace["height"].append(sim.base_height)
        if on_control_step is not None:
            on_control_step(k)
        fall_reason = _fall_reason(sim, cfg)
        if fall_reason:
            fell_at = t + dt
            break
    return {
        "trace": {key: np.asarray(value) for key, value in trace.items()},
        "survived": fell_at is None,
        "fell_at": fell_at,
        "fall_reason": fall_reason,
        "joint_limit_violation_steps": int(sim.violation_steps),
        "joint_limit_violations": dict(zip(meta.joint_names, sim.violations.tolist(), strict=True)),
        "max_torque": dict(zip(meta.joint_names, np.round(sim.max_torque, 3).tolist(), strict=True)),
        "min_base_height": float(np.min(trace["height"])),
    }


def _fall_reason(sim: RobotSim, cfg: Sim2SimConfig) -> str | None:
    if sim.base_height < cfg.min_base_height:
        return f"base height {sim.base_height:.3f} m < {cfg.min_base_height} m"
    if sim.tilt() > cfg.max_tilt:
        return f"base tilt {sim.tilt():.2f} rad > {cfg.max_tilt} rad"
    return None


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


def _range_warnings(meta: PolicyMetadata, schedule: Sequence[Segment]) -> list[str]:
    """Commands outside the trained ranges: a failure there is the schedule's fault, not the export's."""
    index, ranges, warnings = _command_index(meta.command_names), meta.command_ranges, []
    for segment in schedule:
        for name, i, (lo, hi) in zip(meta.command_names, index, ranges, strict=True):
            if not lo - 1e-9 <= segment.command[i] <= hi + 1e-9:
                warnings.append(f"segment '{segment.name}': {name} {segment.command[i]} outside trained [{lo}, {hi}]")
    return warnings


# ----------------------------------------------------------------------------------------------- outputs


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

    def __init__(self, sim: RobotSim, path: str | Path, fps: float = 25.0, size: tuple[int, int] = (480, 640)):
        try:
            self.renderer = mujoco.Renderer(sim.model, *size)
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
        self.sim, self.path, self.frames = sim, Path(path), []
        self.every = max(1, round(1.0 / (fps * sim.meta.control_dt)))
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        self.camera.trackbodyid = sim.base_body
        self.camera.distance, self.camera.azimuth, self.camera.elevation = 1.8, 135.0, -20.0

    def __call__(self, step: int) -> None:
        if step % self.every == 0:
            self.renderer.update_scene(self.sim.data, self.camera)
            self.frames.append(self.renderer.render())

    def save(self) -> Path:
        import imageio

        self.path.parent.mkdir(parents=True, exist_ok=True)
        imageio.mimsave(self.path, self.frames, fps=1.0 / (self.every * self.sim.meta.control_dt))
        self.renderer.close()
        return self.path


# ----------------------------------------------------------------------------------------------- entry points


def run_sim2sim(policy_path: str | Path, cfg: Sim2SimConfig | None = None) -> dict[str, Any]:
    """Run ``cfg.episodes`` episodes of the schedule with the policy file; return the report.

    ``report["passed"]`` is the verdict and ``report["failed"]`` lists the failed criteria. Raises
    ``PolicyFileError`` for a file that is not a valid sim2real policy and ``Sim2SimError`` when the
    metadata does not fit the MJCF.
    """
    cfg = cfg or Sim2SimConfig()
    policy = OnnxPolicy(policy_path)
    meta = policy.metadata
    mjcf = _resolve(cfg.mjcf or meta.raw["robot"]["mjcf"])
    sim = RobotSim(build_scene(mjcf, meta.physics_dt), meta, cfg.limit_tolerance)
    height = cfg.init_base_height or sim.standing_height()
    duration = sum(s.duration for s in cfg.schedule)
    recorder = VideoRecorder(sim, cfg.video) if cfg.video else None
    episodes = []
    for i in range(cfg.episodes):
        perturb = _sample_perturbations(cfg.randomization, np.random.default_rng([cfg.seed, i]), duration)
        episode = run_episode(policy, sim, cfg, perturb, height, recorder if i == 0 else None)
        episode.update(
            segments=segment_metrics(episode["trace"], cfg.schedule, cfg.transition_s),
            friction=perturb["friction"],
            latency_steps=perturb["latency_steps"],
            pushes=[{"t": round(t, 3), "delta_v": dv.round(3).tolist()} for t, dv in perturb["pushes"]],
        )
        episodes.append(episode)
    failed, skipped = evaluate(episodes, cfg)
    report = {
        "policy": str(policy_path),
        "task_id": meta.raw["task_id"],
        "training": {k: meta.raw["training"].get(k) for k in ("run_id", "git_revision", "exported_at")},
        "mjcf": str(mjcf),
        "physics_dt": meta.physics_dt,
        "control_dt": meta.control_dt,
        "decimation": sim.decimation,
        "init_base_height": height,
        "passed": not failed,
        "failed": failed,
        "skipped_criteria": skipped,
        "warnings": _range_warnings(meta, cfg.schedule),
        "config": asdict(cfg),
        "episodes": [{k: v for k, v in ep.items() if k != "trace"} for ep in episodes],
    }
    _write_outputs(report, episodes, cfg, recorder)
    return report


def _resolve(path: str | Path) -> Path:
    path = Path(path)
    resolved = path if path.is_absolute() else REPO_ROOT / path
    if not resolved.is_file():
        raise Sim2SimError(f"robot MJCF {resolved} not found (metadata robot.mjcf = {path}); pass an override")
    return resolved


def _write_outputs(report: dict, episodes: Sequence[dict], cfg: Sim2SimConfig, recorder: VideoRecorder | None) -> None:
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sim2real sim2sim",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Run an exported sim2real policy (.onnx) in native MuJoCo with PD control computed as on the robot,\n"
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
    except (PolicyFileError, Sim2SimError) as exc:
        print(f"sim2sim: {exc}", file=sys.stderr)
        return 2
    print(format_summary(report))
    return 0 if report["passed"] else 1


def format_summary(report: dict[str, Any]) -> str:
    """A short human-readable verdict with the per-segment tracking table of each episode."""
    lines = [f"sim2sim {report['policy']} ({report['task_id']}): {'PASSED' if report['passed'] else 'FAILED'}"]
    for i, ep in enumerate(report["episodes"]):
        state = "survived" if ep["survived"] else f"fell at {ep['fell_at']:.2f} s"
        friction = "MJCF" if ep["friction"] is None else f"{ep['friction']:.2f}"
        lines.append(
            f"episode {i}: {state}, friction {friction}, latency {ep['latency_steps']}, "
            f"{ep['joint_limit_violation_steps']} out-of-limit steps"
        )
        for m in ep["segments"]:
            if m["samples"]:
                lines.append(
                    f"  {m['name']:<14} cmd {m['command']}  lin err {m['lin_vel_err_mean']:.3f} "
                    f"(p95 {m['lin_vel_err_p95']:.3f}) m/s  yaw err {m['yaw_rate_err_mean']:.3f} rad/s"
                )
    lines += [f"FAILED: {f}" for f in report["failed"]] + [f"warning: {w}" for w in report["warnings"]]
    lines += [f"not checked: {s}" for s in report["skipped_criteria"]]
    if "report_json" in report:
        lines.append(f"report: {report['report_json']}  plot: {report['plot']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
