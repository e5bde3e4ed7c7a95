"""G1 PPO runners: the Go2 main job's helpers (mirror augmentation, a velocity-estimating actor) on the locomotion
base, with Isaac Lab's G1 iteration counts."""

from isaaclab.utils import configclass

from sim2real.agents.rsl_rl_ppo import ROUGH_CRITIC, LocomotionPPORunnerCfg
from sim2real.robots.g1.env_cfg import LATE_STAGE_ITERATION


@configclass
class G1FlatPPORunnerCfg(LocomotionPPORunnerCfg):
    experiment_name = "g1_flat"
    max_iterations = 1800  # Isaac Lab's G1 flat trains 1500; then 300 with the action noise taken away
    symmetry = True
    velocity_estimator = True

    def __post_init__(self):
        super().__post_init__()
        self.algorithm.entropy_coef = 0.005
        self.actor.distribution_cfg.init_std = 0.8  # std 1 on 12 leg joints topples a biped before it learns
        # the exported (deterministic) actor walked slower than the sampled one; taken away before every axis
        # moved, the noise froze backward walking and turning (docs/tasks.md)
        self.take_noise_away_from(LATE_STAGE_ITERATION)


@configclass
class G1RoughPPORunnerCfg(G1FlatPPORunnerCfg):
    experiment_name = "g1_rough"
    max_iterations = 3000  # Isaac Lab's G1 rough
    critic = ROUGH_CRITIC
