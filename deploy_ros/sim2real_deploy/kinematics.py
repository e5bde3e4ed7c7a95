"""Forward kinematics of a fixed-base arm's end effector in numpy, from the chain its policy metadata carries.

The exporter writes ``robot.ee_chain`` from the MJCF: the bodies from the base body (exclusive) to the end-effector
body (inclusive), each with its pose in its parent's frame and, where a hinge joint moves it, the joint's name, axis
and anchor in the body's frame (MuJoCo's ``body_pos``/``body_quat``/``jnt_axis``/``jnt_pos``). Chaining them gives
the end effector's pose in the base frame, as a robot computes it from its joint encoders alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def rotation_matrix(quat_wxyz: Sequence[float]) -> np.ndarray:
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64) / np.linalg.norm(quat_wxyz)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` [rad] about the unit ``axis`` (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def rotation_log(rotation: np.ndarray) -> np.ndarray:
    """Axis-angle vector [rad] of a rotation matrix (angle in [0, pi]), as Isaac Lab's ``axis_angle_from_quat``."""
    quat = quat_from_matrix(rotation)
    w, v = quat[0], quat[1:]
    if w < 0:  # the shortest rotation
        w, v = -w, -v
    norm = np.linalg.norm(v)
    angle = 2.0 * np.arctan2(norm, w)
    return v * (angle / norm) if norm > 1e-9 else 2.0 * v


def quat_from_matrix(rotation: np.ndarray) -> np.ndarray:
    """(w, x, y, z) of a rotation matrix (Shepperd's method: stable for every rotation)."""
    r = rotation
    trace = np.trace(r)
    if trace > 0:
        s = 2.0 * np.sqrt(1.0 + trace)
        return np.array([0.25 * s, (r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s])
    i = int(np.argmax(np.diag(r)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k])
    quat = np.empty(4)
    quat[0] = (r[k, j] - r[j, k]) / s
    quat[1 + i] = 0.25 * s
    quat[1 + j] = (r[j, i] + r[i, j]) / s
    quat[1 + k] = (r[k, i] + r[i, k]) / s
    return quat


@dataclass(frozen=True)
class Link:
    pos: np.ndarray  # body origin in the parent body's frame [m]
    rotation: np.ndarray  # body orientation in the parent body's frame
    joint: int | None  # index of the hinge that moves it, in policy joint order (None: rigidly attached)
    axis: np.ndarray  # hinge axis in the body's frame (unit)
    anchor: np.ndarray  # a point on the hinge axis in the body's frame [m]


def _check_link(entry: Mapping[str, Any]) -> None:
    """Raise ValueError for a chain entry the kinematics cannot use (a zero quaternion would turn into NaN)."""
    for key, size in {"pos": 3, "quat": 4, "axis": 3, "anchor": 3}.items():
        if key not in entry:
            if key in ("pos", "quat"):
                raise ValueError(f"ee_chain body {entry.get('body')!r} lacks {key!r}")
            continue
        value = np.asarray(entry[key], dtype=np.float64)
        if value.shape != (size,) or not np.all(np.isfinite(value)) or (key in ("quat", "axis") and not value.any()):
            raise ValueError(f"ee_chain body {entry.get('body')!r}: {key!r} must be {size} finite numbers, not all 0")


class EndEffectorChain:
    """The end effector's pose in the base frame from the policy joints' angles."""

    def __init__(self, links: Sequence[Link]):
        self.links = tuple(links)

    @classmethod
    def from_metadata(cls, chain: Sequence[Mapping[str, Any]], joint_names: Sequence[str]) -> EndEffectorChain:
        """``chain``: the metadata's ``robot.ee_chain``; ``joint_names``: the policy joint order."""
        links = []
        for entry in chain:
            _check_link(entry)
            joint = entry.get("joint")
            if joint is not None and joint not in joint_names:
                raise ValueError(f"ee_chain joint {joint!r} is not a policy joint")
            axis = np.asarray(entry.get("axis", (0.0, 0.0, 1.0)), dtype=np.float64)
            links.append(
                Link(
                    pos=np.asarray(entry["pos"], dtype=np.float64),
                    rotation=rotation_matrix(entry["quat"]),
                    joint=None if joint is None else list(joint_names).index(joint),
                    axis=axis / np.linalg.norm(axis),
                    anchor=np.asarray(entry.get("anchor", (0.0, 0.0, 0.0)), dtype=np.float64),
                )
            )
        return cls(links)

    def pose(self, joint_pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position [m], rotation matrix) of the end effector in the base frame."""
        pos, rot = np.zeros(3), np.eye(3)
        for link in self.links:
            pos, rot = pos + rot @ link.pos, rot @ link.rotation
            if link.joint is not None:  # rotate the body about its hinge line
                turn = axis_rotation(link.axis, float(joint_pos[link.joint]))
                pos, rot = pos + rot @ (link.anchor - turn @ link.anchor), rot @ turn
        return pos, rot

    def pose_error(self, joint_pos: np.ndarray, target_pos: np.ndarray, target_quat_xyzw: np.ndarray) -> np.ndarray:
        """Target minus end-effector pose in the base frame: position [m], then the axis-angle vector [rad] of the
        rotation from the hand to the target (Isaac Lab's ``compute_pose_error``, ``axis_angle``)."""
        pos, rot = self.pose(joint_pos)
        x, y, z, w = target_quat_xyzw
        target_rot = rotation_matrix((w, x, y, z))
        return np.concatenate([np.asarray(target_pos) - pos, rotation_log(target_rot @ rot.T)])
