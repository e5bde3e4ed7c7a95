"""Curriculum terms: command ranges that widen as tracking improves, reward weights switched at a step or ramped over
a span of steps, terrain rows earned by distance (Isaac Lab's rule) and optionally by speed, and the share of envs on
the hardest terrain rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch
from isaaclab.managers import CurriculumTermCfg, ManagerTermBase, SceneEntityCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv

_AXES = ("lin_vel_x", "lin_vel_y", "ang_vel_z")


class command_ranges_vel(ManagerTermBase):
    """Velocity commands start at ``start`` times the configured ranges, which become the limits. Once per episode
    length the term judges every episode that ended in that window: if their mean episode sum of ``reward_term``
    per second of a full episode (falls count as short, poor episodes) is above ``threshold`` times the term's
    weight, the ranges widen by ``step`` of the limits (legged_gym's command curriculum, judged over a window so
    that a few lucky resets cannot widen it). Returns the current fraction of the limits."""

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        command_name = cfg.params.get("command_name", "base_velocity")
        self._ranges = env.command_manager.get_term(command_name).cfg.ranges
        self._limits = {axis: tuple(getattr(self._ranges, axis)) for axis in _AXES}
        self.fraction = 0.0
        self._window_start, self._window_sum, self._window_count = 0, 0.0, 0
        self.set_fraction(cfg.params.get("start", 0.5))

    def set_fraction(self, fraction: float) -> None:
        """Command ranges = ``fraction`` (clipped to [0, 1]) times the limits."""
        self.fraction = min(max(fraction, 0.0), 1.0)
        for axis, (low, high) in self._limits.items():
            setattr(self._ranges, axis, (low * self.fraction, high * self.fraction))

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: Sequence[int] | slice,
        command_name: str = "base_velocity",
        reward_term: str = "track_lin_vel_xy_exp",
        start: float = 0.5,
        step: float = 0.1,
        threshold: float = 0.8,
    ) -> torch.Tensor:
        # runs before the reward manager resets these envs, so the sums cover the episodes just ended
        episode_sum = env.reward_manager._episode_sums[reward_term][env_ids]
        self._window_sum += episode_sum.sum().item()
        self._window_count += episode_sum.numel()
        if env.common_step_counter - self._window_start >= env.max_episode_length:
            if self._window_count:
                weight = env.reward_manager.get_term_cfg(reward_term).weight
                tracking = self._window_sum / self._window_count / env.max_episode_length_s
                if tracking > threshold * weight:
                    self.set_fraction(self.fraction + step)
            self._window_start, self._window_sum, self._window_count = env.common_step_counter, 0.0, 0
        return torch.tensor(self.fraction)


class modify_reward_weights(ManagerTermBase):
    """Isaac Lab's ``modify_reward_weight`` for several terms at once: each named reward term gets its weight once
    more than ``num_steps`` policy steps per env have passed (a resume continues the count). Returns the sum of the
    terms' current weights."""

    def __call__(
        self, env: ManagerBasedRLEnv, env_ids: Sequence[int] | slice, weights: dict[str, float], num_steps: int
    ) -> float:
        manager = env.reward_manager
        for name, weight in weights.items():
            cfg = manager.get_term_cfg(name)
            if env.common_step_counter > num_steps and cfg.weight != weight:
                cfg.weight = weight
                manager.set_term_cfg(name, cfg)
        return float(sum(manager.get_term_cfg(name).weight for name in weights))


class ramp_reward_weights(ManagerTermBase):
    """Each named reward term's weight moves linearly from its configured weight, held up to ``start_step`` policy
    steps per env, to the given weight at ``end_step`` (a resume continues the count): a penalty that would stop a
    policy learning to walk, brought in while it learns (holosoma's and humanoidverse's penalty curriculum). Returns
    the fraction of the ramp done."""

    def __init__(self, cfg: CurriculumTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self._initial = {name: env.reward_manager.get_term_cfg(name).weight for name in cfg.params["weights"]}

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        env_ids: Sequence[int] | slice,
        weights: dict[str, float],
        start_step: int,
        end_step: int,
    ) -> torch.Tensor:
        done = (env.common_step_counter - start_step) / max(end_step - start_step, 1)
        done = min(max(done, 0.0), 1.0)
        manager = env.reward_manager
        for name, final in weights.items():
            cfg = manager.get_term_cfg(name)
            cfg.weight = self._initial[name] + done * (final - self._initial[name])
            manager.set_term_cfg(name, cfg)
        return torch.tensor(done)


def terrain_levels_tracked(
    env: ManagerBasedRLEnv,
    env_ids: Sequence[int] | slice,
    reward_term: str = "track_lin_vel_xy_exp",
    threshold: float = 0.0,
    asset_cfg: SceneEntityCfg = SceneEntityCfg("robot"),
) -> torch.Tensor:
    """Isaac Lab's ``terrain_levels_vel`` with a speed test. An env moves a row up if it walked more than half a
    sub-terrain from its origin and its episode's ``reward_term`` per second reached ``threshold`` times the term's
    weight; a row down if it covered neither half a sub-terrain nor half its commanded distance. One that walked far
    but slowly stays on its row: crawling 4 m up stairs in a 20 s episode earns a harder row under Isaac Lab's rule.
    ``threshold`` 0 is Isaac Lab's rule. Returns the mean row."""
    terrain = env.scene.terrain
    origin_to_base = env.scene[asset_cfg.name].data.root_pos_w.torch[env_ids, :2] - env.scene.env_origins[env_ids, :2]
    distance = torch.linalg.norm(origin_to_base, dim=1)
    far = distance > terrain.cfg.terrain_generator.size[0] / 2
    commanded = torch.linalg.norm(env.command_manager.get_command("base_velocity")[env_ids, :2], dim=1)
    move_down = ~far & (distance < commanded * env.max_episode_length_s * 0.5)
    move_up = far
    if threshold > 0.0:
        # runs before the reward manager resets these envs, so the sums and lengths are the episodes just ended
        seconds = (env.episode_length_buf[env_ids] * env.step_dt).clamp(min=env.step_dt)
        tracking = env.reward_manager._episode_sums[reward_term][env_ids] / seconds
        move_up = far & (tracking >= threshold * env.reward_manager.get_term_cfg(reward_term).weight)
    terrain.update_env_origins(env_ids, move_up, move_down)
    return terrain.terrain_levels.float().mean()


def terrain_top_rows(env: ManagerBasedRLEnv, env_ids: Sequence[int] | slice, rows: int = 2) -> torch.Tensor:
    """Changes nothing: the fraction of envs on the ``rows`` hardest terrain rows. Logged beside the mean row
    (``Curriculum/terrain_levels``), which cannot tell envs that climb from the random rows that Isaac Lab sends an
    env to once it passes the last one."""
    terrain = env.scene.terrain
    return (terrain.terrain_levels >= terrain.max_terrain_level - rows).float().mean()
