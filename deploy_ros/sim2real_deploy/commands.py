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

    def index(self, names: Sequence[str]) -> np.ndarray:
        """Position in :attr:`fields` of each trained command name, in the policy's order."""
        unknown = [n for n in names if n not in self.fields]
        if unknown:
            raise CommandError(f"command(s) {unknown} are not fields of '{self.name}' (known: {list(self.fields)})")
        return np.array([self.fields.index(n) for n in names], dtype=int)


BASE_VELOCITY = CommandInterface("base_velocity", ("lin_vel_x", "lin_vel_y", "ang_vel_z"), obs_term="velocity_commands")
"""A twist in the base's yaw frame: (vx [m/s], vy [m/s], yaw rate [rad/s]), as ``geometry_msgs/Twist`` carries it."""

EE_POSE = CommandInterface(
    "ee_pose", ("pos_x", "pos_y", "pos_z", "quat_x", "quat_y", "quat_z", "quat_w"), obs_term="pose_command"
)
"""An end-effector pose target in the robot's base frame: position [m] and unit quaternion (x, y, z, w), the order
of Isaac Lab 3's ``pose_command`` (and of ``geometry_msgs/Pose``)."""

POSE_WORKSPACE_KEYS = ("pos_x", "pos_y", "pos_z", "roll", "pitch", "yaw")
"""Keys of an ``ee_pose`` policy's ``commands.workspace``: the position [m] and Euler [rad] ranges targets came from."""

INTERFACES: dict[str, CommandInterface] = {i.name: i for i in (BASE_VELOCITY, EE_POSE)}


def interface(name: str) -> CommandInterface:
    if name not in INTERFACES:
        raise CommandError(f"command interface {name!r} has no robot-side code (known: {sorted(INTERFACES)})")
    return INTERFACES[name]
