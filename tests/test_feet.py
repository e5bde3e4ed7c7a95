"""``mdp.feet_tilt``, ``feet_spin`` and ``feet_stumble`` on hand-computed foot orientations, rates and forces."""

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


def test_feet_spin_counts_the_yaw_rate_of_feet_in_contact_only():
    from isaaclab.managers import SceneEntityCfg

    from sim2real.tasks.mdp import feet_spin

    # 2 envs, 2 feet, 3 history steps. Env 0: the left foot pressed (in one history step only) and turning at
    # -1.5 rad/s, the right foot in the air turning at 4; env 1: both pressed, yaw rates 0.2 and 0.5, roll rate ignored
    forces = torch.zeros(2, 3, 2, 3)
    forces[0, 2, 0, 2] = 50.0
    forces[0, :, 1, 2] = 0.5  # under the 1 N contact threshold
    forces[1, :, :, 2] = 200.0
    ang_vel = torch.tensor([[[0.0, 0.0, -1.5], [0.0, 0.0, 4.0]], [[3.0, 0.0, 0.2], [0.0, -2.0, 0.5]]])
    env = NS(scene=_Scene(robot=NS(data=NS(body_ang_vel_w=NS(torch=ang_vel)))))
    env.scene.sensors = {"contact_forces": NS(data=NS(net_normal_forces_w_history=NS(torch=forces)))}
    sensor, feet = SceneEntityCfg("contact_forces"), SceneEntityCfg("robot")
    sensor.body_ids = feet.body_ids = [0, 1]
    assert feet_spin(env, sensor, feet).tolist() == pytest.approx([1.5, 0.7], abs=1e-6)


def test_feet_stumble_counts_feet_pushed_sideways_by_the_ground():
    from isaaclab.managers import SceneEntityCfg

    from sim2real.tasks.mdp import feet_stumble

    # 2 envs, 4 feet (net normal force, world frame). Env 0: standing on level ground, a foot on a 0.4 slope
    # (ratio 0.4), a foot on an 11 cm riser's ramp (1.1) and a foot in the air; env 1: a shin grazing a wall
    # (0.5 N sideways, under the 1 N floor), a foot on a ramp at exactly 0.7 (not more), one at 0.8, and one at 3.0
    forces = torch.tensor(
        [
            [[0.0, 0.0, 80.0], [32.0, 0.0, 80.0], [0.0, -66.0, 60.0], [0.0, 0.0, 0.0]],
            [[0.3, 0.4, 0.0], [56.0, 0.0, 80.0], [0.0, 64.0, 80.0], [30.0, 0.0, 10.0]],
        ]
    )
    env = NS(scene=_Scene())
    env.scene.sensors = {"contact_forces": NS(data=NS(net_normal_forces_w=NS(torch=forces)))}
    sensor = SceneEntityCfg("contact_forces")
    sensor.body_ids = [0, 1, 2, 3]
    assert feet_stumble(env, sensor).tolist() == [1.0, 2.0]
    assert feet_stumble(env, sensor, ratio=0.3).tolist() == [2.0, 3.0]


class _Scene(dict):
    """An InteractiveScene's two lookups: ``scene[name]`` for assets and ``scene.sensors[name]``."""

    sensors: dict
