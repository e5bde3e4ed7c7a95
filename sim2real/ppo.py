"""rsl-rl PPO plus the data-to-divergence ratio of every update.

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
    def update(self) -> dict[str, float]:
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
