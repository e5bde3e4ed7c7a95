"""The velocity command's per-axis zeroing (``sim2real.tasks.mdp.AxisVelocityCommand``) on a real Go2 env."""

from __future__ import annotations

import torch
from isaaclab.envs.mdp import UniformVelocityCommand

ROUNDS = 400  # x 8 envs: 3200 commands, a share's standard error ~0.6 points


def _term(env):
    return env.unwrapped.command_manager.get_term("base_velocity")


def _sample(term, zero_prob: tuple[float, float, float]) -> torch.Tensor:
    term.cfg.zero_prob = zero_prob
    ids = torch.arange(term.num_envs)
    commands = []
    for _ in range(ROUNDS):
        term._resample_command(ids)
        commands.append(term.vel_command_b.clone())
    return torch.cat(commands)


def test_each_pure_axis_command_is_its_share_and_ranges_hold(env):
    term = _term(env)
    before = term.cfg.zero_prob
    try:
        commands = _sample(term, (0.25, 0.5, 0.75))
    finally:
        term.cfg.zero_prob = before
    moving = commands != 0.0
    # pure x: 0.75 * 0.5 * 0.75; pure y: 0.25 * 0.5 * 0.75; pure yaw: 0.25 * 0.5 * 0.25; zero: 0.25 * 0.5 * 0.75
    for axis, expected in enumerate((0.28125, 0.09375, 0.03125)):
        pure = (moving[:, axis] & (moving.sum(dim=1) == 1)).float().mean().item()
        assert abs(pure - expected) < 0.03, f"axis {axis}: pure share {pure:.3f}, expected {expected}"
    assert abs((~moving.any(dim=1)).float().mean().item() - 0.09375) < 0.03
    ranges = term.cfg.ranges
    for axis, (lo, hi) in enumerate((ranges.lin_vel_x, ranges.lin_vel_y, ranges.ang_vel_z)):
        assert lo <= commands[:, axis].min() and commands[:, axis].max() <= hi


def test_no_zeroing_draws_exactly_isaac_labs_commands(env):
    term = _term(env)
    assert term.cfg.zero_prob == (0.0, 0.0, 0.0)  # the default: every task but the G1 samples as Isaac Lab does
    ids = torch.arange(term.num_envs)
    torch.manual_seed(3)
    term._resample_command(ids)
    ours = term.vel_command_b.clone()
    torch.manual_seed(3)
    UniformVelocityCommand._resample_command(term, ids)
    assert torch.equal(ours, term.vel_command_b)
    assert ours.ne(0.0).all()  # uniform draws: no axis is zeroed
