"""``mdp.feet_tilt`` on hand-computed foot orientations."""

from __future__ import annotations

import math
from types import SimpleNamespace as NS

import pytest
import torch


def test_feet_tilt_on_hand_computed_values():
    from isaaclab.managers import SceneEntityCfg
    from isaaclab.utils.math import quat_from_euler_xyz

    from sim2real.tasks.mdp import feet_tilt

    # env 0: both feet flat but yawed (no tilt); env 1: left foot rolled 0.3 rad, right pitched -0.5 rad and yawed
    roll = torch.tensor([[0.0, 0.0], [0.3, 0.0]])
    pitch = torch.tensor([[0.0, 0.0], [0.0, -0.5]])
    yaw = torch.tensor([[1.0, -2.0], [0.0, 0.7]])
    quat = quat_from_euler_xyz(roll.flatten(), pitch.flatten(), yaw.flatten()).reshape(2, 2, 4)
    robot = NS(data=NS(body_quat_w=NS(torch=quat)))
    env = NS(scene={"robot": robot})
    feet = SceneEntityCfg("robot")
    feet.body_ids = [0, 1]
    assert feet_tilt(env, feet).tolist() == pytest.approx([0.0, math.sin(0.3) + math.sin(0.5)], abs=1e-6)
