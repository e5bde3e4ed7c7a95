"""Left-right symmetric data augmentation for PPO (rsl-rl's ``symmetry_cfg``, Mittal et al., ICRA 2024).

A legged robot's task is symmetric under reflection through its sagittal (x-z) plane: a mirrored state, command and
action is as good as the original. Every PPO minibatch is followed by its mirror image, so each rollout teaches both
sides (turning left teaches turning right) and the policy learns a symmetric gait.

Each observation term is mirrored by name: a column permutation and a sign per column (``out = sign * x[:, perm]``),
built once per env from the robot spec's :class:`~sim2real.robots.spec.Mirror` and the observation manager's layout.
A term with no rule is an error, so a new term cannot silently break the augmentation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from tensordict import TensorDict

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv

    from sim2real.robots.spec import RobotSpec

# vectors in the base frame (x forward, y left, z up): y flips; an angular velocity (axial vector) flips in x and z
VECTOR_SIGNS = {
    "base_lin_vel": (1, -1, 1),
    "base_ang_vel": (-1, 1, -1),
    "projected_gravity": (1, -1, 1),
    "velocity_commands": (1, -1, -1),  # vx, vy, yaw rate
    "base_com": (1, -1, 1),
}
UNCHANGED = ("base_height", "friction", "base_mass", "action_delay")
"""Scalars of the whole robot: the same in the mirror image."""
JOINT_ANGLES = ("joint_pos", "joint_vel", "actions")
MIRRORED_TERMS = frozenset(
    (
        *VECTOR_SIGNS,
        *UNCHANGED,
        *JOINT_ANGLES,
        "joint_dynamics",
        "gain_scale",
        "foot_contacts",
        "gait_phase",
        "height_scan",
    )
)
"""Observation terms with a mirror rule (:meth:`MirrorRules.term`)."""


def mirror_left_right(
    env, obs: TensorDict | None = None, actions: torch.Tensor | None = None
) -> tuple[TensorDict | None, torch.Tensor | None]:
    """rsl-rl ``data_augmentation_func``: each batch followed by its left-right mirror image (twice the rows)."""
    layout = _layout(env.unwrapped)
    if obs is not None:
        groups = {group: _with_mirror(obs[group], *layout[group]) for group in obs.keys()}
        obs = TensorDict(groups, batch_size=[2 * obs.batch_size[0]], device=obs.device)
    if actions is not None:
        actions = _with_mirror(actions, *layout["actions"])
    return obs, actions


def _with_mirror(rows: torch.Tensor, perm: torch.Tensor, sign: torch.Tensor) -> torch.Tensor:
    return torch.cat([rows, rows[:, perm] * sign])


def _layout(env: ManagerBasedRLEnv) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """(perm, sign) per observation group and for the action, built once per env."""
    if (cached := getattr(env, "_mirror_layout", None)) is not None:
        return cached
    from sim2real.robots import ROBOTS

    spec = ROBOTS[env.cfg.robot]
    if spec.mirror is None:
        raise ValueError(f"robot {spec.name!r} has no mirror in its spec: symmetry augmentation needs one")
    rules = MirrorRules(env, spec)
    manager = env.observation_manager
    layout = {}
    for group, names in manager.active_terms.items():
        perm, sign = [], []
        cfgs = manager._group_obs_term_cfgs[group]  # each term's history (a group's history_length is copied in)
        for name, dims, cfg in zip(names, manager.group_obs_term_dim[group], cfgs, strict=True):
            frames = cfg.history_length if cfg.history_length > 0 and cfg.flatten_history_dim else 1
            term_perm, term_sign = rules.term(name, dims[-1] // frames)
            for _ in range(frames):  # a flattened history: oldest to newest, each frame mirrored alike
                start = len(perm)
                perm += [start + p for p in term_perm]
                sign += term_sign
        layout[group] = _tensors(perm, sign, env.device)
    layout["actions"] = _tensors(*rules.joints(rules.action_joints), env.device)
    env._mirror_layout = layout
    return layout


def _tensors(perm: list[int], sign: list[float], device) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor(perm, dtype=torch.long, device=device), torch.tensor(sign, dtype=torch.float, device=device)


class MirrorRules:
    """The mirror of each named observation term of a locomotion env."""

    def __init__(self, env: ManagerBasedRLEnv, spec: RobotSpec) -> None:
        self.env, self.spec, self.mirror = env, spec, spec.mirror
        self.robot = env.scene["robot"]
        self.action_joints = list(env.action_manager.get_term("joint_pos")._joint_names)

    def term(self, name: str, size: int) -> tuple[list[int], list[float]]:
        """(perm, sign) within the term's ``size`` columns."""
        if name in VECTOR_SIGNS:
            sign = [float(s) for s in VECTOR_SIGNS[name]]
        elif name in UNCHANGED:
            sign = [1.0] * size
        elif name in JOINT_ANGLES:
            return self.joints(self._term_joints(name))
        elif name == "joint_dynamics":  # damping, friction, armature blocks: positive parameters, moved not negated
            return self._blocks([self._term_joints(name)] * 3)
        elif name == "gain_scale":  # Kp then Kd of each actuator group's joints
            joints = self._actuator_joints()
            return self._blocks([joints, joints])
        elif name == "foot_contacts":
            return self._blocks([self._sensor_bodies(name)])
        elif name == "gait_phase":
            sign = [self._phase_sign()] * 2
        elif name == "height_scan":  # heights, unsigned: each point takes its mirror point's (y negated)
            return self._scan_permutation(name), [1.0] * size
        else:
            raise ValueError(f"observation term {name!r} has no left-right mirror rule (sim2real.tasks.mdp.symmetry)")
        if len(sign) != size:
            raise ValueError(f"observation term {name!r} has {size} columns, its mirror rule {len(sign)}")
        return list(range(size)), sign

    def joints(self, names: list[str]) -> tuple[list[int], list[float]]:
        """Joint angle columns: each takes its mirror joint's value, negated for the mirror's ``negated`` joints."""
        return self.mirror.permutation(names), self.mirror.signs(names)

    def _blocks(self, blocks: list[list[str]]) -> tuple[list[int], list[float]]:
        perm: list[int] = []
        for names in blocks:
            start = len(perm)
            perm += [start + p for p in self.mirror.permutation(names)]
        return perm, [1.0] * len(perm)

    def _term_cfg(self, name: str):
        for group, names in self.env.observation_manager.active_terms.items():
            if name in names:
                return self.env.observation_manager._group_obs_term_cfgs[group][names.index(name)]
        raise KeyError(name)

    def _term_joints(self, name: str) -> list[str]:
        if name == "actions":
            return self.action_joints
        ids = self._term_cfg(name).params["asset_cfg"].joint_ids
        names = self.robot.joint_names
        return list(names) if isinstance(ids, slice) else [names[i] for i in ids]

    def _actuator_joints(self) -> list[str]:
        """Joints in ``mdp.actuator_gain_scale``'s order: each actuator group's joints, group by group."""
        collection = self.robot.actuators
        return [joint for group in collection.keys() for joint in collection._group_joint_names[group]]

    def _sensor_bodies(self, name: str) -> list[str]:
        cfg = self._term_cfg(name).params["sensor_cfg"]
        bodies = self.env.scene.sensors[cfg.name].sensor_names
        return list(bodies) if isinstance(cfg.body_ids, slice) else [bodies[i] for i in cfg.body_ids]

    def _scan_permutation(self, name: str) -> list[int]:
        """Each yaw-aligned scan point's mirror point (x, -y) in the term's pattern, from the grid term's pattern or
        the ray caster's."""
        from .height_grid import scanner_params

        params = self._term_cfg(name).params
        if "sensor_cfg" in params:
            params = scanner_params(self.env.scene.sensors[params["sensor_cfg"].name].cfg)
        pattern = params["pattern_cfg"]
        starts, _ = pattern.func(pattern, "cpu")
        xy = starts[:, :2].double() + torch.tensor(params.get("offset_xy", (0.0, 0.0)), dtype=torch.double)
        distance, perm = torch.cdist(xy * torch.tensor([1.0, -1.0], dtype=torch.double), xy).min(dim=1)
        if distance.max() > 1e-4:
            raise ValueError(f"observation term {name!r}: its scan points are not left-right symmetric")
        return perm.tolist()

    def _phase_sign(self) -> float:
        """The clock in the mirror image: each foot takes its mirror foot's place in the schedule, which is the same
        clock shifted by half a period for a trot or pace (sin and cos negated), unshifted for a bound or pronk."""
        return phase_shift_sign(self.env.cfg.gait_offsets, self.mirror.permutation(self.spec.foot_bodies))


def phase_shift_sign(offsets: tuple[float, ...] | list[float], foot_perm: list[int]) -> float:
    """+1 if the mirrored feet keep the schedule, -1 if it is shifted by half a period; else an error."""
    shifts = {round((offsets[m] - offsets[f]) % 1.0, 6) for f, m in enumerate(foot_perm)}
    if shifts == {0.0}:
        return 1.0
    if shifts == {0.5}:
        return -1.0
    raise ValueError(f"gait offsets {tuple(offsets)} are not left-right symmetric up to half a period")
