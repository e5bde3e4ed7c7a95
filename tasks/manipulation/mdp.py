"""Reach-specific privileged observations on top of the shared MDP vocabulary."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg
from isaaclab.utils.math import combine_frame_transforms, compute_pose_error

from sim2real.tasks.mdp import *  # noqa: F403

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def ee_pose_error_w(env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Target minus end-effector pose in the world frame: position [m] then axis-angle rotation [rad]."""
    asset = env.scene[asset_cfg.name]
    command = env.command_manager.get_command(command_name)
    root_pos, root_quat = asset.data.root_pos_w.torch, asset.data.root_quat_w.torch
    target_pos, target_quat = combine_frame_transforms(root_pos, root_quat, command[:, :3], command[:, 3:7])
    body = asset_cfg.body_ids[0]
    pos_err, rot_err = compute_pose_error(
        asset.data.body_pos_w.torch[:, body],
        asset.data.body_quat_w.torch[:, body],
        target_pos,
        target_quat,
        rot_error_type="axis_angle",
    )
    return torch.cat((pos_err, rot_err), dim=-1)


def joint_friction(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Per-joint Coulomb friction the physics uses [N m] (randomised at startup)."""
    return env.scene[asset_cfg.name].data.joint_friction_coeff.torch[:, asset_cfg.joint_ids]


def joint_armature(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Per-joint armature (reflected rotor inertia) the physics uses [kg m^2] (randomised at startup)."""
    return env.scene[asset_cfg.name].data.joint_armature.torch[:, asset_cfg.joint_ids]


def hold_unactuated_joints(env: ManagerBasedRLEnv, env_ids: torch.Tensor | None, action_name: str = "joint_pos"):
    """Target the default pose on every joint the policy's action term does not drive (the fingers during reach).

    Joint targets start at zero and action terms only write their own joints, so without this the hand closes.
    """
    asset = env.scene["robot"]
    driven = set(torch.as_tensor(env.action_manager.get_term(action_name)._joint_ids).tolist())
    others = [i for i in range(asset.num_joints) if i not in driven]
    if not others:
        return
    ids = torch.arange(env.num_envs, device=env.device) if env_ids is None else env_ids
    targets = asset.data.default_joint_pos.torch[ids][:, others]
    asset.actuators.target_command.set_position_index(value=targets, joint_ids=others, env_ids=ids)
