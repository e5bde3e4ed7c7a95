"""Privileged observations for the critic: state the robot cannot measure and each env's randomised physics."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import warp as wp
from isaaclab.actuators.newton.adapter import read_group_parameter
from isaaclab.managers import ManagerTermBase, ObservationTermCfg, SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv


def base_height(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
    """Base height above the env's ground plane [m] (flat ground: world z)."""
    return env.scene[asset_cfg.name].data.root_pos_w.torch[:, 2:3]


def contact_states(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, threshold: float = 1.0) -> torch.Tensor:
    """1 where the selected bodies touch something (net contact force above ``threshold`` N), else 0."""
    forces = env.scene.sensors[sensor_cfg.name].data.net_forces_w.torch[:, sensor_cfg.body_ids]
    return (forces.norm(dim=-1) > threshold).float()


def body_mass(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Mass of the selected bodies [kg]: nominal plus what randomisation added (the normaliser removes the mean)."""
    return env.scene[asset_cfg.name].data.body_mass.torch[:, asset_cfg.body_ids]


def body_com(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Centre of mass of the selected bodies in their own frames [m]; randomisation shifts it per env."""
    asset = env.scene[asset_cfg.name]
    return asset.data.body_com_pos_b.torch[:, asset_cfg.body_ids].flatten(1)


def actuator_gain_scale(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
    """Each joint's Kp then Kd relative to its actuator config's nominal gains (motor-strength randomisation)."""
    asset = env.scene[asset_cfg.name]
    kp, kd = [], []
    for name, actuator in asset.actuators.items():
        cfg = asset.cfg.actuators[name]
        stiffness, damping = _actuator_gains(asset.actuators, name, actuator)
        kp.append(stiffness / cfg.stiffness)
        kd.append(damping / cfg.damping if cfg.damping else torch.ones_like(damping))  # 0: Kd in the joint damping
    return torch.cat(kp + kd, dim=1).to(env.device)


def _actuator_gains(collection, name: str, actuator) -> tuple[torch.Tensor, torch.Tensor]:
    """Live per-env gains, whether Newton executes the group natively or Isaac Lab does."""
    if name in getattr(collection, "_native_group_names", ()):
        return (
            read_group_parameter(collection, name, "controller", "kp"),
            read_group_parameter(collection, name, "controller", "kd"),
        )
    return actuator.stiffness, actuator.damping


def action_delay(env: ManagerBasedRLEnv, action_name: str = "joint_pos") -> torch.Tensor:
    """Each env's action delay in policy steps."""
    return env.action_manager.get_term(action_name).delay.float()[:, None]


class shape_friction(ManagerTermBase):
    """Mean friction coefficient of the asset's collision shapes per env, read back from the Newton model.

    Reads what the physics actually uses, so the critic sees the randomised value whichever term set it.
    """

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        asset = env.scene[cfg.params.get("asset_cfg", SceneEntityCfg("robot")).name]
        model = env.sim.physics_manager.get_model()
        self._mu = asset._root_view.get_attribute("shape_material_mu", model)[:, 0]

    def __call__(self, env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
        return wp.to_torch(self._mu).mean(dim=1, keepdim=True).to(env.device)


def joint_passive_dynamics(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")) -> torch.Tensor:
    """Each selected joint's viscous damping, Coulomb friction and armature, as the physics has them."""
    data = env.scene[asset_cfg.name].data
    values = (data.joint_viscous_friction_coeff, data.joint_friction_coeff, data.joint_armature)
    return torch.cat([v.torch[:, asset_cfg.joint_ids] for v in values], dim=1).to(env.device)
