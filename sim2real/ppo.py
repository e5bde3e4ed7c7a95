"""rsl-rl PPO plus the data-to-divergence ratio of every update.

Data-to-divergence (D2D) = transitions collected per iteration / mean KL(behaviour policy || updated policy) over
those transitions. When reward plateaus while D2D falls, each update moves the policy a lot per sample: more
environments (more data per step) or a smaller step (lower learning rate / desired KL) is the remedy
(arXiv 2603.06009 uses the same diagnostic to motivate scaling to many parallel environments).
"""

from __future__ import annotations

import torch
from rsl_rl.algorithms import PPO as RslRlPPO


class PPO(RslRlPPO):
    def update(self) -> dict[str, float]:
        storage = self.storage
        # the rollout buffers stay valid through update(); clear() only rewinds the write cursor
        observations = storage.observations.flatten(0, 1)
        behaviour = tuple(p.flatten(0, 1) for p in storage.distribution_params)
        losses = super().update()
        if self.actor.is_recurrent:
            return losses
        with torch.no_grad():
            self.actor(observations, stochastic_output=True)
            kl = self.actor.get_kl_divergence(behaviour, self.actor.output_distribution_params).mean()
        samples = observations.batch_size[0] * getattr(self, "gpu_world_size", 1)
        losses["kl_behaviour_updated"] = float(kl)
        losses["data_to_divergence"] = samples / max(float(kl), 1e-12)
        return losses
