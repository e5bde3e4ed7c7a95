"""G1 PPO runners: the Go2 main job's helpers (mirror augmentation, a velocity-estimating actor) on the locomotion
base, with Isaac Lab's G1 iteration counts."""

from isaaclab.utils import configclass

from sim2real.agents.rsl_rl_ppo import ROUGH_CRITIC, LocomotionPPORunnerCfg


@configclass
class G1FlatPPORunnerCfg(LocomotionPPORunnerCfg):
    experiment_name = "g1_flat"
    max_iterations = 1500  # a biped needs longer than the Go2 to find a stable gait (Isaac Lab's G1 flat: 1500)
    symmetry = True
    velocity_estimator = True

    def __post_init__(self):
        super().__post_init__()
        self.algorithm.entropy_coef = 0.005
        self.actor.distribution_cfg.init_std = 0.8  # std 1 on 12 leg joints topples a biped before it learns


@configclass
class G1RoughPPORunnerCfg(G1FlatPPORunnerCfg):
    experiment_name = "g1_rough"
    max_iterations = 3000  # Isaac Lab's G1 rough
    critic = ROUGH_CRITIC
