"""Data types describing a robot once, for every consumer."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from sim2real import ASSETS_DIR
from sim2real_deploy.policy_file import JOINT_DYNAMICS_KEYS


@dataclass(frozen=True)
class PassiveDynamics:
    """Ranges [low, high] that a real joint's passive dynamics fall in, randomised per env and joint in training.

    A motor's viscous damping, Coulomb friction and reflected rotor inertia are what a real robot differs in most
    from its MJCF; each range should come from motor data or the field's practice (say where in the robot folder).
    """

    damping: tuple[float, float]  # viscous damping [N m s / rad]
    friction: tuple[float, float]  # Coulomb friction (MuJoCo frictionloss) [N m]
    armature: tuple[float, float]  # reflected rotor inertia [kg m^2]


@dataclass(frozen=True)
class JointGroup:
    """Joints sharing one actuator model. ``pattern`` is a regex matched against joint names."""

    pattern: str
    stiffness: float  # Kp [N m / rad]
    damping: float  # Kd [N m s / rad]
    effort_limit: float  # peak torque [N m]
    velocity_limit: float  # no-load speed [rad/s]; the DC-motor torque-speed curve reaches 0 torque here
    passive: PassiveDynamics | None = None  # None: the model's own values, not randomised
    action_scale: float | None = None
    """Joint target offset per unit of policy action [rad]; None: the task's one scale (0.25 for locomotion). mjlab
    sets 0.25 x effort_limit / stiffness per motor, so a unit action asks a quarter of peak torque of every joint."""
    implicit_damping: bool = False
    """Simulate Kd as the joint's viscous damping, which MuJoCo integrates implicitly, not in the explicit PD torque.
    A light joint with a large Kd (a humanoid's held arms) makes the explicit torque unstable at the physics rate
    (200 Hz); the robot's driver runs its PD at kHz and gets the full Kd as ever (the metadata's ``damping``). The
    damping torque then escapes the effort limit and the torque-speed curve, which a driver applies to it: for joints
    held near rest, where it is small. Policy joints only (not a gripper's)."""


@dataclass(frozen=True)
class Mirror:
    """The robot's left-right mirror image (reflection through its sagittal x-z plane), named by joint and body names.

    A joint or body maps to the one whose name has each ``pairs`` entry swapped (``FL`` <-> ``FR``); a joint matching
    ``negated`` (rotating about the x or z axis: hip roll, yaw) turns the other way in the mirror image, while one
    about the y axis (pitch: thighs, knees) keeps its sign.
    """

    pairs: tuple[tuple[str, str], ...]
    negated: str  # regex over joint names

    def name(self, name: str) -> str:
        """The mirror image's name for ``name`` (itself for a body or joint on the symmetry plane)."""
        for a, b in self.pairs:
            if a in name:
                return name.replace(a, b)
            if b in name:
                return name.replace(b, a)
        return name

    def permutation(self, names: list[str] | tuple[str, ...]) -> list[int]:
        """For each position, the position in ``names`` of its mirror image."""
        try:
            return [names.index(self.name(n)) for n in names]
        except ValueError as exc:
            raise ValueError(f"{names} is not closed under the mirror {self.pairs}: {exc}") from None

    def signs(self, joint_names: list[str] | tuple[str, ...]) -> list[float]:
        """-1 for each joint whose angle changes sign in the mirror image, else 1."""
        return [-1.0 if re.fullmatch(self.negated, n) else 1.0 for n in joint_names]


@dataclass(frozen=True)
class RobotSpec:
    """Everything about a robot that training, export, sim-to-sim and deployment must agree on.

    ``joint_names`` is the policy's joint order. Every consumer maps joints by name, never by index,
    because Isaac Lab, the MJCF and the robot's driver each order joints differently.
    """

    name: str
    mjcf: str  # relative to assets/robots/<name>/
    usd: str  # relative to assets/robots/<name>/
    joint_names: tuple[str, ...]
    default_joint_pos: dict[str, float]  # regex -> standing-pose angle [rad]
    joint_groups: tuple[JointGroup, ...]
    base_body: str
    foot_bodies: tuple[str, ...]  # bodies carrying the foot collision geoms
    init_base_height: float  # base height at spawn [m]
    foot_frames: tuple[str, ...] = ()
    """Bodies at the feet, in ``foot_bodies`` order, where those carry the foot geoms away from their origin (the
    Go2's calves: its ``*_foot`` bodies); empty: ``foot_bodies``. Their height is what a swing-height reward reads."""
    sole_offset: float = 0.0
    """Height of a foot frame's origin above the ground when the foot stands on it [m] (a foot sphere's radius)."""
    undesired_contact_bodies: tuple[str, ...] = field(default_factory=tuple)
    fall_contact_bodies: tuple[str, ...] = field(default_factory=tuple)
    """Bodies besides ``base_body`` whose contact ends an episode (a humanoid's torso)."""
    fall_height_fraction: float = 0.45  # Override in robot cfg.
    """Off the robot (sim-to-sim; exported as ``robot.fall.min_base_height``): fallen once the base is below this
    fraction of its standing height (feet on the floor, default pose): 0.15 m for the Go2. A seated or kneeling humanoid
    keeps about half of its height, so a humanoid needs a larger fraction."""
    fall_tilt: float = 1.0  # Override in robot cfg.
    """... or once the base z axis is this far from vertical [rad]."""
    ee_body: str = ""
    """End-effector body of an arm (pose-tracking tasks); empty for robots without one."""
    gripper_joints: tuple[str, ...] = field(default_factory=tuple)
    """Finger joints of a parallel gripper (grasping tasks): open at their default position, closed at
    ``gripper_closed``. Not policy joints: a grasping task drives them with one open/close action."""
    gripper_closed: float = 0.0
    """Finger joint position of the closed gripper [m or rad]."""
    finger_bodies: tuple[str, ...] = field(default_factory=tuple)
    """Bodies carrying the finger pads (their contacts with a grasped object)."""
    grasp_offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Grasp point (between the fingertips) in the ``ee_body`` frame [m]."""
    floating_base: bool = True
    """False for a robot bolted to the world (an arm): its MJCF has no free joint."""
    gantry: bool = False  # Override in robot cfg.
    """The simulated driver (``mujoco_bridge``) holds the base where it starts until its ``~/release`` service is
    called, as a humanoid hangs from a gantry while its controller soft-starts (unitree_mujoco's elastic band)."""
    target_rate_fraction: float = 0.5  # Override in robot cfg.
    """policy_node's target slew limit as a fraction of each joint's no-load speed (``deploy_ros/config/<robot>.yaml``);
    a task that trains behind the node's clamp (``max_target_rate`` of its action) uses the same rates."""
    mirror: Mirror | None = None
    """Left-right symmetry, for symmetric data augmentation in PPO (``sim2real.tasks.mdp.symmetry``); None: none."""
    actuator_model: str = "dc_motor"
    """Motor model of every joint group, in training and on the robot side: ``dc_motor`` (PD with the torque-speed
    curve) or ``pd`` (ideal PD clipped to the effort limit); see ``sim2real_deploy.actuators``."""

    @property
    def root(self) -> Path:
        return ASSETS_DIR / "robots" / self.name

    @property
    def mjcf_path(self) -> Path:
        return self.root / self.mjcf

    @property
    def usd_path(self) -> Path:
        return self.root / self.usd

    @property
    def scene_path(self) -> Path | None:
        """The robot on a floor (``scene.xml`` beside its MJCF, as in MuJoCo Menagerie), if its folder has one."""
        path = self.root / "scene.xml"
        return path if path.exists() else None

    @cached_property
    def asset_hash(self) -> str:
        """sha256 over the MJCF and USD bytes: identifies the exact model a policy was trained on."""
        digest = hashlib.sha256()
        for path in (self.mjcf_path, self.usd_path):
            digest.update(path.read_bytes())
        return digest.hexdigest()

    @cached_property
    def standing_height(self) -> float:
        """Base height with the feet on the floor in the default pose [m], from the MJCF (floating base only)."""
        import mujoco

        from sim2real_deploy.mujoco_robot import feet_on_floor_height

        model = mujoco.MjModel.from_xml_path(str(self.mjcf_path))
        data = mujoco.MjData(model)
        for joint in self.joint_names:
            data.qpos[model.jnt_qposadr[model.joint(joint).id]] = self.default_pos(joint)
        free = next(j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE)
        data.qpos[model.jnt_qposadr[free] : model.jnt_qposadr[free] + 7] = [0, 0, 0, 1, 0, 0, 0]
        return feet_on_floor_height(model, data)

    @cached_property
    def mjcf_joint_damping(self) -> dict[str, float]:
        """Each policy joint's own viscous damping in the MJCF [N m s / rad] (the USD carries the same)."""
        import mujoco

        model = mujoco.MjModel.from_xml_path(str(self.mjcf_path))
        return {j: float(model.dof_damping[model.jnt_dofadr[model.joint(j).id]]) for j in self.joint_names}

    @property
    def fall_height(self) -> float:
        """Fallen below this base height [m]: ``fall_height_fraction`` of the standing height."""
        return self.fall_height_fraction * self.standing_height

    def default_pos(self, joint: str) -> float:
        """Default position of one joint, policy joint or not."""
        return _match_one(self.default_joint_pos, joint)

    def per_joint(self, table: dict[str, float]) -> list[float]:
        """Resolve a regex -> value table to a value per joint in policy order."""
        return [_match_one(table, joint) for joint in self.joint_names]

    def group_of(self, joint: str) -> JointGroup:
        matches = [g for g in self.joint_groups if re.fullmatch(g.pattern, joint)]
        if len(matches) != 1:
            raise ValueError(f"joint {joint!r} matches {len(matches)} joint groups of {self.name}, expected 1")
        return matches[0]

    def action_scale(self, joints: Sequence[str], default: float) -> float | dict[str, float]:
        """The action scale of an action term over ``joints``: ``default`` where no group sets its own, else a
        value per joint name (Isaac Lab's dict form, every key matched)."""
        scales = {j: self.group_of(j).action_scale for j in joints}
        if all(v is None for v in scales.values()):
            return default
        return {j: default if v is None else v for j, v in scales.items()}

    def implicit_damping_joints(self) -> list[str]:
        """Policy joints whose Kd the physics applies as joint damping (``JointGroup.implicit_damping``)."""
        return [j for j in self.joint_names if self.group_of(j).implicit_damping]

    def joint_table(self) -> dict[str, list[float]]:
        """Per-joint arrays in policy order, as written into exported policies."""
        groups = [self.group_of(j) for j in self.joint_names]
        return {
            "default_joint_pos": self.per_joint(self.default_joint_pos),
            "stiffness": [g.stiffness for g in groups],
            "damping": [g.damping for g in groups],
            "effort_limit": [g.effort_limit for g in groups],
            "velocity_limit": [g.velocity_limit for g in groups],
        }

    def max_target_rates(self) -> dict[str, float]:
        """Policy joint name -> policy_node's slew limit [rad/s]: ``target_rate_fraction`` x the no-load speed."""
        return {j: self.target_rate_fraction * self.group_of(j).velocity_limit for j in self.joint_names}

    def passive_ranges(self) -> dict[str, list[list[float]]]:
        """Per-joint passive-dynamics ranges in policy order (empty if a joint group has none)."""
        groups = [self.group_of(j) for j in self.joint_names]
        if any(g.passive is None for g in groups):
            return {}
        return {key: [list(getattr(g.passive, key)) for g in groups] for key in JOINT_DYNAMICS_KEYS}


def _match_one(table: dict[str, float], name: str) -> float:
    values = [v for pattern, v in table.items() if re.fullmatch(pattern, name)]
    if len(values) != 1:
        raise ValueError(f"{name!r} matches {len(values)} patterns in {sorted(table)}, expected 1")
    return values[0]


def task_entry_points(package: str, variants: dict[str, tuple[str, str]]) -> dict[str, dict[str, str]]:
    """Gym registration kwargs of a robot's tasks: task id -> (env config class in ``<package>.env_cfg``, runner
    config class in ``<package>.agents``)."""
    return {
        task_id: {
            "env_cfg_entry_point": f"{package}.env_cfg:{env_cfg}",
            "rsl_rl_cfg_entry_point": f"{package}.agents:{agent_cfg}",
        }
        for task_id, (env_cfg, agent_cfg) in variants.items()
    }
