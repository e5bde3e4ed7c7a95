"""Learner configs (rsl-rl PPO runners), one per task, as plain config classes."""
