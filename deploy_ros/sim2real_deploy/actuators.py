"""Actuator models: joint torque from a position target and the joint state. The one robot-side implementation.

Training drives every joint through one of these models (Isaac Lab's ``DCMotorCfg`` or ``IdealPDActuatorCfg``);
the metadata's ``actuator.model`` names it, with per-joint gains and limits, and sim-to-sim and ``mujoco_bridge``
apply the same model at the physics rate. Parity with Isaac Lab's torque is tested per registered task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


class ActuatorError(ValueError):
    """An actuator model this robot-side code does not implement."""


def pd_torque(target, q, qd, kp, kd, effort, vmax) -> np.ndarray:
    """Ideal PD clipped to the effort limit (Isaac Lab ``IdealPDActuator``); ``vmax`` unused (one signature)."""
    return np.clip(kp * (target - q) - kd * qd, -effort, effort)


def dc_motor_torque(target, q, qd, kp, kd, effort, vmax) -> np.ndarray:
    """PD torque saturated by Isaac Lab's ``DCMotor`` four-quadrant torque-speed curve (saturation effort = effort
    limit): the bound in the direction of motion falls linearly from ``effort`` at rest to 0 at ``vmax`` and below 0
    beyond it (the motor can only brake there); against the motion, up to ``effort``. The speed entering the curve
    is clamped where the curve meets the opposite effort limit (``2 vmax``), as Isaac Lab and Newton do.
    """
    tau = kp * (target - q) - kd * qd
    v = np.clip(qd, -2.0 * vmax, 2.0 * vmax)
    hi = np.minimum(effort * (1.0 - v / vmax), effort)
    lo = np.maximum(effort * (-1.0 - v / vmax), -effort)
    return np.clip(tau, lo, hi)


MODELS: dict[str, Callable[..., np.ndarray]] = {"dc_motor": dc_motor_torque, "pd": pd_torque}


class Actuator:
    """The policy's actuator model with its per-joint gains and limits (policy order)."""

    def __init__(self, model: str, kp, kd, effort, vmax):
        if model not in MODELS:
            raise ActuatorError(f"actuator model {model!r} has no robot-side code (known: {sorted(MODELS)})")
        self.model, self.torque_fn = model, MODELS[model]
        self.kp, self.kd = np.asarray(kp, dtype=np.float64), np.asarray(kd, dtype=np.float64)
        self.effort, self.vmax = np.asarray(effort, dtype=np.float64), np.asarray(vmax, dtype=np.float64)

    def __call__(self, target: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.torque_fn(target, q, qd, self.kp, self.kd, self.effort, self.vmax)

    @classmethod
    def from_metadata(cls, meta: Any) -> Actuator:  # a validated PolicyMetadata
        """The torque a simulator applies: Kd 0 where the physics simulates it as joint damping (``MujocoRobot``)."""
        return cls(
            meta.actuator_model,
            meta.joint_array("stiffness"),
            np.where(meta.implicit_damping, 0.0, meta.joint_array("damping")),
            meta.joint_array("effort_limit"),
            meta.joint_array("velocity_limit"),
        )
