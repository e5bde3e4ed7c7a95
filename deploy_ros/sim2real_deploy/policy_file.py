"""Read and validate sim2real's self-describing ONNX policy files.

Shared by the training side (``sim2real.export``) and the robot side (the ROS node, the sim-to-sim
check): it needs only numpy and onnxruntime. The schema is documented in ``docs/policy_schema.md``.

All metadata lives in one ``metadata_props`` entry, ``sim2real``, holding a JSON object, plus
``sim2real_schema_version`` so that a reader can reject a file before parsing it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim2real_deploy.actuators import MODELS as ACTUATOR_MODELS
from sim2real_deploy.commands import interface
from sim2real_deploy.kinematics import EndEffectorChain
from sim2real_deploy.observations import Dims, check_terms, clock_angle, frames, scan_points

SCHEMA_VERSION = 2
METADATA_KEY = "sim2real"
VERSION_KEY = "sim2real_schema_version"
INPUT_NAME = "obs"
OUTPUT_NAME = "actions"
# optional second output of a velocity-estimating actor: its base linear velocity estimate [m/s], base frame
ESTIMATE_OUTPUT_NAME = "base_lin_vel_estimate"

# Keys every file must carry, and the per-joint arrays whose length must equal the joint count.
REQUIRED_KEYS = (
    "schema_version",
    "task_id",
    "robot",
    "joint_names",
    "default_joint_pos",
    "action",
    "observations",
    "commands",
    "actuator",
    "stiffness",
    "damping",
    "effort_limit",
    "velocity_limit",
    "joint_pos_limits",
    "control_dt",
    "physics_dt",
    "training",
)
PER_JOINT_KEYS = ("default_joint_pos", "stiffness", "damping", "effort_limit", "velocity_limit", "joint_pos_limits")


class PolicyFileError(ValueError):
    """The file is not a sim2real policy, or not one this version can read. The message says why."""


DEFAULT_FALL = {"min_base_height": 0.15, "max_tilt": 1.0}  # robot.fall of files that predate it: a quadruped's


@dataclass(frozen=True)
class PolicyMetadata:
    """Typed view of the metadata; ``raw`` keeps every field, including ones this reader ignores."""

    raw: dict[str, Any]

    @property
    def joint_names(self) -> list[str]:
        return list(self.raw["joint_names"])

    @property
    def num_joints(self) -> int:
        return len(self.raw["joint_names"])

    def joint_array(self, key: str) -> np.ndarray:
        """A per-joint array in policy order (``joint_pos_limits`` has shape (n, 2))."""
        return np.asarray(self.raw[key], dtype=np.float64)

    @property
    def gripper(self) -> dict[str, Any] | None:
        """``action.gripper`` of a grasping policy: ``joints``, their ``open`` and ``closed`` positions, the finger
        ``speed`` and ``close_below`` (the last network output below it closes the hand); None without a gripper."""
        return self.raw["action"].get("gripper")

    @property
    def action_joints(self) -> list[str]:
        """The joints the network commands, in output order: ``action.joints``, or every joint. Every other joint is
        held at its action offset (the default pose) by its PD, as in training."""
        return list(self.raw["action"].get("joints") or self.raw["joint_names"])

    @property
    def action_index(self) -> np.ndarray:
        """Policy-order index of each commanded joint."""
        names = self.joint_names
        return np.array([names.index(name) for name in self.action_joints], dtype=np.intp)

    @property
    def num_actions(self) -> int:
        """Network outputs: one per commanded joint, plus the gripper's open/close command."""
        return len(self.action_joints) + (1 if self.gripper else 0)

    def gripper_targets(self, actions: np.ndarray) -> np.ndarray:
        """Finger position targets from the network output (the hand's command, last), as training's binary
        gripper action maps it; the fingers then travel at ``gripper.speed``."""
        gripper = self.gripper
        command = self.clip_action(np.asarray(actions, dtype=np.float64))[len(self.action_joints)]
        closed = command < gripper["close_below"]
        return np.asarray(gripper["closed" if closed else "open"], dtype=np.float64)

    @property
    def action_scale(self) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.raw["action"]["scale"], dtype=np.float64), (self.num_joints,))

    @property
    def action_offset(self) -> np.ndarray:
        return np.broadcast_to(np.asarray(self.raw["action"]["offset"], dtype=np.float64), (self.num_joints,))

    @property
    def action_clip(self) -> float | None:
        return self.raw["action"].get("clip")

    def clip_action(self, actions: np.ndarray) -> np.ndarray:
        """The network output as training applied it (and as the ``actions`` term sees it): clipped to action.clip."""
        clip = self.action_clip
        return actions if clip is None else np.clip(actions, -clip, clip)

    @property
    def actuator_model(self) -> str:
        return str(self.raw["actuator"]["model"])

    @property
    def implicit_damping(self) -> np.ndarray:
        """Per joint, True where training simulated Kd as the joint's damping (``actuator.implicit_damping``): a
        simulator adds Kd to the joint damping there and leaves it out of the PD torque. The driver runs full Kd."""
        joints = set(self.raw["actuator"].get("implicit_damping", ()))
        return np.array([name in joints for name in self.joint_names])

    @property
    def floating_base(self) -> bool:
        return self.raw["robot"]["base"] == "floating"

    @property
    def fall_rule(self) -> dict[str, float]:
        """``min_base_height`` [m] and ``max_tilt`` [rad] below / beyond which the robot has fallen."""
        fall = self.raw["robot"].get("fall", DEFAULT_FALL)
        return {key: float(fall[key]) for key in DEFAULT_FALL}

    @property
    def legged_velocity(self) -> bool:
        """A floating-base robot following base-velocity commands (the legged sim-to-sim check; the node serves these
        and fixed-base ``ee_pose`` arms)."""
        return self.floating_base and self.command_interface == "base_velocity"

    @property
    def observations(self) -> list[dict[str, Any]]:
        """Observation terms in input order: ``name``, ``size``, ``scale`` and ``clip`` (or None)."""
        return list(self.raw["observations"])

    @property
    def scan_points(self) -> np.ndarray | None:
        """Where the policy samples its height map (x, y in the base's yaw frame); None for a blind policy."""
        return scan_points(self.raw["observations"])

    @property
    def obs_dim(self) -> int:
        return sum(int(term["size"]) * frames(term) for term in self.raw["observations"])

    @property
    def command_interface(self) -> str:
        return str(self.raw["commands"]["interface"])

    @property
    def command_names(self) -> list[str]:
        return list(self.raw["commands"]["names"])

    @property
    def command_ranges(self) -> np.ndarray:
        """(num_commands, 2) trained ranges, min and max."""
        return np.asarray(self.raw["commands"]["ranges"], dtype=np.float64)

    @property
    def control_dt(self) -> float:
        return float(self.raw["control_dt"])

    @property
    def physics_dt(self) -> float:
        return float(self.raw["physics_dt"])

    @property
    def domain_randomization(self) -> dict[str, Any]:
        """What the policy was trained under (``training.domain_randomization``; empty for older exports)."""
        return self.raw.get("training", {}).get("domain_randomization") or {}

    @property
    def trained_joint_dynamics(self) -> dict[str, np.ndarray] | None:
        """Per-joint [low, high] of passive damping, friction and armature in training; None if not randomised."""
        ranges = self.domain_randomization.get("joint_dynamics")
        if not ranges:
            return None
        return {key: np.asarray(ranges[key], dtype=np.float64) for key in JOINT_DYNAMICS_KEYS}

    @property
    def joint_dynamics_log_uniform(self) -> tuple[str, ...]:
        """The passive-dynamics keys training sampled log-uniformly (none for files from before it did)."""
        return tuple(self.domain_randomization.get("joint_dynamics_log_uniform") or ())

    def targets_from_actions(self, actions: np.ndarray, command: np.ndarray | None = None, tick: int = 0) -> np.ndarray:
        """Position targets for every joint (policy order) from raw network outputs, as in training: the offset plus
        the scaled output for a commanded joint, the offset alone for a held one, plus its swing where the policy
        swings held joints (:meth:`held_swing_offsets`, from the velocity ``command`` and the control ``tick`` the
        action was computed at). A gripper's command, the last output, is
        :meth:`gripper_targets`'s. Leading batch dimensions are kept."""
        index = self.action_index
        joints = np.asarray(actions, dtype=np.float64)[..., : len(index)]
        targets = np.broadcast_to(self.action_offset, (*joints.shape[:-1], self.num_joints)).copy()
        targets[..., index] += self.action_scale[index] * self.clip_action(joints)
        if self.raw["action"].get("held_swing") is not None:
            if command is None:
                raise ValueError("this policy swings held joints: its targets need the velocity command")
            targets += self.held_swing_offsets(command, tick)
        return targets

    def held_swing_offsets(self, command: np.ndarray, tick: int) -> np.ndarray:
        """Per joint, the swing ``action.held_swing`` adds to a held joint's target (0 elsewhere, and everywhere
        without one): amplitude x clip(vx / speed, -1, 1) x sin(2 pi phase), the phase ``(tick x control_dt / period)
        mod 1`` as the gait clock counts it (training's ``mdp.HeldJointPositionAction``)."""
        swing = self.raw["action"].get("held_swing")
        amplitude = np.zeros(self.num_joints)
        if swing is None:
            return amplitude
        for joint, value in swing["amplitude"].items():
            amplitude[self.joint_names.index(joint)] = value
        vx = np.asarray(command, dtype=np.float64)[..., self.command_names.index("lin_vel_x")]  # the policy's order
        speed = np.clip(vx / swing["speed"], -1.0, 1.0)
        return amplitude * (speed * np.sin(clock_angle(tick * self.control_dt, swing["period"])))[..., None]


JOINT_DYNAMICS_KEYS = ("damping", "friction", "armature")  # training.domain_randomization.joint_dynamics
# Scale parameters, spread over up to a decade: sampled log-uniformly, so a range's geometric mean (the MJCF's value)
# is its median. Uniform over 0.05-0.5, the mean damping was 2.75x the MJCF's and the policy walked the MJCF robot
# ~10 % over its commands. Friction's range starts at 0: uniform.
JOINT_DYNAMICS_LOG_UNIFORM = ("damping", "armature")


def joint_dynamics_quantile(key: str, low: Any, high: Any, u: Any, log_uniform: tuple[str, ...]) -> Any:
    """``key``'s value at quantile ``u`` in [0, 1] of its range: log-uniform if ``key`` is in ``log_uniform``, else
    uniform. Elementwise on numpy arrays and torch tensors alike (training and sim-to-sim sample the same way)."""
    if key in log_uniform:
        return low * (high / low) ** u
    return low + u * (high - low)


def validate_metadata(meta: dict[str, Any], source: str = "metadata") -> PolicyMetadata:
    """Check the schema version, required keys and per-joint lengths; raise PolicyFileError naming the problem."""
    version = meta.get("schema_version")
    if isinstance(version, int) and version < SCHEMA_VERSION:
        raise PolicyFileError(
            f"{source}: this file is from an older sim2real (schema version {version}; this reader reads "
            f"{SCHEMA_VERSION}): re-export it from its run with `sim2real export`"
        )
    if version != SCHEMA_VERSION:
        raise PolicyFileError(
            f"{source}: sim2real schema version {version!r}, this reader supports {SCHEMA_VERSION}; "
            "update sim2real_deploy or re-export the policy with a matching sim2real version"
        )
    missing = [key for key in REQUIRED_KEYS if key not in meta]
    if missing:
        raise PolicyFileError(f"{source}: sim2real metadata is missing required key(s): {', '.join(missing)}")
    n = len(meta["joint_names"])
    for key in PER_JOINT_KEYS:
        if len(meta[key]) != n:
            raise PolicyFileError(f"{source}: '{key}' has {len(meta[key])} entries for {n} joints")
    commands = meta["commands"]
    if len(commands.get("names", ())) != len(commands.get("ranges", ())):
        raise PolicyFileError(f"{source}: 'commands' names and ranges differ in length")
    if meta["robot"].get("base") not in ("floating", "fixed"):
        raise PolicyFileError(f"{source}: robot.base is {meta['robot'].get('base')!r}, expected 'floating' or 'fixed'")
    if meta["actuator"].get("model") not in ACTUATOR_MODELS:
        raise PolicyFileError(
            f"{source}: actuator.model {meta['actuator'].get('model')!r} unknown (known: {sorted(ACTUATOR_MODELS)})"
        )
    try:
        interface(commands.get("interface", "")).index(commands["names"])
        implicit = meta["actuator"].get("implicit_damping", [])
        if not isinstance(implicit, list) or set(implicit) - set(meta["joint_names"]):
            raise ValueError(f"'actuator.implicit_damping' must list policy joints: {implicit!r}")
        _check_held_swing(meta)
        gripper = meta["action"].get("gripper")
        fingers = len(gripper["joints"]) if gripper else 0
        if gripper and not (len(gripper["open"]) == len(gripper["closed"]) == fingers > 0 and gripper["speed"] > 0):
            raise ValueError("'action.gripper' needs joints with one open and one closed position each, speed > 0")
        commanded = _commanded_joints(meta)
        points = scan_points(meta["observations"])
        scan = 0 if points is None else len(points)
        dims = Dims(n, len(commands["names"]), commanded + (1 if gripper else 0), gripper=fingers, scan=scan)
        check_terms(meta["observations"], dims, commands["interface"])
        _check_arm_kinematics(meta)
        _check_numbers(meta)
    except (ValueError, KeyError, TypeError) as exc:
        raise PolicyFileError(f"{source}: {exc}") from exc
    return PolicyMetadata(meta)


def _check_arm_kinematics(meta: dict[str, Any]) -> None:
    """A policy observing its hand's pose error or grasp point needs the kinematic chain (and grasp offset) that
    compute them, and sound ones."""
    robot, names = meta["robot"], {term["name"] for term in meta["observations"]}
    needs = {"ee_pose_error": ("ee_chain",), "object_to_grasp_point": ("ee_chain", "grasp_offset")}
    for name in sorted(names & needs.keys()):
        if missing := [key for key in needs[name] if not robot.get(key)]:
            raise ValueError(f"observation {name!r} needs robot.{' and robot.'.join(missing)}: re-export the policy")
    if robot.get("ee_chain"):
        EndEffectorChain.from_metadata(robot["ee_chain"], meta["joint_names"])
    offset = np.asarray(robot.get("grasp_offset", (0.0, 0.0, 0.0)), dtype=np.float64)
    if offset.shape != (3,) or not np.all(np.isfinite(offset)):
        raise ValueError("robot.grasp_offset must be 3 finite numbers [m]")


def _check_held_swing(meta: dict[str, Any]) -> None:
    """``action.held_swing`` swings held joints (of a velocity policy) by finite amplitudes, with period, speed > 0."""
    swing = meta["action"].get("held_swing")
    if swing is None:
        return
    held = set(meta["joint_names"]) - set(meta["action"].get("joints") or meta["joint_names"])
    amplitude = swing["amplitude"]
    if (
        not isinstance(amplitude, dict)
        or not amplitude
        or set(amplitude) - held
        or "lin_vel_x" not in meta["commands"]["names"]
    ):
        raise ValueError(f"'action.held_swing' must map held joints of a lin_vel_x policy to amplitudes: {amplitude!r}")
    numbers = [swing["period"], swing["speed"], *amplitude.values()]
    if not all(_is_number(x) and np.isfinite(x) for x in numbers) or min(swing["period"], swing["speed"]) <= 0:
        raise ValueError("'action.held_swing' needs a period and speed > 0 and finite amplitudes, all numbers")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _commanded_joints(meta: dict[str, Any]) -> int:
    """How many joints the network commands: ``action.joints``, each a joint once, or every joint."""
    joints = meta["action"].get("joints")
    if joints is None:
        return len(meta["joint_names"])
    unknown = sorted(set(joints) - set(meta["joint_names"]))
    if not joints or unknown or len(set(joints)) != len(joints):
        raise ValueError(f"'action.joints' must name policy joints once each (unknown: {unknown})")
    return len(joints)


def _check_numbers(meta: dict[str, Any]) -> None:
    """Values the robot side clamps and times with must be finite and make sense: a NaN limit would pass NaN
    targets through every clamp."""
    for key in PER_JOINT_KEYS:
        if not np.all(np.isfinite(np.asarray(meta[key], dtype=np.float64))):
            raise ValueError(f"'{key}' has non-finite values")
    limits = np.asarray(meta["joint_pos_limits"], dtype=np.float64)
    if limits.shape != (len(meta["joint_names"]), 2) or np.any(limits[:, 0] >= limits[:, 1]):
        raise ValueError("'joint_pos_limits' must be [lo, hi] with lo < hi for every joint")
    if np.any(np.asarray(meta["velocity_limit"]) <= 0) or np.any(np.asarray(meta["effort_limit"]) < 0):
        raise ValueError("'velocity_limit' must be > 0 and 'effort_limit' >= 0")
    if not (float(meta["control_dt"]) > 0 and float(meta["physics_dt"]) > 0):
        raise ValueError("'control_dt' and 'physics_dt' must be > 0")
    fall = meta["robot"].get("fall", DEFAULT_FALL)
    if not (float(fall["min_base_height"]) > 0 and 0 < float(fall["max_tilt"]) < np.pi):
        raise ValueError("'robot.fall' needs min_base_height > 0 and 0 < max_tilt < pi")
    gripper = meta["action"].get("gripper")
    if gripper is not None and not isinstance(gripper.get("close_below"), int | float):
        raise ValueError("'action.gripper.close_below' must be a number")
    randomization = meta.get("training", {}).get("domain_randomization") or {}
    ranges, log_uniform = randomization.get("joint_dynamics"), randomization.get("joint_dynamics_log_uniform") or ()
    if ranges is not None and not isinstance(ranges, dict):
        raise ValueError("'training.domain_randomization.joint_dynamics' must be an object")
    for key in JOINT_DYNAMICS_KEYS if ranges else ():
        r = np.asarray(ranges.get(key, ()), dtype=np.float64)
        if r.shape != (len(meta["joint_names"]), 2) or np.any(r[:, 0] > r[:, 1]) or np.any(r < 0):
            raise ValueError(f"'training.domain_randomization.joint_dynamics.{key}' must be [lo, hi] >= 0 per joint")
        if key in log_uniform and np.any(r[:, 0] <= 0):
            raise ValueError(f"'training.domain_randomization.joint_dynamics.{key}' is log-uniform: lo must be > 0")


def read_metadata(path: str | Path) -> PolicyMetadata:
    """Read and validate the metadata of an exported policy without running it."""
    return _open(path)[1]


class OnnxPolicy:
    """An exported policy ready to run: ``policy(obs) -> actions`` on float32 arrays of shape (batch, obs_dim)."""

    def __init__(self, path: str | Path, intra_op_threads: int = 1):
        self.session, self.metadata = _open(path, intra_op_threads)
        self.path = Path(path)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim == 1:
            return self.session.run([OUTPUT_NAME], {INPUT_NAME: obs[None]})[0][0]
        return self.session.run([OUTPUT_NAME], {INPUT_NAME: obs})[0]


def _open(path: str | Path, intra_op_threads: int = 1):
    import onnxruntime as ort

    path = Path(path)
    if not path.is_file():
        raise PolicyFileError(f"{path}: no such policy file")
    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    try:
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises several private exception types
        raise PolicyFileError(f"{path}: not a readable ONNX model ({exc})") from exc
    props = session.get_modelmeta().custom_metadata_map
    if METADATA_KEY not in props:
        raise PolicyFileError(
            f"{path}: ONNX model has no '{METADATA_KEY}' metadata: not exported by sim2real "
            f"(found metadata keys: {sorted(props) or 'none'})"
        )
    try:
        meta = json.loads(props[METADATA_KEY])
    except json.JSONDecodeError as exc:
        raise PolicyFileError(f"{path}: '{METADATA_KEY}' metadata is not valid JSON ({exc})") from exc
    metadata = validate_metadata(meta, str(path))
    inputs = {i.name: i.shape for i in session.get_inputs()}
    if INPUT_NAME not in inputs or inputs[INPUT_NAME][-1] != metadata.obs_dim:
        raise PolicyFileError(
            f"{path}: expected input '{INPUT_NAME}' of width {metadata.obs_dim} (sum of observation terms), "
            f"model has {inputs}"
        )
    outputs = {o.name: o.shape for o in session.get_outputs()}
    if OUTPUT_NAME not in outputs or outputs[OUTPUT_NAME][-1] not in (metadata.num_actions, None):
        raise PolicyFileError(
            f"{path}: expected output '{OUTPUT_NAME}' of width {metadata.num_actions} (the commanded joints"
            f"{' and the gripper' if metadata.gripper else ''}), model has {outputs}"
        )
    return session, metadata
