"""The G1 rough velocity task on real Isaac Lab: it builds, steps on the terrain, has the documented sizes, trains."""

from __future__ import annotations

from pathlib import Path

import torch
from conftest import run_cli, task_env
from test_g1 import CRITIC_SIZE, NUM_JOINTS, POLICY_SIZE

G1_ROUGH = "Sim2Real-Velocity-Rough-G1-v0"
SCAN_RAYS = 17 * 11


def test_builds_steps_and_has_documented_sizes():
    with task_env(G1_ROUGH, num_envs=2) as env:
        obs = env.get_observations()
        assert obs["policy"].shape == (2, POLICY_SIZE) and obs["critic"].shape == (2, CRITIC_SIZE + SCAN_RAYS)
        for _ in range(10):
            obs, rewards, _, _ = env.step(torch.zeros(env.num_envs, NUM_JOINTS))
        assert torch.isfinite(obs["critic"]).all() and torch.isfinite(rewards).all()
        assert env.unwrapped.observation_manager.active_terms["critic"][-1] == "height_scan"


def test_cli_trains_two_iterations(tmp_path: Path):
    args = ["train", "--task", G1_ROUGH, "env.scene.num_envs=4", "agent.num_steps_per_env=8"]
    args += ["agent.max_iterations=2", "--log-root", str(tmp_path)]
    result = run_cli(*args, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (run_dir,) = (tmp_path / "g1_rough").iterdir()
    assert list(run_dir.glob("model_*.pt"))
