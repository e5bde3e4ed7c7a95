"""Franka Panda reach: the shared reach task with the Panda spec, nothing else."""

from isaaclab.utils import configclass

from sim2real.tasks.manipulation.reach_env_cfg import ReachEnvCfg


@configclass
class PandaReachEnvCfg(ReachEnvCfg):
    robot = "panda"
