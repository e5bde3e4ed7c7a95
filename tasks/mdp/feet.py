"""Foot posture and motion on the ground: how far each foot is tilted off the ground plane, how fast it turns, whether
it pushes against a step instead of standing on it."""

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


def feet_spin(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Sum over the selected feet in contact (net normal force over 1 N in the sensor's history, as ``feet_slide``)
    of the foot's |yaw rate| about the world vertical [rad/s]: ``feet_slide``'s turning counterpart. A biped's stance
    foot pivoting on the floor lets the swinging leg turn the pelvis (docs/tasks.md, G1)."""
    forces = env.scene.sensors[sensor_cfg.name].data.net_normal_forces_w_history.torch[:, :, sensor_cfg.body_ids]
    in_contact = forces.norm(dim=-1).max(dim=1)[0] > 1.0
    spin = env.scene[asset_cfg.name].data.body_ang_vel_w.torch[:, asset_cfg.body_ids, 2].abs()
    return (spin * in_contact).sum(dim=1)


def feet_stumble(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, ratio: float = 0.7) -> torch.Tensor:
    """Number of selected feet whose net contact normal force is more than ``ratio`` times as horizontal as vertical
    (and over 1 N sideways): a foot pressed against a riser instead of standing on a tread (legged_gym's ``stumble``,
    which reads the total force at 5x). Normal forces only, so friction on level ground never counts. On a height
    field a riser is a ramp one 0.1 m cell wide, an 11 cm step's at a ratio of 1.1; ratio 0.7 catches steps from
    7 cm and passes the 0.4 slopes."""
    forces = env.scene.sensors[sensor_cfg.name].data.net_normal_forces_w.torch[:, sensor_cfg.body_ids]
    horizontal = forces[..., :2].norm(dim=-1)
    return ((horizontal > ratio * forces[..., 2].abs()) & (horizontal > 1.0)).sum(dim=1).float()


def feet_clearance_body(
    env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg, clearance: float, standing_height: float, foot_offset: float
) -> torch.Tensor:
    """Sum over the selected feet of (sole height in the base frame - its target)^2 x the foot's horizontal speed
    [m^2 m/s] (HIMLoco's ``foot_clearance``; a penalty, weight < 0). The target is ``clearance`` [m] above where the
    sole sits under a base standing at ``standing_height``; ``foot_offset`` is origin to sole. A base standing lower
    (a Go2 settled under its PD gains: 3-7 cm) asks for that much less height above the ground. The height is
    measured from the base, not the ground: a blind policy pays for a low swing on the tread it stands on, and so
    lifts over a riser it cannot see. The speed is the foot frame's in the world (HIMLoco's is relative to the
    base), so a planted foot pays nothing."""
    speed = env.scene[asset_cfg.name].data.body_link_lin_vel_w.torch[:, asset_cfg.body_ids, :2].norm(dim=-1)
    target = clearance - standing_height + foot_offset
    return ((feet_in_base_frame(env, asset_cfg)[..., 2] - target).square() * speed).sum(dim=1)


def feet_in_base_frame(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Positions of the selected bodies relative to the base, in the base frame [m]: (envs, bodies, 3)."""
    data = env.scene[asset_cfg.name].data
    relative = data.body_pos_w.torch[:, asset_cfg.body_ids] - data.root_pos_w.torch[:, None]
    return quat_apply_inverse(data.root_quat_w.torch[:, None], relative)
