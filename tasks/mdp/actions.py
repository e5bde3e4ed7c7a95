"""Joint position actions with a per-env latency, the most common sim-to-real gap on legged robots, and optionally the
ROS node's target slew limit, so that a policy learns under the clamp it is deployed behind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import isaaclab.utils.string as string_utils
import torch
from isaaclab.envs.mdp.actions import JointPositionAction, JointPositionActionCfg
from isaaclab.utils import configclass

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedEnv


class DelayedJointPositionAction(JointPositionAction):
    """Applies the target computed ``delay`` policy steps ago; ``delay`` is drawn per env at each reset.

    A ring of the last ``max_delay + 1`` targets is kept per env; slot 0 is the newest. After a reset the ring is
    filled with the default pose, so a delayed env first holds its stance.

    With ``max_target_rate``, each new target moves at most ``rate x step_dt`` from the previous one before it enters
    the ring: policy_node's slew limit (``target_rate_fraction``), which clamps what it publishes and so comes before
    the latency. After a reset the previous target is the default pose, as it is after the node's soft start.
    """

    cfg: DelayedJointPositionActionCfg

    def __init__(self, cfg: DelayedJointPositionActionCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        lo, hi = cfg.delay_range
        if not 0 <= lo <= hi:
            raise ValueError(f"delay_range must satisfy 0 <= min <= max, got {cfg.delay_range}")
        self.delay = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)
        self._history = torch.zeros(self.num_envs, hi + 1, self.action_dim, device=self.device)
        self._history[:] = self._default_targets()[:, None]
        self._delayed_targets = self._history[:, 0].clone()
        self._env_index = torch.arange(self.num_envs, device=self.device)
        self._max_step = self._target_steps(cfg, env.step_dt)
        self._previous_target = self._default_targets().clone()

    def _target_steps(self, cfg: DelayedJointPositionActionCfg, step_dt: float) -> torch.Tensor | None:
        if not cfg.max_target_rate:
            return None
        _, names, rates = string_utils.resolve_matching_names_values(cfg.max_target_rate, self._joint_names)
        if names != list(self._joint_names):
            raise ValueError(f"max_target_rate names {names}, not every action joint {self._joint_names}")
        return torch.tensor(rates, device=self.device) * step_dt

    def _default_targets(self) -> torch.Tensor:
        offset = self._offset if isinstance(self._offset, torch.Tensor) else torch.zeros(1, self.action_dim)
        return offset.expand(self.num_envs, self.action_dim).to(self.device)

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        if self._max_step is not None:
            lo, hi = self._previous_target - self._max_step, self._previous_target + self._max_step
            self._processed_actions[:] = torch.clamp(self._processed_actions, lo, hi)
            self._previous_target = self._processed_actions.clone()
        self._history = torch.roll(self._history, shifts=1, dims=1)
        self._history[:, 0] = self._processed_actions
        self._delayed_targets = self._history[self._env_index, self.delay]

    def apply_actions(self) -> None:
        self._asset.actuators.target_command.set_position_index(value=self._delayed_targets, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        super().reset(env_ids)
        ids = self._env_index[env_ids if env_ids is not None else slice(None)]
        lo, hi = self.cfg.delay_range
        self.delay[ids] = torch.randint(lo, hi + 1, (len(ids),), device=self.device)
        self._history[ids] = self._default_targets()[ids][:, None].clone()
        self._delayed_targets[ids] = self._history[ids, 0]
        self._previous_target[ids] = self._default_targets()[ids]


@configclass
class DelayedJointPositionActionCfg(JointPositionActionCfg):
    class_type: type = DelayedJointPositionAction
    delay_range: tuple[int, int] = (0, 0)
    """Inclusive range of the per-env delay in policy steps (0 = apply this step's target)."""
    max_target_rate: dict[str, float] | None = None
    """Joint-name regex -> the fastest a target may move [rad/s] (policy_node's slew limit); None: unlimited."""


class HeldJointPositionAction(JointPositionAction):
    """Joints no policy output drives, held at their default position by their PD (a humanoid's arms under a legs-only
    policy); takes no action inputs. Without it their targets would stay at zero, not the default pose."""

    cfg: HeldJointPositionActionCfg

    @property
    def action_dim(self) -> int:
        return 0

    def process_actions(self, actions: torch.Tensor) -> None:
        pass

    def apply_actions(self) -> None:
        self._asset.actuators.target_command.set_position_index(value=self._offset, joint_ids=self._joint_ids)


@configclass
class HeldJointPositionActionCfg(JointPositionActionCfg):
    class_type: type = HeldJointPositionAction
    use_default_offset: bool = True  # the held position
    preserve_order: bool = True
