"""Velocity-tracking penalties that keep growing with the error, where Isaac Lab's exp kernels flatten out."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def ang_vel_z_error_l2(
    env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """Squared error of the base yaw rate against the commanded one. The exp kernel (std 0.5 rad/s) pays almost
    nothing, and so teaches almost nothing, at the 1-2 rad/s a biped's pelvis swings through with every step."""
    yaw_rate = env.scene[asset_cfg.name].data.root_ang_vel_b.torch[:, 2]
    return torch.square(env.command_manager.get_command(command_name)[:, 2] - yaw_rate)
