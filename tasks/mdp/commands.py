"""A velocity command whose axes are each zero with some probability, so that pure single-axis commands (walk
backward, step sideways, turn in place: what a joystick sends and what the sim-to-sim check asks) are a fixed share of
the training commands rather than the rare corner of a uniform box. Isaac Lab's ``NormalVelocityCommand`` zeroes
axes the same way; this keeps the uniform ranges. On a generated terrain, the envs of chosen sub-terrains can be
given yaw-rate commands while the rest steer to a heading."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from isaaclab.envs.mdp import UniformVelocityCommand, UniformVelocityCommandCfg
from isaaclab.utils import configclass

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


class AxisVelocityCommand(UniformVelocityCommand):
    cfg: AxisVelocityCommandCfg

    def __init__(self, cfg: AxisVelocityCommandCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self.yaw_rate_envs = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        if cfg.yaw_rate_terrains:
            terrain = env.scene.terrain  # names checked against its sub-terrains by the task's finalize
            columns = sub_terrain_columns(terrain.cfg.terrain_generator)
            yaw_rate_columns = [i for i, name in enumerate(columns) if name in cfg.yaw_rate_terrains]
            self.yaw_rate_envs[:] = torch.isin(
                terrain.terrain_types, torch.tensor(yaw_rate_columns, device=self.device)
            )

    def _resample_command(self, env_ids: Sequence[int]):
        super()._resample_command(env_ids)
        self.is_heading_env[env_ids] &= ~self.yaw_rate_envs[env_ids]
        if not any(self.cfg.zero_prob):  # no extra draws: the random stream stays Isaac Lab's
            return
        commands = self.vel_command_b[env_ids]
        keep = torch.rand(commands.shape, device=self.device) >= torch.tensor(self.cfg.zero_prob, device=self.device)
        self.vel_command_b[env_ids] = commands * keep


def sub_terrain_columns(generator: Any) -> list[str]:
    """The sub-terrain name of each column of a curriculum ``TerrainGeneratorCfg``: columns are laid out by the
    sub-terrains' cumulative proportions, in their order (as Isaac Lab's
    ``TerrainGenerator._generate_curriculum_terrains`` does, which keeps the mapping to itself)."""
    names = list(generator.sub_terrains)
    proportions = np.array([sub.proportion for sub in generator.sub_terrains.values()], dtype=float)
    bounds = np.cumsum(proportions / proportions.sum())
    return [
        names[int(np.min(np.where(col / generator.num_cols + 0.001 < bounds)[0]))] for col in range(generator.num_cols)
    ]


@configclass
class AxisVelocityCommandCfg(UniformVelocityCommandCfg):
    class_type: type = AxisVelocityCommand

    zero_prob: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Per axis (lin_vel_x, lin_vel_y, ang_vel_z): the probability that a resampled command is zero on it. With p on
    every axis, each pure single-axis command is p²(1-p) of the commands and the zero command p³."""

    yaw_rate_terrains: tuple[str, ...] = ()
    """Sub-terrains (names in a curriculum terrain generator) whose envs always get yaw-rate commands drawn from
    ``ranges.ang_vel_z``, even with ``heading_command``: sustained turns, as a joystick sends them."""
