"""One sim-to-sim episode: the policy drives the simulated robot through the command schedule."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sim2real_deploy.commands import BASE_VELOCITY
from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.observations import ObservationBuilder
from sim2real_deploy.sim2sim.config import Randomization, Segment, Sim2SimConfig


def sample_perturbations(rand: Randomization, rng: np.random.Generator, duration: float) -> dict[str, Any]:
    friction = float(rng.uniform(*rand.friction)) if rand.friction else None
    latency = int(rng.integers(rand.latency_steps[0], rand.latency_steps[1] + 1))
    pushes = []
    if rand.push_interval_s:
        t = float(rng.uniform(*rand.push_interval_s))
        while t < duration:
            pushes.append((t, rng.uniform(-rand.push_velocity, rand.push_velocity, 2)))
            t += float(rng.uniform(*rand.push_interval_s))
    return {"friction": friction, "latency_steps": latency, "pushes": pushes}


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
) -> dict[str, Any]:
    """Run the schedule once; return the trace (per control step) and the episode's summary."""
    meta, observe = robot.meta, ObservationBuilder.from_metadata(robot.meta)
    command_index = BASE_VELOCITY.index(meta.command_names)
    robot.reset(base_height, perturb["friction"])
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
            robot.push(pushes.pop(0)[1])
        command = command_at(cfg.schedule, t)
        obs = observe(robot.state(), command[command_index], last_action)
        action = meta.clip_action(np.asarray(policy(obs), dtype=np.float64))
        queue.append(action)
        robot.step(meta.targets_from_actions(queue.popleft()))
        last_action = action  # the observation term is the latest (clipped) network output, delayed or not
        trace["t"].append(t + dt)
        trace["command"].append(command)
        trace["measured"].append(robot.measured_velocity())
        trace["height"].append(robot.base_height)
        if on_control_step is not None:
            on_control_step(k)
        fall_reason = _fall_reason(robot, cfg)
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


def _fall_reason(robot: MujocoRobot, cfg: Sim2SimConfig) -> str | None:
    if robot.base_height < cfg.min_base_height:
        return f"base height {robot.base_height:.3f} m < {cfg.min_base_height} m"
    if robot.tilt() > cfg.max_tilt:
        return f"base tilt {robot.tilt():.2f} rad > {cfg.max_tilt} rad"
    return None
