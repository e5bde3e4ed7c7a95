"""Randomisation events sim2real adds to Isaac Lab's: the passive dynamics of every joint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from isaaclab.managers import SceneEntityCfg

from sim2real_deploy.policy_file import JOINT_DYNAMICS_KEYS, JOINT_DYNAMICS_LOG_UNIFORM, joint_dynamics_quantile

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


def randomize_joint_passive_dynamics(
    env: ManagerBasedEnv,
    env_ids: torch.Tensor | None,
    asset_cfg: SceneEntityCfg,
    ranges: dict[str, list[list[float]]],
    controller_damping: list[float] | None = None,
) -> None:
    """Viscous damping, Coulomb friction and armature of each selected joint, in its own [low, high] range:
    log-uniform for ``JOINT_DYNAMICS_LOG_UNIFORM`` (damping, armature), uniform for friction.

    ``ranges`` maps each of ``JOINT_DYNAMICS_KEYS`` to one [low, high] per selected joint (absolute values; the MJCF's
    nominal value should lie inside). Sampled independently per env and joint: real motors differ one by one.
    ``controller_damping`` (per selected joint) is added to the sampled damping: the Kd of joints whose PD damping
    the physics simulates as joint damping (``JointGroup.implicit_damping``).
    """
    asset = env.scene[asset_cfg.name]
    if env_ids is None:
        env_ids = torch.arange(env.scene.num_envs, device=env.device)
    joint_ids = asset_cfg.joint_ids
    sample = {}
    for key in JOINT_DYNAMICS_KEYS:
        bounds = torch.as_tensor(ranges[key], dtype=torch.float32, device=env.device)  # (joints, 2)
        u = torch.rand(len(env_ids), bounds.shape[0], device=env.device)
        sample[key] = joint_dynamics_quantile(key, bounds[:, 0], bounds[:, 1], u, JOINT_DYNAMICS_LOG_UNIFORM)
    if controller_damping is not None:
        sample["damping"] = sample["damping"] + torch.as_tensor(controller_damping, device=env.device)
    asset.write_joint_viscous_friction_coefficient_to_sim_index(
        joint_viscous_friction_coeff=sample["damping"], joint_ids=joint_ids, env_ids=env_ids
    )
    asset.write_joint_friction_coefficient_to_sim_index(
        joint_friction_coeff=sample["friction"], joint_ids=joint_ids, env_ids=env_ids
    )
    asset.write_joint_armature_to_sim_index(armature=sample["armature"], joint_ids=joint_ids, env_ids=env_ids)
