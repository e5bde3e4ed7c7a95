"""rsl-rl PPO plus entropy and action-std schedules, the data-to-divergence ratio of every update, the regression
of a velocity-estimating actor (``sim2real.estimator``) on each rollout, a no-grad sample of the logged-only mirror
loss, and an optional smoothness (Lipschitz) penalty on the actor (``sim2real.smoothness``).

Schedules over iterations (start, end), linear in between: the entropy bonus from ``entropy_coef`` to
``entropy_coef_final`` over ``entropy_anneal``, and a cap on the action std from its initial value to
``action_std_max_final`` over ``action_std_anneal``. Exploration noise first lets the policy find a gait; but a policy
tuned under that noise overshoots when run deterministically, as the robot runs it (``benchmarks/tracking_gap.py``),
and PPO shrinks a state-independent std only slowly, so the noise is taken away once walking has started.

Data-to-divergence (D2D) = transitions collected per iteration / mean KL(behaviour policy || updated policy) over
those transitions. When reward plateaus while D2D falls, each update moves the policy a lot per sample: more
environments (more data per step) or a smaller step (lower learning rate / desired KL) is the remedy
(arXiv 2603.06009 uses the same diagnostic to motivate scaling to many parallel environments).
"""

from __future__ import annotations

import contextlib
import math

import torch
from rsl_rl.algorithms import PPO as RslRlPPO
from rsl_rl.modules.distribution import GaussianDistribution
from rsl_rl.utils.utils import reduce_gradients_in_buckets

from sim2real.estimator import TARGET_GROUP
from sim2real.smoothness import SmoothnessPenalty

ESTIMATOR_LR = 1.0e-3
ESTIMATOR_OPTIMIZER_KEY = "estimator_optimizer_state_dict"
MIRROR_LOG_SAMPLES = 256
"""Transitions per minibatch on which the logged-only mirror loss is measured (``Loss/symmetry``)."""
KL_SAMPLES = 4096
"""Transitions (evenly strided over the batch) on which the post-update KL is measured: plenty for a diagnostic,
and an extra forward pass over every transition would cost ~1 % of a CPU iteration."""


def linear_schedule(iteration: int, span: tuple[int, int], start_value: float, end_value: float) -> float:
    """``start_value`` up to iteration ``span[0]``, then linearly to ``end_value`` at ``span[1]`` and after."""
    start, end = span
    if iteration >= end:
        return end_value
    if iteration <= start:
        return start_value
    return start_value + (iteration - start) / (end - start) * (end_value - start_value)


class PPO(RslRlPPO):
    def __init__(
        self,
        *args,
        entropy_coef_final: float | None = None,
        entropy_anneal: tuple[int, int] = (0, 0),
        action_std_max_final: float | None = None,
        action_std_anneal: tuple[int, int] = (0, 0),
        smoothness_coef: float = 0.0,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.smoothness_coef = smoothness_coef
        self.entropy_schedule = (tuple(entropy_anneal), self.entropy_coef, entropy_coef_final)
        initial_std = self._max_action_std() if action_std_max_final is not None else None
        self.std_cap_schedule = (tuple(action_std_anneal), initial_std, action_std_max_final)
        self.iteration = 0  # of the next update; restored from a checkpoint's "iter" by load()
        estimator = getattr(self.actor, "estimator", None)  # a velocity-estimating actor (sim2real.estimator)
        self.estimator_optimizer = None if estimator is None else torch.optim.Adam(estimator.parameters(), ESTIMATOR_LR)
        symmetry = self.symmetry
        if symmetry is not None and symmetry.use_data_augmentation and not symmetry.use_mirror_loss:
            # rsl-rl evaluates this logged-only loss with a full actor pass, autograd graph included, on every
            # minibatch: ~20 % of a CPU update (cProfile, session 16). Learning does not read it.
            symmetry.compute_loss = self._logged_mirror_loss
        self._apply_std_cap(self.iteration)

    def save(self) -> dict:
        saved = super().save()
        if self.estimator_optimizer is not None:
            saved[ESTIMATOR_OPTIMIZER_KEY] = self.estimator_optimizer.state_dict()
        return saved

    def load(self, loaded_dict: dict, load_cfg: dict | None, strict: bool) -> bool:
        self.iteration = int(loaded_dict["iter"]) + 1  # a resumed run continues the schedules where they stopped
        loaded = super().load(loaded_dict, load_cfg, strict)
        resume_optimizers = load_cfg is None or load_cfg.get("optimizer")
        if self.estimator_optimizer is not None and resume_optimizers and ESTIMATOR_OPTIMIZER_KEY in loaded_dict:
            self.estimator_optimizer.load_state_dict(loaded_dict[ESTIMATOR_OPTIMIZER_KEY])
        self._apply_std_cap(self.iteration)  # a resume may add or tighten the cap
        return loaded

    def update(self) -> dict[str, float]:
        span, start, final = self.entropy_schedule
        if final is not None:
            self.entropy_coef = linear_schedule(self.iteration, span, start, final)
        losses = {}
        if self.estimator_optimizer is not None:  # before PPO's update: the rollout's observations as collected
            losses["velocity_estimation"] = self._update_estimator()
        losses |= self._update_with_divergence()
        losses["entropy_coef"] = self.entropy_coef
        cap = self._std_cap(self.iteration)
        if cap is not None:  # the cap this iteration's rollouts ran under
            losses["action_std_max"] = cap
        self.iteration += 1
        self._apply_std_cap(self.iteration)  # for the next rollouts
        return losses

    def _update_estimator(self) -> float:
        """Regress the actor's velocity estimator on the rollout (``sim2real.estimator``): PPO's epochs and
        minibatches, its own Adam, gradients averaged over torchrun's ranks as PPO's are; returns the mean loss.

        The rows are rsl-rl's ``mini_batch_generator``'s (one permutation, reused every epoch), but the inputs are
        normalised once for the whole rollout (the normaliser is fixed during an update) and only the two tensors
        the regression reads are indexed: the same updates as a pass over PPO's minibatches, without indexing every
        observation group per minibatch (tests/test_estimator.py compares the two bit for bit).
        """
        observations = self.storage.observations.flatten(0, 1)
        inputs = self.actor.estimator_inputs(observations)
        targets = observations[TARGET_GROUP]
        mini_batch_size = inputs.shape[0] // self.num_mini_batches
        indices = torch.randperm(self.num_mini_batches * mini_batch_size, device=self.device)
        total, estimator = 0.0, self.actor.estimator
        for _ in range(self.num_learning_epochs):
            for rows in indices.split(mini_batch_size):
                loss = self.actor.regression_loss(inputs[rows], targets[rows])
                self.estimator_optimizer.zero_grad()
                loss.backward()
                if self.is_multi_gpu:
                    reduce_gradients_in_buckets(estimator.parameters(), self.gpu_world_size, self.grad_reduce_bucket_mb)
                self.estimator_optimizer.step()
                total += float(loss)
        estimator.zero_grad(set_to_none=True)  # PPO's optimizer holds these parameters too
        return total / (self.num_learning_epochs * self.num_mini_batches)

    def _logged_mirror_loss(self, actor, batch, original_batch_size: int) -> torch.Tensor:
        """rsl-rl's mirror loss (the actor on mirrored observations vs its mirrored actions on the originals) on the
        first ``MIRROR_LOG_SAMPLES`` transitions of an augmented minibatch, without gradients."""
        n = min(original_batch_size, MIRROR_LOG_SAMPLES)
        rows = torch.cat([torch.arange(n), original_batch_size + torch.arange(n)]).to(self.device)
        mirror = self.symmetry.data_augmentation_func
        with torch.no_grad():
            means = actor(batch.observations.select(*actor.obs_groups)[rows])  # index only what the actor reads
            _, mirrored = mirror(env=self.symmetry.env, obs=None, actions=means[:n])
            return torch.nn.functional.mse_loss(means[n:], mirrored[n:])

    def _std_cap(self, iteration: int) -> float | None:
        span, start, final = self.std_cap_schedule
        return None if final is None else linear_schedule(iteration, span, start, final)

    def _gaussian(self) -> GaussianDistribution:
        distribution = self.actor.distribution
        if type(distribution) is not GaussianDistribution:  # a state-dependent std has no parameter to clamp
            raise ValueError(f"action_std_max_final needs rsl-rl's GaussianDistribution, not {type(distribution)}")
        return distribution

    def _max_action_std(self) -> float:
        distribution = self._gaussian()
        if distribution.std_type == "scalar":
            return float(distribution.std_param.max())
        return math.exp(float(distribution.log_std_param.max()))

    def _apply_std_cap(self, iteration: int) -> None:
        """Clamp the learned (state-independent) action std to at most the cap at ``iteration``, if one is set."""
        cap = self._std_cap(iteration)
        if cap is None:
            return
        distribution = self._gaussian()
        with torch.no_grad():
            if distribution.std_type == "scalar":
                distribution.std_param.clamp_(max=cap)
            else:
                distribution.log_std_param.clamp_(max=math.log(cap))

    def _update_with_divergence(self) -> dict[str, float]:
        storage = self.storage
        # the rollout buffers stay valid through update(); clear() only rewinds the write cursor
        samples = storage.observations.batch_size[0] * storage.observations.batch_size[1]
        stride = max(1, samples // KL_SAMPLES)
        observations = storage.observations.flatten(0, 1)[::stride]
        behaviour = tuple(p.flatten(0, 1)[::stride] for p in storage.distribution_params)
        smoothness = SmoothnessPenalty(self.actor, self.smoothness_coef) if self.smoothness_coef > 0 else None
        with smoothness or contextlib.nullcontext():
            losses = super().update()
        if smoothness is not None:
            losses["smoothness"] = smoothness.mean()
        if self.actor.is_recurrent:
            return losses
        with torch.no_grad():
            self.actor(observations, stochastic_output=True)
            kl = self.actor.get_kl_divergence(behaviour, self.actor.output_distribution_params).mean()
        samples *= getattr(self, "gpu_world_size", 1)
        losses["kl_behaviour_updated"] = float(kl)
        losses["data_to_divergence"] = samples / max(float(kl), 1e-12)
        return losses
