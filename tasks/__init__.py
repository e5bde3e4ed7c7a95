"""Task registry: every robot folder's tasks (``sim2real.robots``), registered with gym.

Ids follow ``Sim2Real-<Task>-<Terrain>-<Robot>-v<N>``; each names its env and agent config.
"""

from __future__ import annotations

import gymnasium as gym

from sim2real.robots import TASKS

for task_id, entry_points in TASKS.items():
    if task_id not in gym.registry:
        gym.register(
            id=task_id, entry_point="isaaclab.envs:ManagerBasedRLEnv", disable_env_checker=True, kwargs=entry_points
        )
