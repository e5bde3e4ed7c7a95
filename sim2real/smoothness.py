"""A Lipschitz (gradient) penalty on the actor inside rsl-rl's PPO loss: smoothness as a property of the policy
rather than a reward (Chen et al. 2024, Lipschitz-Constrained Policies, arXiv 2410.11825).

An action-rate reward charges for chatter after it happened and trades it against tracking in the return. The
penalty bounds how fast the mean action may change with the observation, the gain that lets the loop through the
robot oscillate. LCP penalises ``E ||grad_o sum log pi(a|o)||^2`` on the rollout's actions. Here the noise scale is
taken out: ``E ||grad_o sum_j eps_j mu_j(o)||^2`` with ``eps = (a - mu) / sigma`` the rollout's standardised noise,
whose expectation is the squared Frobenius norm of the mean action's Jacobian. So the penalty does not grow as the
action std is capped late in training. ``o`` is the actor's normalised observation (the empirical normaliser's
output): every input on one scale. A velocity estimator's path is not differentiated (it runs without gradients).
"""

from __future__ import annotations

import torch
from torch import nn


class AddedToLoss(torch.autograd.Function):
    """Identity on ``carrier``; its backward also gives ``penalty`` a gradient of 1. So a loss built on ``carrier``
    is minimised as if ``penalty`` were added to it: a term joins rsl-rl's inline PPO loss without rewriting it."""

    @staticmethod
    def forward(ctx, carrier: torch.Tensor, penalty: torch.Tensor) -> torch.Tensor:
        return carrier.view_as(carrier)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return grad, grad.new_ones(())


class SmoothnessPenalty:
    """For the span of one PPO update (``with``): the actor's normalised input becomes a leaf that needs gradients,
    and the log-probability PPO's surrogate is built on carries ``coef`` x the penalty of that minibatch."""

    def __init__(self, actor: nn.Module, coef: float) -> None:
        self.actor, self.coef = actor, coef
        self.values: list[float] = []  # the penalty of each minibatch, for the log
        self._input: torch.Tensor | None = None

    def __enter__(self) -> SmoothnessPenalty:
        self._hook = self.actor.obs_normalizer.register_forward_hook(self._input_as_leaf)
        self._log_prob = self.actor.get_output_log_prob
        self.actor.get_output_log_prob = self._penalised_log_prob
        return self

    def __exit__(self, *exc) -> None:
        self._hook.remove()
        del self.actor.get_output_log_prob  # back to the class's method
        self._input = None

    def _input_as_leaf(self, module: nn.Module, args, output: torch.Tensor) -> torch.Tensor | None:
        if not torch.is_grad_enabled():  # no-grad passes (the KL and mirror diagnostics) are left alone
            return None
        self._input = output.detach().requires_grad_()
        return self._input

    def _penalised_log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        log_prob = self._log_prob(actions)
        mean, std = self.actor.output_mean, self.actor.output_std
        noise = ((actions - mean) / std).detach()
        (gradient,) = torch.autograd.grad((mean * noise).sum(), self._input, create_graph=True)
        penalty = gradient.square().sum(dim=-1).mean()
        self.values.append(float(penalty))
        return AddedToLoss.apply(log_prob, self.coef * penalty)

    def mean(self) -> float:
        return sum(self.values) / len(self.values)
