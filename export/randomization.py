"""What a policy was trained under: every domain-randomisation range and the physics, as plain JSON.

Written into the policy's metadata as ``training.domain_randomization`` (``docs/policy_schema.md``), so that a
reader knows what the policy was made robust to, and ``sim2real sim2sim --joint-dynamics trained`` can sample the
same joint ranges.
"""

from __future__ import annotations

from typing import Any

from isaaclab.managers import SceneEntityCfg

from sim2real.config import to_plain
from sim2real_deploy.policy_file import JOINT_DYNAMICS_LOG_UNIFORM


def domain_randomization(env_cfg: Any, physics: str) -> dict[str, Any]:
    """The task's randomisation events (mode, function, ranges), action delay, sensor noise and physics settings."""
    events = {}
    for name, term in vars(env_cfg.events).items():
        if term is None or not hasattr(term, "func"):
            continue
        entry = {"mode": term.mode, "func": getattr(term.func, "__name__", str(term.func))}
        if term.mode == "interval":
            entry["interval_range_s"] = list(term.interval_range_s)
        entry["params"] = {k: to_plain(v) for k, v in term.params.items() if not isinstance(v, SceneEntityCfg)}
        events[name] = entry
    record: dict[str, Any] = {"events": events, "physics": _physics(env_cfg, physics)}
    if (action := getattr(env_cfg.actions, "joint_pos", None)) is not None and hasattr(action, "delay_range"):
        record["action_delay_steps"] = list(action.delay_range)
        rates = getattr(action, "max_target_rate", None)
        record["max_target_rate"] = {k: float(v) for k, v in rates.items()} if rates else None  # [rad/s] slew limit
    record["observation_noise"] = {
        name: [term.noise.n_min, term.noise.n_max]
        for name, term in vars(env_cfg.observations.policy).items()
        if getattr(term, "noise", None) is not None and hasattr(term.noise, "n_min")
    }
    joint = events.get("joint_dynamics", {}).get("params", {}).get("ranges")
    record["joint_dynamics"] = joint or None  # per policy joint: damping / friction / armature [low, high]
    record["joint_dynamics_log_uniform"] = list(JOINT_DYNAMICS_LOG_UNIFORM) if joint else None
    return record


def _physics(env_cfg: Any, preset: str) -> dict[str, Any]:
    solver = env_cfg.sim.physics.solver_cfg
    return {"preset": preset, "cone": solver.cone, "impratio": float(solver.impratio), "dt": float(env_cfg.sim.dt)}
