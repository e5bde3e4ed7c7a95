"""Unitree Go2 velocity tracking: the shared locomotion task with the Go2 spec; on rough terrain, smaller obstacles."""

from isaaclab.utils import configclass

from sim2real.tasks.locomotion.rough_env_cfg import RoughTerrainCfg
from sim2real.tasks.locomotion.velocity_env_cfg import TROT, VelocityEnvCfg


@configclass
class Go2FlatEnvCfg(VelocityEnvCfg):
    robot = "go2"
    gait_offsets = TROT  # the gait clock (env.gait_period), feet FL, FR, RL, RR


@configclass
class Go2RoughEnvCfg(RoughTerrainCfg, Go2FlatEnvCfg):
    def __post_init__(self):
        super().__post_init__()
        # a small robot (0.3 m base height): Isaac Lab's Go2 rough scaling, about half the full-size obstacles
        terrains = self.scene.terrain.terrain_generator.sub_terrains
        for name in ("stairs", "stairs_inv"):
            terrains[name].step_height_range = (0.025, 0.12)
        terrains["boxes"].obstacle_height_range = (0.025, 0.1)
        terrains["random_rough"].noise_range = (0.01, 0.06)
        terrains["random_rough"].noise_step = 0.01
