"""Go1 velocity tracking on flat ground: the Go2's task and walking recipe with the Go1 spec, nothing else."""

from isaaclab.utils import configclass

from sim2real.robots.go2.env_cfg import Go2FlatEnvCfg


@configclass
class Go1FlatEnvCfg(Go2FlatEnvCfg):
    robot = "go1"
