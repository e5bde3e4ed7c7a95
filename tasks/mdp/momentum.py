"""Whole-body angular momentum: what a biped's swinging legs put into its pelvis and the stance foot must resist."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.math import quat_apply, quat_apply_inverse

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def angular_momentum_w(
    mass: torch.Tensor,
    inertia_b: torch.Tensor,
    quat_w: torch.Tensor,
    com_pos_w: torch.Tensor,
    com_lin_vel_w: torch.Tensor,
    ang_vel_w: torch.Tensor,
) -> torch.Tensor:
    """Angular momentum of a set of rigid bodies about their common centre of mass, in the world frame (MuJoCo's
    ``subtree_angmom`` of the root). Per body (leading dims ``(..., bodies)``): mass, inertia about its COM in its
    own frame (9 values, row-major), orientation (x, y, z, w), COM position and velocity, angular velocity."""
    total = mass.sum(dim=-1, keepdim=True).unsqueeze(-1)
    com = (mass.unsqueeze(-1) * com_pos_w).sum(dim=-2, keepdim=True) / total
    com_vel = (mass.unsqueeze(-1) * com_lin_vel_w).sum(dim=-2, keepdim=True) / total
    orbital = mass.unsqueeze(-1) * torch.linalg.cross(com_pos_w - com, com_lin_vel_w - com_vel, dim=-1)
    inertia = inertia_b.reshape(*inertia_b.shape[:-1], 3, 3)
    spin_b = (inertia @ quat_apply_inverse(quat_w, ang_vel_w).unsqueeze(-1)).squeeze(-1)
    return (orbital + quat_apply(quat_w, spin_b)).sum(dim=-2)


def whole_body_angular_momentum(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """:func:`angular_momentum_w` of the asset's bodies [kg m^2/s]: (envs, 3). Newton holds each body's inertia
    in its link frame about its COM, so the link quaternion rotates it."""
    data = env.scene[asset_cfg.name].data
    return angular_momentum_w(
        data.body_mass.torch,
        data.body_inertia.torch,
        data.body_link_quat_w.torch,
        data.body_com_pos_w.torch,
        data.body_com_lin_vel_w.torch,
        data.body_com_ang_vel_w.torch,
    )


def angular_momentum_l2(
    env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"), yaw: bool = True
) -> torch.Tensor:
    """Squared whole-body angular momentum [(kg m^2/s)^2] (mjlab's G1 ``angular_momentum`` term). It pays for the
    hip swing that turns a biped's pelvis with every step, which no base-velocity term sees. ``yaw=False`` leaves out
    the world-vertical component (mjlab's ``penalize_yaw=False``), so a commanded turn costs nothing."""
    momentum = whole_body_angular_momentum(env, asset_cfg)
    return (momentum if yaw else momentum[..., :2]).square().sum(dim=-1)
