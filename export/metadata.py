"""Assemble, embed and rewrite the ``sim2real`` metadata of a policy file (schema: ``docs/policy_schema.md``).

No torch here: the metadata is built from the robot spec (``sim2real.robots``), the MJCF (joint limits, read
with ``mujoco``) and plain numbers from the task config, so the CLI can also re-stamp an existing file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from sim2real import REPO_ROOT
from sim2real.robots import RobotSpec
from sim2real.runlog import git_revision, package_versions
from sim2real_deploy.policy_file import METADATA_KEY, SCHEMA_VERSION, VERSION_KEY, validate_metadata

collect_versions = package_versions  # the versions a run records are the versions its policy carries


def ee_chain_from_mjcf(mjcf: str | Path, base_body: str, ee_body: str) -> list[dict[str, Any]]:
    """The bodies from ``base_body`` (exclusive) to ``ee_body``, each with its pose in its parent's frame and the
    hinge that moves it (name, axis, anchor): what ``sim2real_deploy.kinematics`` chains into the hand's pose."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(mjcf))
    base, body = model.body(base_body).id, model.body(ee_body).id
    chain = []
    while body != base:
        if body == 0:
            raise ValueError(f"{ee_body!r} is not below {base_body!r} in {mjcf}")
        joints = range(model.body_jntadr[body], model.body_jntadr[body] + model.body_jntnum[body])
        if any(model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE for j in joints) or len(joints) > 1:
            raise ValueError(f"body {model.body(body).name!r}: forward kinematics takes one hinge per body at most")
        link = {"body": model.body(body).name, "pos": model.body_pos[body].tolist()}
        link["quat"] = model.body_quat[body].tolist()  # (w, x, y, z)
        for j in joints:
            link |= {"joint": model.joint(j).name, "axis": model.jnt_axis[j].tolist()}
            link["anchor"] = model.jnt_pos[j].tolist()
        chain.append(link)
        body = model.body_parentid[body]
    return chain[::-1]


def joint_limits_from_mjcf(mjcf: str | Path, joint_names: Sequence[str]) -> list[list[float]]:
    """Position limits [lo, hi] of each named joint, read from the MJCF by name (never by index)."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(mjcf))
    limits = []
    for name in joint_names:
        joint_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if joint_id < 0:
            raise ValueError(f"joint {name!r} not found in {mjcf}")
        if not model.jnt_limited[joint_id]:
            raise ValueError(f"joint {name!r} has no position limits in {mjcf}")
        limits.append([float(v) for v in model.jnt_range[joint_id]])
    return limits


def build_metadata(
    *,
    run_id: str = "unknown",
    git_rev: str | None = None,
    versions: Mapping[str, str] | None = None,
    **interface: Any,
) -> dict[str, Any]:
    """The ``sim2real`` object: :func:`policy_interface` of ``interface`` (its keyword arguments) plus the
    training stamp. Validated with the shared reader before returning."""
    return stamp(policy_interface(**interface), run_id, git_rev, versions)


def stamp(
    interface: Mapping[str, Any],
    run_id: str = "unknown",
    git_rev: str | None = None,
    versions: Mapping[str, str] | None = None,
    domain_randomization: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A policy interface with its ``training`` record (run, git revision, versions, export time, what it was
    randomised over), validated."""
    meta = {
        **interface,
        "training": {
            "run_id": run_id,
            "git_revision": git_rev if git_rev is not None else git_revision(),
            "versions": dict(versions) if versions is not None else collect_versions(),
            "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "domain_randomization": dict(domain_randomization) if domain_randomization is not None else None,
        },
    }
    validate_metadata(meta)
    return meta


def policy_interface(
    *,
    task_id: str,
    robot: RobotSpec,
    observations: Sequence[Mapping[str, Any]],
    commands: Mapping[str, Sequence[float]],
    action_scale: float | Sequence[float],
    action_clip: float | None,
    control_dt: float,
    physics_dt: float,
    command_interface: str = "base_velocity",
    command_workspace: Mapping[str, Sequence[float]] | None = None,
    gripper: Mapping[str, Any] | None = None,
    action_joints: Sequence[str] | None = None,
    held_swing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a robot needs to run the policy (the metadata without its ``training`` record).

    ``observations`` are the actor's terms in input order, each ``{name, size, scale, clip}``; ``commands``
    maps command name -> trained [lo, hi], in the order of the command term. Per-joint values come from the
    robot spec (policy order); the action offset is the default pose, as in Isaac Lab's
    ``JointPositionActionCfg(use_default_offset=True)``. Plain JSON types only, so a run can record it.
    ``command_workspace`` (pose targets): the ranges targets were sampled from, see ``task_interface``.
    ``action_joints``: the joints the network commands, when not every policy joint (the others are held).
    ``held_swing``: held joints swung on the gait clock (``period``, ``speed``, ``amplitude`` per joint).
    """
    table = robot.joint_table()
    meta = {
        "schema_version": SCHEMA_VERSION,
        "task_id": task_id,
        "robot": {
            "name": robot.name,
            "mjcf": robot.mjcf_path.relative_to(REPO_ROOT).as_posix(),
            "asset_sha256": robot.asset_hash,
            "base": "floating" if robot.floating_base else "fixed",
        },
        "joint_names": list(robot.joint_names),
        "default_joint_pos": table["default_joint_pos"],
        "action": {
            "scale": _plain_number_or_list(action_scale),
            "offset": table["default_joint_pos"],
            "clip": None if action_clip is None else float(action_clip),
        },
        "observations": [_plain_term(term) for term in observations],
        "commands": {
            "interface": command_interface,
            "names": list(commands),
            "ranges": [[float(v) for v in r] for r in commands.values()],
        },
        "actuator": {"model": robot.actuator_model} | _implicit_damping(robot),
        "stiffness": table["stiffness"],
        "damping": table["damping"],
        "effort_limit": table["effort_limit"],
        "velocity_limit": table["velocity_limit"],
        "joint_pos_limits": joint_limits_from_mjcf(robot.mjcf_path, robot.joint_names),
        "control_dt": float(control_dt),
        "physics_dt": float(physics_dt),
    }
    if robot.floating_base:
        meta["robot"] |= _floating_base_facts(robot)
    else:  # an arm: the pose target is the ee_body's, in the base_body's frame
        meta["robot"] |= {"base_body": robot.base_body, "ee_body": robot.ee_body}
        if robot.ee_body:
            meta["robot"]["ee_chain"] = ee_chain_from_mjcf(robot.mjcf_path, robot.base_body, robot.ee_body)
        if robot.gripper_joints:
            meta["robot"]["grasp_offset"] = [float(v) for v in robot.grasp_offset]
    if command_interface == "base_velocity":
        meta["commands"]["frame"] = "base"  # vx, vy along the base body's x and y axes; yaw rate about its z
    if action_joints is not None and list(action_joints) != list(robot.joint_names):
        meta["action"]["joints"] = list(action_joints)  # the network commands these; the rest hold the default pose
    if held_swing is not None:
        meta["action"]["held_swing"] = json.loads(json.dumps(held_swing))  # plain JSON types
    if gripper is not None:
        meta["action"]["gripper"] = json.loads(json.dumps(gripper))  # plain JSON types
    if command_workspace is not None:
        meta["commands"]["workspace"] = {k: [float(v) for v in r] for k, r in command_workspace.items()}
    return meta


def _implicit_damping(robot: RobotSpec) -> dict[str, list[str]]:
    """Joints whose Kd the physics simulates as joint damping: a simulator must too (the driver runs the full PD)."""
    joints = robot.implicit_damping_joints()
    return {"implicit_damping": joints} if joints else {}


def _floating_base_facts(robot: RobotSpec) -> dict[str, Any]:
    """What a second implementer needs beyond the joints: the body the IMU terms read, floor scene, fall rule. The
    fall height is absolute, from the spec's MJCF and default pose (training terminates there too): a reader never
    derives it from the file's own joint data, which a broken file could lower along with the robot."""
    return {
        "base_body": robot.base_body,  # base_ang_vel and projected_gravity are this body's (its IMU, or mapped to it)
        "scene": robot.scene_path.relative_to(REPO_ROOT).as_posix() if robot.scene_path else None,
        "foot_bodies": list(robot.foot_bodies),
        "fall": {
            "min_base_height": round(robot.fall_height, 4),  # [m]
            "max_tilt": robot.fall_tilt,  # [rad]
            "standing_height": round(robot.standing_height, 4),  # [m] the base height the rule is a fraction of
        },
    }


def embed_metadata(model: Any, meta: Mapping[str, Any], validate: bool = True) -> None:
    """Replace the ``metadata_props`` of an ``onnx.ModelProto`` with ``meta``.

    ``validate=False`` exists only to build deliberately broken files in tests.
    """
    import onnx

    if validate:
        validate_metadata(dict(meta))
    onnx.helper.set_model_props(model, {VERSION_KEY: str(meta.get("schema_version")), METADATA_KEY: json.dumps(meta)})


def save_onnx(model: Any, path: str | Path) -> Path:
    """Save ``model`` as ONE self-contained file: weights inline, never an external ``.data`` file."""
    import onnx

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(path), save_as_external_data=False)
    return path


def write_json_copy(policy_path: str | Path, meta: Mapping[str, Any]) -> Path:
    """Write the human-readable ``<stem>.json`` copy next to a policy file (readers use the embedded copy)."""
    json_path = Path(policy_path).with_suffix(".json")
    json_path.write_text(json.dumps(meta, indent=2) + "\n")
    return json_path


def rewrite_metadata(src: str | Path, dst: str | Path, meta: Mapping[str, Any], validate: bool = True) -> Path:
    """Copy the policy ``src`` to ``dst`` with new metadata (re-stamping, or corrupting one in a test)."""
    import onnx

    model = onnx.load_model(str(src), load_external_data=True)
    embed_metadata(model, meta, validate=validate)
    write_json_copy(save_onnx(model, dst), meta)
    return Path(dst)


def _plain_term(term: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-ready copy of an observation term (numpy/torch scalars and tuples become floats and lists)."""
    clip = term.get("clip")
    plain = {
        "name": str(term["name"]),
        "size": int(term["size"]),
        "scale": _plain_number_or_list(term.get("scale", 1.0)),
        "clip": None if clip is None else [float(clip[0]), float(clip[1])],
    }
    if term.get("params"):
        plain["params"] = {str(k): float(v) for k, v in term["params"].items()}
    if int(term.get("history", 1)) > 1:
        plain["history"] = int(term["history"])
    if "points" in term:
        plain["points"] = [[float(x), float(y)] for x, y in term["points"]]
    return plain


def _plain_number_or_list(value: float | Sequence[float]) -> float | list[float]:
    if np.ndim(value) == 0:
        return float(value)  # type: ignore[arg-type]
    return [float(v) for v in np.ravel(value)]


def upgrade_v1(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A schema-1 ``sim2real`` object as schema 2. Every schema-1 file was a floating-base, DC-motor,
    base-velocity policy (the only kind that exporter wrote), so the new fields are known."""
    if meta.get("schema_version") != 1:
        raise ValueError(f"not a schema-1 object (schema_version {meta.get('schema_version')!r})")
    upgraded = json.loads(json.dumps(meta))
    upgraded["schema_version"] = SCHEMA_VERSION
    upgraded["robot"]["base"] = "floating"
    upgraded["commands"] = {"interface": "base_velocity", **upgraded["commands"]}
    upgraded["actuator"] = {"model": "dc_motor"}
    upgraded["training"]["upgraded_from_schema"] = 1
    return upgraded
