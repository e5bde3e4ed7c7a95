"""Observation term names a policy file may use, and their sizes.

The exporter validates a task's terms against this table, and the MuJoCo sim-to-sim check and the ROS node
compute each term by name: a term missing here would have no robot-side code, so it is rejected at export
time instead of on the robot. Definitions are in ``docs/policy_schema.md``. Plain Python: no torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# name -> what its size is tied to ("joints": one per joint, "commands": one per command, int: fixed)
TERM_SIZES: dict[str, int | str] = {
    "base_ang_vel": 3,
    "projected_gravity": 3,
    "velocity_commands": "commands",
    "joint_pos": "joints",
    "joint_vel": "joints",
    "actions": "joints",
}


def expected_term_size(name: str, num_joints: int, num_commands: int) -> int:
    """Size the term ``name`` must have for a robot with ``num_joints`` joints and ``num_commands`` commands."""
    if name not in TERM_SIZES:
        raise ValueError(
            f"unknown observation term {name!r}: the robot side has no code for it (known: {sorted(TERM_SIZES)})"
        )
    size = TERM_SIZES[name]
    return {"joints": num_joints, "commands": num_commands}.get(size, size)  # type: ignore[arg-type]


def check_terms(terms: Sequence[Mapping[str, Any]], num_joints: int, num_commands: int) -> None:
    """Raise ValueError if a term is unknown, has the wrong size, or lacks a field."""
    for term in terms:
        missing = [key for key in ("name", "size", "scale", "clip") if key not in term]
        if missing:
            raise ValueError(f"observation term {term!r} lacks field(s) {missing}")
        expected = expected_term_size(term["name"], num_joints, num_commands)
        if int(term["size"]) != expected:
            raise ValueError(f"observation term {term['name']!r} has size {term['size']}, expected {expected}")
