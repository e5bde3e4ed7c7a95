"""Joint position actions with a per-env latency, the most common sim-to-real gap on legged robots, and optionally the
ROS node's target slew limit, so that a policy learns under the clamp it is deployed behind."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import isaaclab.utils.string as string_utils
import torch
from isaaclab.envs.mdp.actions import JointPositionAction, JointPositionActionCfg
from isaaclab.utils import configclass

from .gait import clock_phase

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
    policy); takes no action inputs. Without it their targets would stay at zero, not the default pose.

    With ``swing_amplitude``, named held joints swing on the gait clock (a walker's arm swing, each arm forward with
    the other leg; on the G1 it did not steady the pelvis, docs/tasks.md): each target is the default plus its
    amplitude x the commanded forward speed over ``swing_speed`` (clipped to +-1) x sin(2 pi phase), the phase being
    the gait clock's at the step the action was computed for. The robot side computes the same
    (``action.held_swing``)."""

    cfg: HeldJointPositionActionCfg

    def __init__(self, cfg: HeldJointPositionActionCfg, env: ManagerBasedEnv):
        super().__init__(cfg, env)
        self._targets = self._offset  # the default pose, until a swing moves it
        amplitude = dict(cfg.swing_amplitude)
        if unknown := sorted(set(amplitude) - set(self._joint_names)):
            raise ValueError(f"swing_amplitude names {unknown}, not held joints {self._joint_names}")
        if amplitude and not (cfg.swing_period > 0 and cfg.swing_speed > 0):
            raise ValueError("swing_amplitude needs swing_period > 0 (the gait clock's) and swing_speed > 0")
        self._amplitude = torch.tensor([amplitude.get(j, 0.0) for j in self._joint_names], device=self.device)

    @property
    def action_dim(self) -> int:
        return 0

    def process_actions(self, actions: torch.Tensor) -> None:
        if self.cfg.swing_amplitude:
            self._targets = self._offset + self._amplitude * self.swing()[:, None]

    def swing(self) -> torch.Tensor:
        """Per env, clip(vx command / ``swing_speed``, -1, 1) x sin(2 pi phase) on the gait clock."""
        vx = self._env.command_manager.get_command(self.cfg.command_name)[:, 0]
        phase = clock_phase(self._env, self.cfg.swing_period)
        return torch.clamp(vx / self.cfg.swing_speed, -1.0, 1.0) * torch.sin(2.0 * math.pi * phase)

    def apply_actions(self) -> None:
        self._asset.actuators.target_command.set_position_index(value=self._targets, joint_ids=self._joint_ids)


@configclass
class HeldJointPositionActionCfg(JointPositionActionCfg):
    class_type: type = HeldJointPositionAction
    use_default_offset: bool = True  # the held position
    preserve_order: bool = True
    swing_amplitude: dict[str, float] = {}
    """Held joint name -> swing amplitude [rad] at ``swing_speed`` of commanded forward speed; empty: no swing."""
    swing_period: float = 0.0  # the gait clock's period [s]
    swing_speed: float = 1.0  # [m/s] the forward command at which the swing reaches its amplitude
    command_name: str = "base_velocity"
