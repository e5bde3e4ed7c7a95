"""A gait clock for legged robots: a phase observation and the rewards that tie foot contacts and swing height to it.

The phase is episode time over the period, from 0 at each episode start; the robot side computes the same value
from its control ticks since the policy took over (``sim2real_deploy.observations``, term ``gait_phase``). Foot
``i`` is in stance while ``(phase + offsets[i]) mod 1 < stance_fraction``, as in unitree_rl_gym's G1 task and
unitree_rl_lab's ``feet_gait``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from isaaclab.envs.mdp import joint_deviation_l1
from isaaclab.managers import SceneEntityCfg

from .height_grid import height_above_ground

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def clock_phase(env: ManagerBasedRLEnv, period: float) -> torch.Tensor:
    """The clock's phase in [0, 1) per env: episode time over ``period``."""
    return torch.remainder(env.episode_length_buf.float() * env.step_dt / period, 1.0)


MOVING = 0.1
"""A command asks for motion when |(vx, vy)| + |yaw rate| exceeds this: a standing robot is not asked to step."""


def gait_phase(
    env: ManagerBasedRLEnv, period: float, command_name: str = "base_velocity", still_below: float = 0.0
) -> torch.Tensor:
    """sin and cos of the clock's phase (2 values); (0, 0) while the command is below ``still_below`` (0: never), so
    that a robot asked to stand sees no clock to step to (holosoma stops its phase when standing)."""
    angle = 2.0 * math.pi * clock_phase(env, period)
    phase = torch.stack([torch.sin(angle), torch.cos(angle)], dim=1)
    if still_below > 0:
        phase *= _moving(env, command_name, still_below)[:, None]
    return phase


def _moving(env: ManagerBasedRLEnv, command_name: str, threshold: float = MOVING) -> torch.Tensor:
    """1 where the command asks for motion (above ``threshold``), else 0."""
    command = env.command_manager.get_command(command_name)
    return ((command[:, :2].norm(dim=1) + command[:, 2].abs()) > threshold).float()


def _sole_heights(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg, foot_offset: float) -> torch.Tensor:
    """Each foot body's origin above the ground under it, less ``foot_offset`` (origin to sole) [m]."""
    feet = env.scene[asset_cfg.name].data.body_pos_w.torch[:, asset_cfg.body_ids]
    return height_above_ground(env, feet) - foot_offset


def gait_contact(
    env: ManagerBasedRLEnv,
    sensor_cfg: SceneEntityCfg,
    command_name: str,
    period: float,
    offsets: Sequence[float],
    stance_fraction: float = 0.55,
    threshold: float = 1.0,
) -> torch.Tensor:
    """Number of feet whose contact state matches the clock's schedule, while the command asks for motion."""
    forces = env.scene.sensors[sensor_cfg.name].data.net_forces_w.torch[:, sensor_cfg.body_ids]
    contact = forces.norm(dim=-1) > threshold
    leg_phase = torch.remainder(clock_phase(env, period)[:, None] + torch.tensor(offsets, device=env.device), 1.0)
    matches = (contact == (leg_phase < stance_fraction)).float().sum(dim=1)
    return matches * _moving(env, command_name)


def feet_swing_height(
    env: ManagerBasedRLEnv,
    sensor_cfg: SceneEntityCfg,
    asset_cfg: SceneEntityCfg,
    command_name: str,
    target_height: float,
    foot_offset: float = 0.0,
    threshold: float = 1.0,
) -> torch.Tensor:
    """Squared error of each swinging foot's height to ``target_height`` [m], summed over feet, while moving.
    Heights are the foot bodies' origins above the ground under them less ``foot_offset`` (origin to sole)."""
    forces = env.scene.sensors[sensor_cfg.name].data.net_forces_w.torch[:, sensor_cfg.body_ids]
    swinging = (forces.norm(dim=-1) <= threshold).float()
    height = _sole_heights(env, asset_cfg, foot_offset)
    return (swinging * (height - target_height).square()).sum(dim=1) * _moving(env, command_name)


def swing_profile(leg_phase: torch.Tensor, swing_height: float) -> torch.Tensor:
    """Target sole height over a leg's cycle: a smooth rise from 0 to ``swing_height`` over the first half of its
    phase and back down over the second (MuJoCo Playground's ``gait.get_rz``, a cubic Bezier: 3t^2 - 2t^3)."""
    rise = 2.0 * leg_phase
    fall = rise - 1.0
    up = rise.square() * (3.0 - 2.0 * rise)
    down = 1.0 - fall.square() * (3.0 - 2.0 * fall)
    return swing_height * torch.where(leg_phase <= 0.5, up, down)


def feet_phase(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg,
    command_name: str,
    period: float,
    offsets: Sequence[float],
    swing_height: float,
    foot_offset: float = 0.0,
    std_sq: float = 0.008,
) -> torch.Tensor:
    """exp(-sum of squared sole-height errors / ``std_sq``) against :func:`swing_profile` on the clock, every foot
    on its own offset; the target is the ground while the command asks for no motion (MuJoCo Playground's and
    holosoma's ``feet_phase``). Like contact matching, it pays a robot standing through a stepping command part of
    its maximum (56 % at ``std_sq`` 0.008 and a 0.08 m swing); it pays every centimetre of lift on the way to a step."""
    leg_phase = torch.remainder(clock_phase(env, period)[:, None] + torch.tensor(offsets, device=env.device), 1.0)
    target = swing_profile(leg_phase, swing_height) * _moving(env, command_name)[:, None]
    height = _sole_heights(env, asset_cfg, foot_offset)
    return torch.exp(-(height - target).square().sum(dim=1) / std_sq)


def stand_still(env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """L1 distance of the joints from their default positions while the command is zero: the clock keeps running,
    and a robot asked to stand should hold its pose instead of stepping with it (MuJoCo Playground's stand_still)."""
    return joint_deviation_l1(env, asset_cfg) * (1.0 - _moving(env, command_name))
