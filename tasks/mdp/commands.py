"""A velocity command whose axes are each zero with some probability, so that pure single-axis commands (walk
backward, step sideways, turn in place: what a joystick sends and what the sim-to-sim check asks) are a fixed share of
the training commands rather than the rare corner of a uniform box. Isaac Lab's ``NormalVelocityCommand`` zeroes
axes the same way; this keeps the uniform ranges."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from isaaclab.envs.mdp import UniformVelocityCommand, UniformVelocityCommandCfg
from isaaclab.utils import configclass


class AxisVelocityCommand(UniformVelocityCommand):
    cfg: AxisVelocityCommandCfg

    def _resample_command(self, env_ids: Sequence[int]):
        super()._resample_command(env_ids)
        if not any(self.cfg.zero_prob):  # no extra draws: the random stream stays Isaac Lab's
            return
        commands = self.vel_command_b[env_ids]
        keep = torch.rand(commands.shape, device=self.device) >= torch.tensor(self.cfg.zero_prob, device=self.device)
        self.vel_command_b[env_ids] = commands * keep


@configclass
class AxisVelocityCommandCfg(UniformVelocityCommandCfg):
    class_type: type = AxisVelocityCommand

    zero_prob: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Per axis (lin_vel_x, lin_vel_y, ang_vel_z): the probability that a resampled command is zero on it. With p on
    every axis, each pure single-axis command is p²(1-p) of the commands and the zero command p³."""
