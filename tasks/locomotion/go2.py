"""Unitree Go2 velocity tracking: the shared locomotion task with the Go2 spec, nothing else."""

from isaaclab.utils import configclass

from sim2real.tasks.locomotion.velocity_env_cfg import VelocityEnvCfg


@configclass
class Go2FlatEnvCfg(VelocityEnvCfg):
    robot = "go2"
