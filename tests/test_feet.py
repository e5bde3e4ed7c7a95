"""``mdp.feet_tilt``, ``feet_spin``, ``feet_stumble`` and ``feet_clearance_body`` on hand-computed foot orientations,
rates, forces and positions."""

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


def test_feet_clearance_body_on_hand_computed_values():
    """Target: 0.1 m clearance - 0.3 m standing height + 0.02 m sole offset = 0.18 m below the base. Env 0, base level
    at 0.3 m: a sole on the ground (0.28 m below, 0.1 short) swinging at 2 m/s pays 0.01 x 2; one at the target height
    at 3 m/s pays nothing; a planted foot (no speed) pays nothing; a foot rising at 1 m/s straight up pays nothing.
    Env 1, the base 0.11 m higher (on a step) and pitched 0.5 rad nose up: a foot 0.1 m ahead of the base and 0.2 m
    below it in the world sits at -0.1 sin 0.5 - 0.2 cos 0.5 in the base frame (lower: the base leans back), and
    moves at 0.5 m/s."""
    from isaaclab.managers import SceneEntityCfg
    from isaaclab.utils.math import quat_from_euler_xyz

    from sim2real.tasks.mdp import feet_clearance_body

    root_pos = torch.tensor([[0.0, 0.0, 0.3], [1.0, 0.0, 0.41]])
    root_quat = quat_from_euler_xyz(torch.zeros(2), torch.tensor([0.0, -0.5]), torch.zeros(2))
    feet = torch.tensor(
        [
            [[0.2, 0.1, 0.02], [0.2, -0.1, 0.12], [-0.2, 0.1, 0.02], [-0.2, -0.1, 0.05]],
            [[1.1, 0.0, 0.21], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        ]
    )
    feet_vel = torch.zeros(2, 4, 3)
    feet_vel[0, 0, 0], feet_vel[0, 1, 1], feet_vel[0, 3, 2] = 2.0, 3.0, 1.0
    feet_vel[1, 0, :2] = torch.tensor([0.3, 0.4])
    data = NS(
        root_pos_w=NS(torch=root_pos),
        root_quat_w=NS(torch=root_quat),
        body_pos_w=NS(torch=feet),
        body_link_lin_vel_w=NS(torch=feet_vel),
    )
    env = NS(scene={"robot": NS(data=data)})
    asset = SceneEntityCfg("robot")
    asset.body_ids = [0, 1, 2, 3]
    pitched = -0.1 * math.sin(0.5) - 0.2 * math.cos(0.5)
    expected = [0.01 * 2.0, (pitched + 0.18) ** 2 * 0.5]
    penalty = feet_clearance_body(env, asset, clearance=0.1, standing_height=0.3, foot_offset=0.02)
    assert penalty.tolist() == pytest.approx(expected, abs=1e-6)
