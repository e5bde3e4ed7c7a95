"""Go2 PPO runners: the locomotion base, longer for the flat task; the rough-terrain critic width on rough."""

from isaaclab.utils import configclass

from sim2real.agents.rsl_rl_ppo import ROUGH_CRITIC, LocomotionPPORunnerCfg


@configclass
class Go2FlatPPORunnerCfg(LocomotionPPORunnerCfg):
    experiment_name = "go2_flat"
    # with the default 256 envs: ~17 min on 2 CPU cores; the first checkpoint passing the sim-to-sim walking check
    # came at 1200 (benchmarks/time_to_walk.py, README)
    max_iterations = 1500


@configclass
class Go2RoughPPORunnerCfg(Go2FlatPPORunnerCfg):
    experiment_name = "go2_rough"
    max_iterations = 1500  # Isaac Lab's Go2 rough
    critic = ROUGH_CRITIC
