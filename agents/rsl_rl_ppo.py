"""rsl-rl PPO runner configs: asymmetric actor-critic with empirical normalisation, field-standard PPO settings."""

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg


def actor_mlp(hidden_dims: list[int]) -> RslRlMLPModelCfg:
    """A Gaussian-policy MLP (ELU, empirical observation normalisation, initial action std 1)."""
    return RslRlMLPModelCfg(
        hidden_dims=hidden_dims,
        activation="elu",
        obs_normalization=True,
        distribution_cfg=RslRlMLPModelCfg.GaussianDistributionCfg(init_std=1.0),
    )


def critic_mlp(hidden_dims: list[int]) -> RslRlMLPModelCfg:
    """A value MLP (ELU, empirical observation normalisation)."""
    return RslRlMLPModelCfg(hidden_dims=hidden_dims, activation="elu", obs_normalization=True)


@configclass
class LocomotionPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    num_steps_per_env = 24
    max_iterations = 300
    save_interval = 50
    experiment_name = "locomotion"
    # the critic sees the policy's observations plus the privileged group
    obs_groups = {"actor": ["policy"], "critic": ["policy", "critic"]}
    clip_actions = 10.0  # raw-action clip, written into exported policies as action.clip
    minibatch_size: int | None = None
    """Transitions per minibatch. When set, ``algorithm.num_mini_batches`` follows ``num_envs`` (more envs ->
    more minibatches of the same size, same learning rate: the 1M-env PPO recipe, arXiv 2603.06009).
    None keeps the fixed minibatch count of ``algorithm.num_mini_batches``."""
    actor = actor_mlp([128, 128, 128])
    critic = critic_mlp([128, 128, 128])
    algorithm = RslRlPpoAlgorithmCfg(
        class_name="sim2real.ppo:PPO",  # rsl-rl PPO + data-to-divergence logging
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.01,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1.0e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )


@configclass
class Go2FlatPPORunnerCfg(LocomotionPPORunnerCfg):
    experiment_name = "go2_flat"
    # with the default 256 envs: ~17 min on 2 CPU cores; the first checkpoint passing the sim-to-sim walking check
    # came at 1200 (benchmarks/time_to_walk.py, README)
    max_iterations = 1500


@configclass
class G1FlatPPORunnerCfg(LocomotionPPORunnerCfg):
    experiment_name = "g1_flat"
    max_iterations = 1500  # a biped needs longer than the Go2 to find a stable gait (Isaac Lab's G1 flat: 1500)


# rough terrain: the critic reads the 187-ray height scan, so it gets Isaac Lab's rough-terrain width; the blind
# actor sees what it sees on flat ground and keeps the flat size
_ROUGH_CRITIC = critic_mlp([512, 256, 128])


@configclass
class Go2RoughPPORunnerCfg(Go2FlatPPORunnerCfg):
    experiment_name = "go2_rough"
    max_iterations = 1500  # Isaac Lab's Go2 rough
    critic = _ROUGH_CRITIC


@configclass
class G1RoughPPORunnerCfg(G1FlatPPORunnerCfg):
    experiment_name = "g1_rough"
    max_iterations = 3000  # Isaac Lab's G1 rough
    critic = _ROUGH_CRITIC


@configclass
class PandaReachPPORunnerCfg(LocomotionPPORunnerCfg):
    """Isaac Lab's Franka reach settings: small [64, 64] nets (a 28-input smooth task) and 8 epochs per batch."""

    experiment_name = "panda_reach"
    max_iterations = 1000
    actor = actor_mlp([64, 64])
    critic = critic_mlp([64, 64])

    def __post_init__(self):
        super().__post_init__()
        self.algorithm.num_learning_epochs = 8


@configclass
class PandaLiftPPORunnerCfg(LocomotionPPORunnerCfg):
    """Isaac Lab's Franka lift settings: [256, 128, 64] nets, 1500 iterations, gamma 0.98, entropy 0.006,
    learning rate 1e-4 (adaptive)."""

    experiment_name = "panda_lift"
    max_iterations = 1500
    actor = actor_mlp([256, 128, 64])
    critic = critic_mlp([256, 128, 64])

    def __post_init__(self):
        super().__post_init__()
        self.algorithm.learning_rate = 1.0e-4
        self.algorithm.entropy_coef = 0.006
        self.algorithm.gamma = 0.98
