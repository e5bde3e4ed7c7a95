"""A task config's policy interface: what the actor observes, the command it follows, how its action maps to joints.

Read from the resolved Isaac Lab env config (no env needed), so ``sim2real train`` records it in the run folder
and ``sim2real export`` writes what the run trained with. Observation sizes follow the robot side's size rules
(``sim2real_deploy.observations``); the parity test checks them against Isaac Lab's real observation vector.
"""

from __future__ import annotations

from typing import Any

from sim2real.export.metadata import policy_interface
from sim2real.robots import ROBOTS
from sim2real_deploy.commands import POSE_WORKSPACE_KEYS, interface
from sim2real_deploy.observations import Dims, term


def task_interface(task_id: str, env_cfg: Any, clip_actions: float | None) -> dict[str, Any]:
    """The policy interface (metadata without its training record) of ``task_id`` configured as ``env_cfg``."""
    robot = ROBOTS[env_cfg.robot]
    _, kind, command = command_term(env_cfg)
    extra = [a for a in action_terms(env_cfg) if a not in ("joint_pos", "gripper", "held")]
    if extra:
        raise ValueError(f"{task_id}: action terms {extra} have no robot-side code (known: joint_pos, gripper, held)")
    return policy_interface(
        task_id=task_id,
        robot=robot,
        observations=policy_terms(env_cfg),
        commands=command_ranges(kind, command),
        action_scale=action_scale(env_cfg),
        action_clip=clip_actions,
        control_dt=env_cfg.sim.dt * env_cfg.decimation,
        physics_dt=env_cfg.sim.dt,
        command_interface=kind,
        command_workspace=pose_workspace(command) if kind == "ee_pose" else None,
        gripper=gripper_action(env_cfg),
        action_joints=action_joints(env_cfg),
        held_swing=held_swing(env_cfg),
    )


def held_swing(env_cfg: Any) -> dict[str, Any] | None:
    """Held joints swung on the gait clock (``mdp.HeldJointPositionAction``), or None: the clock's period, the
    forward speed of full swing and each joint's amplitude."""
    held = getattr(env_cfg.actions, "held", None)
    if held is None or not held.swing_amplitude:
        return None
    amplitude = {joint: float(value) for joint, value in held.swing_amplitude.items()}
    return {"period": float(held.swing_period), "speed": float(held.swing_speed), "amplitude": amplitude}


def action_scale(env_cfg: Any) -> float | list[float]:
    """One scale, or one per robot joint in policy order (0 for a joint the action does not command), its keys
    resolved over the action's joints as Isaac Lab's joint action resolves them (names or patterns)."""
    from isaaclab.utils.string import resolve_matching_names_values

    scale = env_cfg.actions.joint_pos.scale
    if not isinstance(scale, dict):
        return scale
    _, names, values = resolve_matching_names_values(scale, action_joints(env_cfg))
    per_joint = dict(zip(names, values, strict=True))
    return [float(per_joint.get(j, 0.0)) for j in ROBOTS[env_cfg.robot].joint_names]


def gripper_action(env_cfg: Any) -> dict[str, Any] | None:
    """The binary open/close gripper action (the network's last output; < 0 closes), or None without one; with the
    fingers' PD as training simulated it (a real hand runs its own controller; a simulator needs these)."""
    cfg = getattr(env_cfg.actions, "gripper", None)
    if cfg is None:
        return None
    joints = list(cfg.joint_names)
    fingers = ROBOTS[env_cfg.robot].group_of(joints[0])
    return {
        "joints": joints,
        "open": [float(cfg.open_command_expr[j]) for j in joints],
        "closed": [float(cfg.close_command_expr[j]) for j in joints],
        "speed": float(cfg.speed),
        "close_below": 0.0,  # Isaac Lab's BinaryJointPositionAction: a negative command closes
        "stiffness": fingers.stiffness,
        "damping": fingers.damping,
        "effort_limit": fingers.effort_limit,
    }


def pose_workspace(command: Any) -> dict[str, list[float]]:
    """Where pose targets were sampled: position [m] and roll / pitch / yaw [rad] ranges (Isaac Lab's
    ``UniformPoseCommand``: quaternion from extrinsic x-y-z Euler angles), for a check to sample the same."""
    return {key: [float(v) for v in getattr(command.ranges, key)] for key in POSE_WORKSPACE_KEYS}


def command_term(env_cfg: Any) -> tuple[str, str, Any]:
    """(term name, robot-side command interface, config) of the task's one command term."""
    from isaaclab.envs.mdp import UniformPoseCommandCfg, UniformVelocityCommandCfg

    terms = {k: v for k, v in vars(env_cfg.commands).items() if v is not None and not k.startswith("_")}
    if len(terms) != 1:
        raise ValueError(f"a policy follows one command term; the task has {sorted(terms)}")
    ((name, cfg),) = terms.items()
    kinds = {UniformVelocityCommandCfg: "base_velocity", UniformPoseCommandCfg: "ee_pose"}
    kind = next((k for cls, k in kinds.items() if isinstance(cfg, cls)), None)
    if kind is None:
        raise ValueError(f"command term {name!r} ({type(cfg).__name__}) has no robot-side command interface")
    return name, kind, cfg


def action_terms(env_cfg: Any) -> list[str]:
    return [k for k, v in vars(env_cfg.actions).items() if v is not None and not k.startswith("_")]


def command_ranges(kind: str, command: Any) -> dict[str, tuple[float, float]]:
    """Trained range of each command field, in the command term's output order."""
    ranges, fields = command.ranges, interface(kind).fields
    # a pose target's quaternion components span [-1, 1]; every other field has its sampled range
    return {f: (-1.0, 1.0) if f.startswith("quat_") else tuple(getattr(ranges, f)) for f in fields}


def dims(env_cfg: Any) -> Dims:
    robot = ROBOTS[env_cfg.robot]
    _, kind, _ = command_term(env_cfg)
    n, commanded = len(robot.joint_names), len(action_joints(env_cfg))
    gripper = len(robot.gripper_joints) if "gripper" in action_terms(env_cfg) else 0
    scan = getattr(env_cfg.observations.policy, "height_scan", None)
    return Dims(
        n,
        commands=len(interface(kind).fields),
        actions=commanded + (1 if gripper else 0),
        gripper=gripper,
        scan=0 if scan is None else len(scan_points(scan)),
    )


def action_joints(env_cfg: Any) -> list[str]:
    """The joints the policy's ``joint_pos`` action commands, in output order (the robot's joints, some held)."""
    robot = ROBOTS[env_cfg.robot]
    names = list(env_cfg.actions.joint_pos.joint_names)
    if names == [".*"]:
        return list(robot.joint_names)
    if unknown := sorted(set(names) - set(robot.joint_names)):
        raise ValueError(f"action joints {unknown} are not {robot.name} policy joints (names, not patterns)")
    return names


def policy_terms(env_cfg: Any) -> list[dict]:
    """The policy group's observation terms in input order, with their size, scale and clip."""
    from isaaclab.managers import ObservationTermCfg

    sizes, group, terms = dims(env_cfg), env_cfg.observations.policy, []
    for name in group.__dataclass_fields__:
        cfg = getattr(group, name)
        if isinstance(cfg, ObservationTermCfg):
            scale = 1.0 if cfg.scale is None else cfg.scale
            entry = {"name": name, "size": term(name).size_for(sizes), "scale": scale, "clip": cfg.clip}
            if history := _history(group, cfg):
                entry["history"] = history
            if term(name).params:  # e.g. the gait clock's period: the robot side computes the term from it
                entry["params"] = {key: cfg.params[key] for key in term(name).params}
                entry["params"].update({key: cfg.params[key] for key, _ in term(name).optional if key in cfg.params})
            if name == "height_scan":
                entry["points"] = scan_points(cfg)
            terms.append(entry)
    return terms


def scan_points(cfg: Any) -> list[list[float]]:
    """A grid height scan's points, (x, y) in the base's yaw frame, in its output order (``height_scan_grid``)."""
    from sim2real.tasks.mdp.height_grid import scan_points as grid_points

    if "pattern_cfg" not in cfg.params:
        raise ValueError("only the grid height scan exports (env.ray_cast_height_scan=false)")
    return grid_points(cfg.params).tolist()


def _history(group: Any, cfg: Any) -> int:
    """Frames of a term's flattened observation history (Isaac Lab copies a group's ``history_length`` into each
    term); 0 without one. An unflattened history has no robot-side layout."""
    length, flatten = cfg.history_length, cfg.flatten_history_dim
    if group.history_length is not None:
        length, flatten = group.history_length, group.flatten_history_dim
    if length > 1 and not flatten:
        raise ValueError("an observation history must be flattened (flatten_history_dim=True) to be exported")
    return length if length > 1 else 0
