"""Command interfaces: what an operator sends a policy, and how it becomes the policy's command input.

A policy's metadata names its interface (``commands.interface``) and the interface fields it was trained on, in
input order (``commands.names``), with the trained range of each. Every consumer (export, sim-to-sim, the ROS
node) maps a command by field name through :class:`CommandInterface`, never by position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


class CommandError(ValueError):
    """A command interface or field name this robot-side code does not know."""


@dataclass(frozen=True)
class CommandInterface:
    """A fixed vector of named fields an operator sends, and the observation term that carries them."""

    name: str
    fields: tuple[str, ...]
    obs_term: str
    setpoint: bool = False
    """True: the last command holds until the next (a pose target); False: it lapses to zero once stale (a velocity)."""

    def index(self, names: Sequence[str]) -> np.ndarray:
        """Position in :attr:`fields` of each trained command name, in the policy's order."""
        unknown = [n for n in names if n not in self.fields]
        if unknown:
            raise CommandError(f"command(s) {unknown} are not fields of '{self.name}' (known: {list(self.fields)})")
        return np.array([self.fields.index(n) for n in names], dtype=int)


BASE_VELOCITY = CommandInterface("base_velocity", ("lin_vel_x", "lin_vel_y", "ang_vel_z"), obs_term="velocity_commands")
"""A twist in the base's yaw frame: (vx [m/s], vy [m/s], yaw rate [rad/s]), as ``geometry_msgs/Twist`` carries it."""

EE_POSE = CommandInterface(
    "ee_pose",
    ("pos_x", "pos_y", "pos_z", "quat_x", "quat_y", "quat_z", "quat_w"),
    obs_term="pose_command",
    setpoint=True,
)
"""An end-effector pose target in the robot's base frame: position [m] and unit quaternion (x, y, z, w), the order
of Isaac Lab 3's ``pose_command`` (and of ``geometry_msgs/Pose``)."""

POSE_WORKSPACE_KEYS = ("pos_x", "pos_y", "pos_z", "roll", "pitch", "yaw")
"""Keys of an ``ee_pose`` policy's ``commands.workspace``: the position [m] and Euler [rad] ranges targets came from."""


def quat_from_euler_xyz(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(w, x, y, z) of the rotation Rz(yaw) Ry(pitch) Rx(roll), as Isaac Lab's ``quat_from_euler_xyz``."""
    cr, sr, cp, sp, cy, sy = (f(a / 2) for a in (roll, pitch, yaw) for f in (np.cos, np.sin))
    return np.array(
        [
            cy * cr * cp + sy * sr * sp,
            cy * sr * cp - sy * cr * sp,
            cy * cr * sp + sy * sr * cp,
            sy * cr * cp - cy * sr * sp,
        ]
    )


def workspace_center_quat(workspace: dict[str, Sequence[float]]) -> np.ndarray:
    """(x, y, z, w) at the middle of a pose workspace's roll / pitch / yaw ranges."""
    w, x, y, z = quat_from_euler_xyz(*(0.5 * (workspace[k][0] + workspace[k][1]) for k in POSE_WORKSPACE_KEYS[3:]))
    return np.array([x, y, z, w])


def canonical_quat(quat_xyzw: np.ndarray, reference_xyzw: np.ndarray) -> np.ndarray:
    """Unit ``quat`` with the sign that lies in the reference's hemisphere: q and -q are one rotation, and a policy
    was trained on one of the two."""
    quat = np.asarray(quat_xyzw, dtype=np.float64) / np.linalg.norm(quat_xyzw)
    return -quat if np.dot(quat, reference_xyzw) < 0 else quat


INTERFACES: dict[str, CommandInterface] = {i.name: i for i in (BASE_VELOCITY, EE_POSE)}


def interface(name: str) -> CommandInterface:
    if name not in INTERFACES:
        raise CommandError(f"command interface {name!r} has no robot-side code (known: {sorted(INTERFACES)})")
    return INTERFACES[name]
