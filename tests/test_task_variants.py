"""Go2 task behaviours that need their own env configuration (each test builds and closes an env)."""

from __future__ import annotations

import pytest
import torch
from conftest import go2_env


def test_randomised_gains_reach_the_physics():
    """Kp scaled to 0.5 on every joint: the robot must sag lower than at nominal gains under the same load."""
    heights = {}
    for scale in (1.0, 0.5):
        with go2_env(
            f"env.events.motor_strength.params.stiffness_distribution_params=[{scale},{scale}]",
            "env.events.reset_joints.params.position_range=[1.0,1.0]",
            "env.events.reset_base.params.velocity_range={}",
            num_envs=2,
        ) as env:
            env.reset()
            for _ in range(50):
                env.step(torch.zeros(env.num_envs, 12))
            heights[scale] = env.unwrapped.scene["robot"].data.root_pos_w.torch[:, 2].mean().item()
    assert heights[0.5] < heights[1.0] - 0.01


@pytest.mark.parametrize("delay", [0, 2])
def test_action_delay_shifts_applied_target_by_k_steps(delay):
    with go2_env(f"env.actions.joint_pos.delay_range=[{delay},{delay}]", num_envs=2) as env:
        env.reset()
        robot = env.unwrapped.scene["robot"]
        default = robot.data.default_joint_pos.torch[:, env.unwrapped.action_manager.get_term("joint_pos")._joint_ids]
        action = torch.full((env.num_envs, 12), 0.4)
        applied = []
        for step in range(4):
            env.step(action if step == 0 else torch.zeros(env.num_envs, 12))
            term = env.unwrapped.action_manager.get_term("joint_pos")
            applied.append(term._delayed_targets.clone())
        expected_step = delay
        for step, target in enumerate(applied):
            if step == expected_step:
                assert torch.allclose(target, default + 0.4 * 0.25, atol=1e-5)
            else:
                assert torch.allclose(target, default, atol=1e-5)
        joint_ids = env.unwrapped.action_manager.get_term("joint_pos")._joint_ids
        assert torch.allclose(robot.actuators.target_command.position.torch[:, joint_ids], applied[-1], atol=1e-5)
