"""Go1 PPO runner: the Go2 flat recipe unchanged (same nets, iterations and PPO settings)."""

from isaaclab.utils import configclass

from sim2real.robots.go2.agents import Go2FlatPPORunnerCfg


@configclass
class Go1FlatPPORunnerCfg(Go2FlatPPORunnerCfg):
    experiment_name = "go1_flat"
