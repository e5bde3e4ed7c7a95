"""Posture penalties that step aside when the command needs the joints they hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.envs.mdp import joint_deviation_l1
from isaaclab.managers import SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def joint_deviation_l1_unless_sidestepping(
    env: ManagerBasedRLEnv,
    command_name: str,
    max_lateral_command: float | None = None,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
) -> torch.Tensor:
    """L1 distance of the joints from the default pose, paid only while the lateral command is at most
    ``max_lateral_command`` [m/s] (None: always). A biped steps sideways with its hip roll, which a plain posture
    term charges exactly when the command asks for it (MuJoCo Playground's G1 frees hip roll the same way)."""
    deviation = joint_deviation_l1(env, asset_cfg)
    if max_lateral_command is None:
        return deviation
    lateral = env.command_manager.get_command(command_name)[:, 1].abs()
    return deviation * (lateral <= max_lateral_command)
