"""The robot registry: one folder per robot, found here, registering itself.

Each sub-package ``sim2real.robots.<name>`` defines ``SPEC`` (a :class:`RobotSpec`: plain data, no Isaac Lab, the
one source of truth for training, export, sim-to-sim and the ROS node) and ``TASKS`` (gym ids -> entry points of
its ``env_cfg`` and ``agents`` modules, loaded only when a task is made). Adding a robot is adding a folder here
and its assets; nothing central is edited. ``docs/add_a_robot.md`` walks through it.
"""

from __future__ import annotations

import importlib
import pkgutil

from sim2real.robots.spec import JointGroup, RobotSpec

ROBOTS: dict[str, RobotSpec] = {}
TASKS: dict[str, dict[str, str]] = {}

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _info.ispkg:
        _robot = importlib.import_module(f"{__name__}.{_info.name}")
        if _robot.SPEC.name != _info.name:
            raise ImportError(f"robot folder {_info.name!r} defines SPEC.name {_robot.SPEC.name!r}: they must match")
        ROBOTS[_robot.SPEC.name] = _robot.SPEC
        TASKS.update(_robot.TASKS)

__all__ = ["ROBOTS", "TASKS", "JointGroup", "RobotSpec"]
