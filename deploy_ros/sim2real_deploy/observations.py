"""Observation terms: name -> size rule -> value from a robot state. The one implementation on the robot side.

Training (Isaac Lab) defines each term as an MDP function; the exporter writes the policy group's term names,
sizes, scales and clips into the metadata, and :class:`ObservationBuilder` rebuilds the same vector from what a
robot measures (sim-to-sim, the ROS node). A term missing from :data:`TERMS` has no robot-side code, so export
refuses it. Definitions: ``docs/policy_schema.md``; parity with Isaac Lab is tested per registered task.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sim2real_deploy.commands import interface
from sim2real_deploy.kinematics import EndEffectorChain


class ObservationError(ValueError):
    """An observation term unknown to the robot side, of the wrong size, or not computable from the state."""


@dataclass
class RobotState:
    """What the robot measures, in policy joint order. Fields a robot lacks stay None."""

    joint_pos: np.ndarray
    joint_vel: np.ndarray
    base_ang_vel: np.ndarray | None = None  # base frame [rad/s] (IMU gyro)
    gravity_b: np.ndarray | None = None  # unit gravity direction in the base frame (IMU orientation)
    gripper_pos: np.ndarray | None = None  # finger joint positions [m]
    object_pos_b: np.ndarray | None = None  # object position in the base frame [m] (perception)
    # ground height minus base height [m] at each of the policy's scan points (``scan_points``: x, y in the base's
    # yaw frame), sampled from a height map (perception)
    ground_b: np.ndarray | None = None


@dataclass(frozen=True)
class Dims:
    """The sizes a term's size rule refers to."""

    joints: int
    commands: int
    actions: int
    gripper: int = 0
    scan: int = 0  # points of a height scan


@dataclass(frozen=True)
class Inputs:
    """Everything a term may read at one control step."""

    state: RobotState
    command: np.ndarray  # the policy's command vector (trained fields, trained order)
    last_action: np.ndarray  # the previous action as training saw it: the network output after action.clip
    default_joint_pos: np.ndarray
    default_gripper_pos: np.ndarray | None = None
    time: float | None = None  # [s] since the policy took over: control ticks x control_dt (None: not counted)
    ee_chain: EndEffectorChain | None = None  # an arm's forward kinematics (metadata ``robot.ee_chain``)
    grasp_offset: np.ndarray | None = None  # the grasp point in the end effector's frame (``robot.grasp_offset``)


@dataclass(frozen=True)
class Term:
    size: int | str  # fixed size, or the name of a :class:`Dims` field
    value: Callable[..., np.ndarray | None]  # value(inputs, **params)
    params: tuple[str, ...] = ()  # the term's parameters, from its metadata entry's ``params``
    optional: tuple[tuple[str, float], ...] = ()  # (name, value if the entry lacks it): parameters added later

    def size_for(self, dims: Dims) -> int:
        return self.size if isinstance(self.size, int) else getattr(dims, self.size)


def _gripper(x: Inputs) -> np.ndarray | None:
    if x.state.gripper_pos is None or x.default_gripper_pos is None:
        return None
    return x.state.gripper_pos - x.default_gripper_pos


def clock_angle(time: float, period: float) -> float:
    """2 pi x the gait clock's phase ``(time / period) mod 1``, ``time`` [s] since the policy took over, as training
    counts episode time (the ``gait_phase`` term and ``action.held_swing``)."""
    return 2.0 * np.pi * np.remainder(time / period, 1.0)


def _gait_phase(x: Inputs, period: float, still_below: float = 0.0) -> np.ndarray | None:
    """sin, cos of the gait clock: ``(time / period) mod 1``, as training computes it from episode time; (0, 0) while
    the velocity command is below ``still_below`` (|(vx, vy)| + |yaw rate|): a clock that stops when the robot is
    asked to stand."""
    if x.time is None:
        return None
    if still_below > 0 and np.linalg.norm(x.command[:2]) + abs(x.command[2]) <= still_below:
        return np.zeros(2)
    angle = clock_angle(x.time, period)
    return np.array([np.sin(angle), np.cos(angle)])


def _height_scan(x: Inputs, offset: float) -> np.ndarray | None:
    """Base height above the ground at each scan point less ``offset``, as training's ``height_scan_grid``."""
    return None if x.state.ground_b is None else -x.state.ground_b - offset


def _ee_pose_error(x: Inputs) -> np.ndarray | None:
    """Target (the pose command: position, quaternion x y z w) minus the hand's pose by forward kinematics."""
    if x.ee_chain is None:
        return None
    return x.ee_chain.pose_error(x.state.joint_pos, x.command[:3], x.command[3:7])


def _object_to_grasp_point(x: Inputs) -> np.ndarray | None:
    """The object's position (from perception) minus the grasp point placed by forward kinematics, base frame."""
    if x.ee_chain is None or x.grasp_offset is None or x.state.object_pos_b is None:
        return None
    pos, rot = x.ee_chain.pose(x.state.joint_pos)
    return x.state.object_pos_b - (pos + rot @ x.grasp_offset)


TERMS: dict[str, Term] = {
    "base_ang_vel": Term(3, lambda x: x.state.base_ang_vel),
    "projected_gravity": Term(3, lambda x: x.state.gravity_b),
    "velocity_commands": Term("commands", lambda x: x.command),
    "pose_command": Term("commands", lambda x: x.command),
    "ee_pose_error": Term(6, _ee_pose_error),
    "joint_pos": Term("joints", lambda x: x.state.joint_pos - x.default_joint_pos),
    "joint_vel": Term("joints", lambda x: x.state.joint_vel),
    "actions": Term("actions", lambda x: x.last_action),
    "gripper_pos": Term("gripper", _gripper),
    "object_position": Term(3, lambda x: x.state.object_pos_b),
    "object_to_grasp_point": Term(3, _object_to_grasp_point),
    "gait_phase": Term(2, _gait_phase, params=("period",), optional=(("still_below", 0.0),)),
    "height_scan": Term("scan", _height_scan, params=("offset",)),
}


OBJECT_TERMS = frozenset({"object_position", "object_to_grasp_point"})
"""Terms that read the object position perception reports."""


def term(name: str) -> Term:
    if name not in TERMS:
        raise ObservationError(f"observation term {name!r} has no robot-side code (known: {sorted(TERMS)})")
    return TERMS[name]


def scan_points(terms: Sequence[Mapping[str, Any]]) -> np.ndarray | None:
    """(x, y) [m] of the height scan's points in the base's yaw frame (gravity-aligned, heading with the base), in
    input order: where a height map is sampled for ``RobotState.ground_b``. None: the policy reads no height map."""
    entry = next((entry for entry in terms if entry["name"] == "height_scan"), None)
    if entry is None:
        return None
    points = np.asarray(entry.get("points", ()), dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 2 or not np.isfinite(points).all():
        raise ObservationError("observation term 'height_scan' needs 'points': a list of finite (x, y) pairs")
    return points


def frames(entry: Mapping[str, Any]) -> int:
    """How many control steps of a term the policy sees (``history``; 1 when absent): its width is size x frames."""
    return int(entry.get("history", 1))


def check_terms(terms: Sequence[Mapping[str, Any]], dims: Dims, command_interface: str) -> None:
    """Raise ObservationError if a term is unknown, lacks a field, has the wrong size or history, or a command term
    does not belong to the policy's command interface."""
    command_term = interface(command_interface).obs_term
    for entry in terms:
        missing = [key for key in ("name", "size", "scale", "clip") if key not in entry]
        if missing:
            raise ObservationError(f"observation term {entry!r} lacks field(s) {missing}")
        name = entry["name"]
        history = entry.get("history", 1)
        if not (isinstance(history, int) and not isinstance(history, bool) and history >= 1):
            raise ObservationError(f"observation term {name!r}: history must be an integer >= 1, got {history!r}")
        expected = term(name).size_for(dims)
        if int(entry["size"]) != expected:
            raise ObservationError(f"observation term {name!r} has size {entry['size']}, expected {expected}")
        if term(name).size == "commands" and name != command_term:
            raise ObservationError(f"observation term {name!r} does not carry '{command_interface}' commands")
        params = entry.get("params") or {}
        for key in term(name).params:
            if not (isinstance(params.get(key), int | float) and params[key] > 0):
                raise ObservationError(f"observation term {name!r} needs a positive params.{key}")
        for key, _ in term(name).optional:
            if key in params and not (isinstance(params[key], int | float) and params[key] >= 0):
                raise ObservationError(f"observation term {name!r}: params.{key} must be a number >= 0")


class ObservationBuilder:
    """The policy input from a robot state, term by term from the metadata: each term is ``clip(scale * raw)``.

    A term with ``history`` N contributes its last N values, oldest first, as Isaac Lab's flattened observation
    history does; at the policy's first tick (``tick`` 0) every frame is the current value, as after a reset.
    """

    def __init__(
        self,
        terms: Sequence[Mapping[str, Any]],
        default_joint_pos: np.ndarray,
        default_gripper_pos: np.ndarray | None = None,
        control_dt: float | None = None,
        ee_chain: EndEffectorChain | None = None,
        grasp_offset: np.ndarray | None = None,
    ):
        self.default_joint_pos = np.asarray(default_joint_pos, dtype=np.float64)
        self.ee_chain, self.grasp_offset = ee_chain, grasp_offset
        self.default_gripper_pos = default_gripper_pos
        self.control_dt = control_dt
        self.terms = []
        for entry in terms:
            size = int(entry["size"])
            scale = np.broadcast_to(np.asarray(entry["scale"], dtype=np.float64), (size,))
            spec = term(entry["name"])
            given = entry.get("params") or {}
            params = {key: float(given[key]) for key in spec.params}
            params.update({key: float(given.get(key, default)) for key, default in spec.optional})
            self.terms.append((entry["name"], spec, params, size, scale, entry["clip"]))
        self.history = {entry["name"]: np.zeros((frames(entry), 0)) for entry in terms if frames(entry) > 1}

    def __call__(
        self, state: RobotState, command: np.ndarray, last_action: np.ndarray, tick: int | None = None
    ) -> np.ndarray:
        """``tick``: control ticks since the policy took over (0 at its first call), for clock terms."""
        command = np.asarray(command, dtype=np.float64)
        time = None if tick is None or self.control_dt is None else tick * self.control_dt
        inputs = Inputs(
            state,
            command,
            last_action,
            self.default_joint_pos,
            self.default_gripper_pos,
            time,
            self.ee_chain,
            self.grasp_offset,
        )
        parts = []
        for name, spec, params, size, scale, clip in self.terms:
            raw = spec.value(inputs, **params)
            if raw is None:
                raise ObservationError(f"observation term {name!r} needs a measurement this robot state lacks")
            value = scale * np.asarray(raw, dtype=np.float64)
            if value.shape != (size,):
                raise ObservationError(f"observation term {name!r}: computed shape {value.shape}, metadata {size}")
            value = np.clip(value, clip[0], clip[1]) if clip is not None else value
            parts.append(self._with_history(name, value, tick) if name in self.history else value)
        return np.concatenate(parts).astype(np.float32)

    def _with_history(self, name: str, value: np.ndarray, tick: int | None) -> np.ndarray:
        if tick is None:
            raise ObservationError(f"observation term {name!r} has a history: the builder needs the control tick")
        past = self.history[name]
        fresh = tick == 0 or past.shape[1] != value.size  # a takeover, or no frame kept yet
        past = np.tile(value, (len(past), 1)) if fresh else np.vstack([past[1:], value])
        self.history[name] = past
        return past.reshape(-1)

    @classmethod
    def from_metadata(cls, meta: Any) -> ObservationBuilder:  # a validated PolicyMetadata
        gripper = meta.gripper
        default_gripper = np.asarray(gripper["open"], dtype=np.float64) if gripper else None  # open = default
        robot = meta.raw["robot"]
        chain = EndEffectorChain.from_metadata(robot["ee_chain"], meta.joint_names) if robot.get("ee_chain") else None
        offset = np.asarray(robot["grasp_offset"], dtype=np.float64) if "grasp_offset" in robot else None
        return cls(
            meta.observations, meta.joint_array("default_joint_pos"), default_gripper, meta.control_dt, chain, offset
        )


def projected_gravity(quat_wxyz: np.ndarray) -> np.ndarray:
    """World gravity direction (0, 0, -1) in the frame of a body with orientation ``quat`` (w, x, y, z)."""
    w, x, y, z = quat_wxyz
    # third row of R (body -> world) is R^T e_z; gravity is -e_z
    return -np.array([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])


def tilt_angle(gravity_b: np.ndarray) -> float:
    """Angle between the body z axis and world up [rad]."""
    return float(np.arccos(np.clip(-gravity_b[2], -1.0, 1.0)))
