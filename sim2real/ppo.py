"""rsl-rl PPO plus an entropy schedule and the data-to-divergence ratio of every update.

Entropy schedule: the entropy bonus goes linearly from ``entropy_coef`` to ``entropy_coef_final`` over the iterations
``entropy_anneal`` = (start, end). Exploration noise first lets the policy find a gait; the bonus then keeps the
action std high, and a policy tuned under that noise overshoots when run deterministically
(``benchmarks/tracking_gap.py``), so it is taken away once walking has started.

Data-to-divergence (D2D) = transitions collected per iteration / mean KL(behaviour policy || updated policy) over
those transitions. When reward plateaus while D2D falls, each update moves the policy a lot per sample: more
environments (more data per step) or a smaller step (lower learning rate / desired KL) is the remedy
(arXiv 2603.06009 uses the same diagnostic to motivate scaling to many parallel environments).
"""

from __future__ import annotations

import torch
from rsl_rl.algorithms import PPO as RslRlPPO

KL_SAMPLES = 4096
"""Transitions (evenly strided over the batch) on which the post-update KL is measured: plenty for a diagnostic,
and an extra forward pass over every transition would cost ~1 % of a CPU iteration."""


class PPO(RslRlPPO):
    def __init__(
        self, *args, entropy_coef_final: float | None = None, entropy_anneal: tuple[int, int] = (0, 0), **kwargs
    ) -> None:
        super().__init__(*args, **kwargs)
        self.entropy_coef_start = self.entropy_coef
        self.entropy_coef_final = self.entropy_coef if entropy_coef_final is None else entropy_coef_final
        self.entropy_anneal = tuple(entropy_anneal)
        self.iteration = 0  # of the next update; restored from a checkpoint's "iter" by load()

    def entropy_coef_at(self, iteration: int) -> float:
        start, end = self.entropy_anneal
        if iteration >= end:
            return self.entropy_coef_final
        if iteration <= start:
            return self.entropy_coef_start
        fraction = (iteration - start) / (end - start)
        return self.entropy_coef_start + fraction * (self.entropy_coef_final - self.entropy_coef_start)

    def load(self, loaded_dict: dict, load_cfg: dict | None, strict: bool) -> bool:
        self.iteration = int(loaded_dict["iter"]) + 1  # a resumed run continues the schedule where it stopped
        return super().load(loaded_dict, load_cfg, strict)

    def update(self) -> dict[str, float]:
        self.entropy_coef = self.entropy_coef_at(self.iteration)
        self.iteration += 1
        losses = self._update_with_divergence()
        losses["entropy_coef"] = self.entropy_coef
        return losses

    def _update_with_divergence(self) -> dict[str, float]:
        storage = self.storage
        # the rollout buffers stay valid through update(); clear() only rewinds the write cursor
        samples = storage.observations.batch_size[0] * storage.observations.batch_size[1]
        stride = max(1, samples // KL_SAMPLES)
        observations = storage.observations.flatten(0, 1)[::stride]
        behaviour = tuple(p.flatten(0, 1)[::stride] for p in storage.distribution_params)
        losses = super().update()
        if self.actor.is_recurrent:
            return losses
        with torch.no_grad():
            self.actor(observations, stochastic_output=True)
            kl = self.actor.get_kl_divergence(behaviour, self.actor.output_distribution_params).mean()
        samples *= getattr(self, "gpu_world_size", 1)
        losses["kl_behaviour_updated"] = float(kl)
        losses["data_to_divergence"] = samples / max(float(kl), 1e-12)
        return losses
