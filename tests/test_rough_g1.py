"""The G1 rough velocity task on real Isaac Lab: it builds, steps on the terrain, has the documented sizes, trains."""

from __future__ import annotations

import torch
from conftest import task_env
from test_g1 import CRITIC_SIZE, NUM_ACTIONS, POLICY_SIZE

G1_ROUGH = "Sim2Real-Velocity-Rough-G1-v0"
SCAN_RAYS = 17 * 11


def test_builds_steps_and_has_documented_sizes():
    with task_env(G1_ROUGH, num_envs=2) as env:
        obs = env.get_observations()
        assert obs["policy"].shape == (2, POLICY_SIZE) and obs["critic"].shape == (2, CRITIC_SIZE + SCAN_RAYS)
        for _ in range(10):
            obs, rewards, _, _ = env.step(torch.zeros(env.num_envs, NUM_ACTIONS))
        assert torch.isfinite(obs["critic"]).all() and torch.isfinite(rewards).all()
        assert env.unwrapped.observation_manager.active_terms["critic"][-1] == "height_scan"
        # the flat recipe's height terms, measured above the terrain (tests/test_terrain.py), stay on
        terms = env.unwrapped.reward_manager.active_terms
        assert {"feet_phase", "base_height"} <= set(terms)
        assert env.unwrapped.cfg.rewards.feet_phase.weight == env.unwrapped.cfg.gait_phase_weight > 0
