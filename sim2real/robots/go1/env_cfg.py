"""Go1 velocity tracking on flat ground: the shared locomotion task with the Go1 spec, nothing else."""

from isaaclab.utils import configclass

from sim2real.tasks.locomotion.velocity_env_cfg import TROT, VelocityEnvCfg


@configclass
class Go1FlatEnvCfg(VelocityEnvCfg):
    robot = "go1"
    gait_offsets = TROT  # the gait clock (env.gait_period), feet FL, FR, RL, RR
