"""Manipulation terms (reach, lift) on top of the shared MDP vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING
from typing import TYPE_CHECKING

import torch
import warp as wp
from isaaclab.envs.mdp.actions import BinaryJointPositionAction, BinaryJointPositionActionCfg
from isaaclab.managers import ManagerTermBase, ObservationTermCfg, SceneEntityCfg
from isaaclab.utils import configclass
from isaaclab.utils.math import compute_pose_error, quat_apply, quat_apply_inverse, subtract_frame_transforms
from isaaclab_tasks.contrib.lift.mdp import (  # noqa: F401  Isaac Lab's lift terms, imported not copied
    object_goal_distance,
    object_is_lifted,
    object_position_in_robot_root_frame,
)

from sim2real.tasks.mdp import *  # noqa: F403

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv, ManagerBasedRLEnv


def ee_pose_error_b(env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Target minus end-effector pose in the robot's base frame: position [m] then axis-angle rotation [rad]. A robot
    computes the same from its joint angles by forward kinematics (``sim2real_deploy.kinematics``)."""
    asset = env.scene[asset_cfg.name]
    body = asset_cfg.body_ids[0]
    ee_pos_b, ee_quat_b = subtract_frame_transforms(
        asset.data.root_pos_w.torch,
        asset.data.root_quat_w.torch,
        asset.data.body_pos_w.torch[:, body],
        asset.data.body_quat_w.torch[:, body],
    )
    command = env.command_manager.get_command(command_name)
    pos_err, rot_err = compute_pose_error(
        ee_pos_b, ee_quat_b, command[:, :3], command[:, 3:7], rot_error_type="axis_angle"
    )
    return torch.cat((pos_err, rot_err), dim=-1)


def orientation_command_error_tanh(
    env: ManagerBasedRLEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg
) -> torch.Tensor:
    """``1 - tanh(angle / std)`` of the orientation error [rad]: the fine orientation kernel Isaac Lab's reach has
    for position only (``position_command_error_tanh``)."""
    return 1 - torch.tanh(orientation_command_error(env, command_name, asset_cfg) / std)  # noqa: F405


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


def grasp_point_w(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg, grasp_offset: tuple[float, ...]) -> torch.Tensor:
    """World position of the grasp point: ``grasp_offset`` in the end-effector body's frame [m]."""
    asset = env.scene[asset_cfg.name]
    body = asset_cfg.body_ids[0]
    offset = torch.tensor(grasp_offset, device=env.device).expand(env.num_envs, 3)
    return asset.data.body_pos_w.torch[:, body] + quat_apply(asset.data.body_quat_w.torch[:, body], offset)


def object_to_grasp_point_w(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg,
    grasp_offset: tuple[float, ...],
    object_cfg: SceneEntityCfg = SceneEntityCfg("object"),
) -> torch.Tensor:
    """Object position minus grasp point, world frame [m]."""
    return env.scene[object_cfg.name].data.root_pos_w.torch - grasp_point_w(env, asset_cfg, grasp_offset)


def object_to_grasp_point_b(
    env: ManagerBasedRLEnv,
    asset_cfg: SceneEntityCfg,
    grasp_offset: tuple[float, ...],
    object_cfg: SceneEntityCfg = SceneEntityCfg("object"),
) -> torch.Tensor:
    """Object position minus grasp point in the robot's base frame [m]: a robot computes the same from the object
    pose perception reports and its joint angles by forward kinematics (``sim2real_deploy.kinematics``)."""
    root_quat = env.scene[asset_cfg.name].data.root_quat_w.torch
    return quat_apply_inverse(root_quat, object_to_grasp_point_w(env, asset_cfg, grasp_offset, object_cfg))


def object_ee_distance(
    env: ManagerBasedRLEnv,
    std: float,
    asset_cfg: SceneEntityCfg,
    grasp_offset: tuple[float, ...],
    object_cfg: SceneEntityCfg = SceneEntityCfg("object"),
) -> torch.Tensor:
    """Isaac Lab's reaching kernel, 1 - tanh(distance / std), from the grasp point (its version needs a frame
    transformer sensor for the same point)."""
    distance = object_to_grasp_point_w(env, asset_cfg, grasp_offset, object_cfg).norm(dim=-1)
    return 1.0 - torch.tanh(distance / std)


def contact_force_norm(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg) -> torch.Tensor:
    """Magnitude of each sensed body's normal contact force with the sensor's filter bodies [N]."""
    forces = env.scene.sensors[sensor_cfg.name].data.normal_force_matrix_w.torch  # (envs, bodies, partners, 3)
    return forces.sum(dim=2).norm(dim=-1)


class box_size(ManagerTermBase):
    """Edge lengths of the asset's first collision shape (a box) per env [m], read back from the Newton model.

    Reads what the physics uses, so the critic sees each env's cube whichever way its size was set.
    """

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        asset = env.scene[cfg.params["asset_cfg"].name]
        model = env.sim.physics_manager.get_model()
        self._half_extents = asset._root_view.get_attribute("shape_scale", model)[:, 0]

    def __call__(self, env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
        return 2.0 * wp.to_torch(self._half_extents)[:, 0].to(env.device)


class GripperAction(BinaryJointPositionAction):
    """Open / close (< 0 closes) with finger targets that travel at the gripper's speed instead of jumping.

    A parallel gripper moves its fingers at a set speed (Franka Hand: up to 0.05 m/s each). Here the speed limit is
    on the target, advanced once per policy step, and a plain PD follows it: the DC-motor torque-speed line that
    limits the arm would act on a ~0.1 kg finger as a 1400 N s/m damper, which explicit 5 ms steps cannot integrate
    (the fingers chattered at ±70 N).
    """

    cfg: GripperActionCfg

    def __init__(self, cfg: GripperActionCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self._targets = self._open_command.repeat(self.num_envs, 1)
        self._max_step = cfg.speed * env.step_dt

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        self._targets += (self._processed_actions - self._targets).clamp(-self._max_step, self._max_step)

    def apply_actions(self) -> None:
        self._asset.set_joint_position_target_index(target=self._targets, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        self._targets[slice(None) if env_ids is None else env_ids] = self._open_command  # the reset opens the hand


@configclass
class GripperActionCfg(BinaryJointPositionActionCfg):
    class_type: type = GripperAction
    speed: float = MISSING
    """Finger target speed [m/s or rad/s]."""


def object_in_grasp(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, threshold: float = 1.0) -> torch.Tensor:
    """1 while every sensed finger presses on the object with more than ``threshold`` N, else 0."""
    return (contact_force_norm(env, sensor_cfg) > threshold).all(dim=-1).float()


def object_is_lifted_in_grasp(
    env: ManagerBasedRLEnv,
    minimal_height: float,
    sensor_cfg: SceneEntityCfg,
    threshold: float = 1.0,
    object_cfg: SceneEntityCfg = SceneEntityCfg("object"),
) -> torch.Tensor:
    """Isaac Lab's ``object_is_lifted``, paid only while the fingers hold the object: a cube knocked into the air is
    not lifted (with the ungated term, a first training run learned to strike the cube so that it jumps)."""
    return object_is_lifted(env, minimal_height, object_cfg) * object_in_grasp(env, sensor_cfg, threshold)


class object_goal_distance_in_grasp(object_goal_distance):
    """Isaac Lab's ``object_goal_distance`` (tanh kernel on the lifted object's distance to the target), paid only
    while the fingers hold the object, for the same reason as :func:`object_is_lifted_in_grasp`."""

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        std: float,
        minimal_height: float,
        command_name: str,
        sensor_cfg: SceneEntityCfg,
        threshold: float = 1.0,
        robot_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
        object_cfg: SceneEntityCfg = SceneEntityCfg("object"),
        success_threshold: float | None = None,
    ) -> torch.Tensor:
        held = object_in_grasp(env, sensor_cfg, threshold)
        reward = super().__call__(env, std, minimal_height, command_name, robot_cfg, object_cfg, success_threshold)
        return reward * held
