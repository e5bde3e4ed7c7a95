"""Franka Panda reach and lift: the shared manipulation tasks with the Panda spec, nothing else."""

from isaaclab.utils import configclass

from sim2real.tasks.manipulation.lift_env_cfg import LiftEnvCfg
from sim2real.tasks.manipulation.reach_env_cfg import ReachEnvCfg


@configclass
class PandaReachEnvCfg(ReachEnvCfg):
    robot = "panda"


@configclass
class PandaLiftEnvCfg(LiftEnvCfg):
    robot = "panda"
