"""Task registry. Ids follow ``Sim2Real-<Task>-<Terrain>-<Robot>-v<N>``; each names its env and agent config."""

from __future__ import annotations

import gymnasium as gym

TASKS: dict[str, dict[str, str]] = {
    "Sim2Real-Velocity-Flat-Go2-v0": {
        "env_cfg_entry_point": "sim2real.tasks.locomotion.go2:Go2FlatEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:Go2FlatPPORunnerCfg",
    },
    "Sim2Real-Velocity-Flat-G1-v0": {
        "env_cfg_entry_point": "sim2real.tasks.locomotion.g1:G1FlatEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:G1FlatPPORunnerCfg",
    },
    "Sim2Real-Velocity-Rough-Go2-v0": {
        "env_cfg_entry_point": "sim2real.tasks.locomotion.go2:Go2RoughEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:Go2RoughPPORunnerCfg",
    },
    "Sim2Real-Velocity-Rough-G1-v0": {
        "env_cfg_entry_point": "sim2real.tasks.locomotion.g1:G1RoughEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:G1RoughPPORunnerCfg",
    },
    "Sim2Real-Reach-Panda-v0": {
        "env_cfg_entry_point": "sim2real.tasks.manipulation.panda:PandaReachEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:PandaReachPPORunnerCfg",
    },
    "Sim2Real-Lift-Panda-v0": {
        "env_cfg_entry_point": "sim2real.tasks.manipulation.panda:PandaLiftEnvCfg",
        "rsl_rl_cfg_entry_point": "sim2real.agents.rsl_rl_ppo:PandaLiftPPORunnerCfg",
    },
}

for task_id, entry_points in TASKS.items():
    if task_id not in gym.registry:
        gym.register(
            id=task_id, entry_point="isaaclab.envs:ManagerBasedRLEnv", disable_env_checker=True, kwargs=entry_points
        )
