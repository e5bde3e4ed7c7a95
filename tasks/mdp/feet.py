"""Foot posture: how far each foot is tilted off the ground plane."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.math import quat_apply_inverse

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def feet_tilt(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Sum over the selected foot bodies of the sine of each one's tilt: the horizontal part of gravity's direction
    in the foot's frame (holosoma's ``penalty_feet_ori``). A biped rolling on a sole's edge stands on one or two
    contact points and pivots about them; the term pays for keeping the soles flat. Assumes foot frames level when
    the sole is flat, as the G1's ankle-roll links are in its default pose."""
    quat = env.scene[asset_cfg.name].data.body_quat_w.torch[:, asset_cfg.body_ids]
    down = torch.tensor([0.0, 0.0, -1.0], device=quat.device).expand(quat.shape[:-1] + (3,))
    return quat_apply_inverse(quat, down)[..., :2].norm(dim=-1).sum(dim=1)
