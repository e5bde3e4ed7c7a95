"""rsl-rl PPO runner configs shared by every robot: asymmetric actor-critic with empirical normalisation, field-standard
PPO settings. Each robot folder's ``agents.py`` subclasses them (``sim2real/robots/<robot>/agents.py``)."""

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlMLPModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg

# rollout length per env and iteration; robot env configs convert iterations into policy steps with it
LOCOMOTION_STEPS_PER_ENV = 24


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
class PpoAlgorithmCfg(RslRlPpoAlgorithmCfg):
    """rsl-rl's PPO settings plus entropy and action-std schedules (:class:`sim2real.ppo.PPO`)."""

    class_name: str = "sim2real.ppo:PPO"  # rsl-rl PPO + schedules + data-to-divergence logging
    entropy_coef_final: float | None = None
    """Entropy coefficient from iteration ``entropy_anneal[1]`` on, reached linearly from ``entropy_coef`` at
    ``entropy_anneal[0]``; None keeps ``entropy_coef`` throughout."""
    entropy_anneal: tuple[int, int] = (0, 0)
    action_std_max_final: float | None = None
    """Cap on the action std from iteration ``action_std_anneal[1]`` on, lowered linearly from the initial std at
    ``action_std_anneal[0]``; None: no cap."""
    action_std_anneal: tuple[int, int] = (0, 0)
    smoothness_coef: float = 0.0
    """Weight of the Lipschitz (gradient) penalty on the actor in PPO's loss (``sim2real.smoothness``); 0: none."""


@configclass
class LocomotionPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    num_steps_per_env = LOCOMOTION_STEPS_PER_ENV
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
    symmetry: bool = False
    """Left-right symmetric data augmentation (``sim2real.tasks.mdp.symmetry``): every minibatch is followed by its
    mirror image. Needs a robot spec with a ``mirror``."""
    velocity_estimator: bool = False
    """The actor estimates its base velocity from its observations, regressed on the true one in every update
    (``sim2real.estimator``); exported inside the ONNX graph. Needs a floating-base (locomotion) task."""
    actor = actor_mlp([128, 128, 128])
    critic = critic_mlp([128, 128, 128])
    algorithm = PpoAlgorithmCfg(
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

    def take_noise_away_from(self, iteration: int) -> None:
        """From ``iteration`` on, the entropy bonus falls to 0 over 100 iterations and the action std is capped down
        to 0.2 over 150: the deterministic actor a robot runs walks differently from the noisy one PPO samples, so
        once a gait is set the rollouts should be close to it (``sim2real.ppo.PPO``)."""
        self.algorithm.entropy_coef_final = 0.0
        self.algorithm.entropy_anneal = (iteration, iteration + 100)
        self.algorithm.action_std_max_final = 0.2
        self.algorithm.action_std_anneal = (iteration, iteration + 150)


# rough terrain: the critic reads the 187-ray height scan, so it gets Isaac Lab's rough-terrain width; the blind
# actor sees what it sees on flat ground and keeps the flat size
ROUGH_CRITIC = critic_mlp([512, 256, 128])
