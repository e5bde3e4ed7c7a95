"""One sim-to-sim episode: the policy drives the simulated robot through the command schedule."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sim2real_deploy.commands import BASE_VELOCITY
from sim2real_deploy.mujoco_robot import DOF_FIELDS, MujocoRobot
from sim2real_deploy.observations import ObservationBuilder
from sim2real_deploy.policy_file import PolicyMetadata, joint_dynamics_quantile
from sim2real_deploy.sim2sim.config import FallRule, Randomization, Segment, Sim2SimConfig, Sim2SimError


class SlewLimit:
    """Control-step targets moved at most ``max_step`` per tick, as policy_node clamps them (``None``: no limit);
    records every target. ``start``: the measured pose the first target is limited against, as policy_node limits
    it (``None``: the first target is free)."""

    def __init__(self, max_step: np.ndarray | None, start: np.ndarray | None = None):
        self.max_step, self.targets = max_step, []
        self.previous = None if start is None else start.copy()

    def __call__(self, target: np.ndarray) -> np.ndarray:
        if self.max_step is not None and self.previous is not None:
            target = np.clip(target, self.previous - self.max_step, self.previous + self.max_step)
        self.previous = target
        self.targets.append(target)
        return target


def target_steps(meta: PolicyMetadata, fraction: float | None) -> np.ndarray | None:
    """The most each joint target may move per control step [rad] under policy_node's slew limit at ``fraction`` x
    no-load speed, or None for no limit (``fraction`` 0). ``fraction`` None: the limit the policy trained behind
    (``training.domain_randomization.max_target_rate``; joints it names no rate for, e.g. held ones, move freely),
    else none."""
    if fraction is None:
        trained = meta.domain_randomization.get("max_target_rate")
        if not trained:
            return None
        return np.array([trained.get(j, np.inf) for j in meta.joint_names]) * meta.control_dt
    return fraction * meta.joint_array("velocity_limit") * meta.control_dt if fraction > 0 else None


def sample_perturbations(rand: Randomization, rng: np.random.Generator, duration: float, robot: MujocoRobot) -> dict:
    """One episode's perturbations (plain values, so the report can record them)."""
    n = len(robot.dof_adr)

    def uniform(bounds: tuple[float, float] | None, size: int | None = None, default: float = 0.0):
        if bounds is None:
            return default if size is None else np.full(size, default)
        return float(rng.uniform(*bounds)) if size is None else rng.uniform(bounds[0], bounds[1], size)

    pushes = []
    if rand.push_interval_s:
        t = float(rng.uniform(*rand.push_interval_s))
        while t < duration:
            pushes.append((t, rng.uniform(-rand.push_velocity, rand.push_velocity, 2)))
            t += float(rng.uniform(*rand.push_interval_s))
    return {
        "friction": uniform(rand.friction, default=None),
        "latency_physics_steps": round(uniform(rand.latency_s) / robot.model.opt.timestep),
        "payload_kg": uniform(rand.payload_kg),
        "kp_scale": uniform(rand.kp_scale, n, 1.0),
        "kd_scale": uniform(rand.kd_scale, n, 1.0),
        "joint_dynamics": _joint_dynamics(rand, rng, robot),
        "pushes": pushes,
    }


def _joint_dynamics(rand: Randomization, rng: np.random.Generator, robot: MujocoRobot) -> dict[str, np.ndarray]:
    """Absolute per-joint passive dynamics: the trained ranges, or scales of the MJCF's values."""
    if rand.joint_dynamics == "trained":
        trained = robot.meta.trained_joint_dynamics
        if trained is None:
            raise Sim2SimError("joint_dynamics='trained': the policy's metadata records no joint-dynamics ranges")
        log_uniform = robot.meta.joint_dynamics_log_uniform
        return {
            key: joint_dynamics_quantile(key, r[:, 0], r[:, 1], rng.uniform(size=len(r)), log_uniform)
            for key, r in trained.items()
        }
    if rand.joint_dynamics != "scale":
        raise Sim2SimError(f"joint_dynamics must be 'scale' or 'trained', not {rand.joint_dynamics!r}")
    scales = dict(zip(DOF_FIELDS, (rand.joint_damping, rand.joint_friction, rand.joint_armature), strict=True))
    n = len(robot.dof_adr)
    return {key: robot.nominal_joint_dynamics[key] * rng.uniform(*b, n) for key, b in scales.items() if b is not None}


def command_at(schedule: Sequence[Segment], t: float) -> np.ndarray:
    """The schedule's (vx, vy, yaw rate) at time ``t``."""
    end = 0.0
    for segment in schedule:
        end += segment.duration
        if t < end:
            return np.asarray(segment.command, dtype=np.float64)
    return np.asarray(schedule[-1].command, dtype=np.float64)


def run_episode(
    policy: Callable[[np.ndarray], np.ndarray],
    robot: MujocoRobot,
    cfg: Sim2SimConfig,
    perturb: dict[str, Any],
    base_height: float,
    on_control_step: Callable[[int], None] | None = None,
    target_filter: Callable[[np.ndarray], np.ndarray] | None = None,
    fall: FallRule | None = None,
) -> dict[str, Any]:
    """Run the schedule once; return the trace (per control step) and the episode's summary. ``target_filter``
    may reshape each control step's joint targets on their way to the motors (a node's slew limit); ``fall``
    defaults to ``FallRule.of(robot.meta, cfg)``."""
    fall = fall or FallRule.of(robot.meta, cfg)
    meta, observe = robot.meta, ObservationBuilder.from_metadata(robot.meta)
    command_index = BASE_VELOCITY.index(meta.command_names)
    robot.set_dynamics(perturb["payload_kg"], perturb["kp_scale"], perturb["kd_scale"], perturb["joint_dynamics"])
    robot.reset(base_height, perturb["friction"])
    dt, decimation = meta.control_dt, robot.decimation
    n_steps = round(sum(s.duration for s in cfg.schedule) / dt)
    last_action = np.zeros(meta.num_actions)
    # targets in flight, one per physics step: a new target reaches the motors latency_physics_steps after it is sent
    still = np.zeros(len(command_index))  # before the first command: no held joint swings
    in_flight = deque([meta.targets_from_actions(last_action, still)] * (perturb["latency_physics_steps"] + 1))
    pushes = list(perturb["pushes"])
    trace: dict[str, list] = {key: [] for key in ("t", "command", "measured", "height", "xy", "yaw", "tilt", "pushed")}
    fell_at, fall_reason = None, None
    for k in range(n_steps):
        t = k * dt
        pushed = bool(pushes) and t >= pushes[0][0]
        if pushed:
            robot.push(pushes.pop(0)[1])
        command = command_at(cfg.schedule, t)
        obs = observe(robot.state(), command[command_index], last_action, tick=k)
        action = meta.clip_action(np.asarray(policy(obs), dtype=np.float64))
        target = meta.targets_from_actions(action, command[command_index], tick=k)
        if target_filter is not None:
            target = target_filter(target)
        for _ in range(decimation):
            in_flight.append(target)
            in_flight.popleft()
            robot.physics_step(in_flight[0])
        last_action = action  # the observation term is the latest (clipped) network output, delayed or not
        trace["t"].append(t + dt)
        trace["command"].append(command)
        trace["measured"].append(robot.measured_velocity())
        trace["height"].append(robot.base_height)
        trace["xy"].append(robot.data.qpos[robot.base_qpos : robot.base_qpos + 2].copy())
        trace["yaw"].append(robot.yaw())
        trace["tilt"].append(robot.tilt())
        trace["pushed"].append(pushed)
        if on_control_step is not None:
            on_control_step(k)
        fall_reason = _fall_reason(robot, fall)
        if fall_reason:
            fell_at = t + dt
            break
    return {
        "trace": {key: np.asarray(value) for key, value in trace.items()},
        "survived": fell_at is None,
        "fell_at": fell_at,
        "fall_reason": fall_reason,
        "joint_limit_violation_steps": int(robot.violation_steps),
        "joint_limit_violations": dict(zip(meta.joint_names, robot.violations.tolist(), strict=True)),
        "max_torque": dict(zip(meta.joint_names, np.round(robot.max_torque, 3).tolist(), strict=True)),
        "min_base_height": float(np.min(trace["height"])),
    }


def _fall_reason(robot: MujocoRobot, fall: FallRule) -> str | None:
    if robot.base_height < fall.min_base_height:
        return f"base height {robot.base_height:.3f} m < {fall.min_base_height:.3f} m"
    if robot.tilt() > fall.max_tilt:
        return f"base tilt {robot.tilt():.2f} rad > {fall.max_tilt} rad"
    return None
