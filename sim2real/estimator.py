"""An actor that estimates its base velocity from what it measures, trained beside PPO (concurrent state estimation,
Ji et al. 2022, arXiv 2202.05481; also HIMLoco, DreamWaQ).

A blind legged robot does not measure its base velocity, so an actor without one learns a gait for the average
randomised robot and walks a lighter, slipperier or stiffer one at the wrong speed (README, "Time to a robust walk").
Here a small MLP maps the actor's normalised observations to the base linear velocity, regressed in every update on
the simulator's true value (observation group ``velocity_target``), and the actor's MLP reads the estimate beside the
observations. The estimate is detached on the actor's path: only the regression trains the estimator. The exported
ONNX graph contains both, so the robot side feeds it the same observations as any other policy.
"""

from __future__ import annotations

import copy

import torch
from rsl_rl.models.mlp_model import MLPModel, _OnnxMLPModel
from rsl_rl.modules import MLP
from tensordict import TensorDict

from sim2real_deploy.policy_file import ESTIMATE_OUTPUT_NAME, OUTPUT_NAME

TARGET_GROUP = "velocity_target"
"""The observation group holding the regression target (``mdp.base_lin_vel``, noise-free); never an actor input."""
ESTIMATOR_HIDDEN_DIMS = (128, 64)


class VelocityEstimatorModel(MLPModel):
    """rsl-rl's MLP actor with a base-velocity estimator in front of its MLP."""

    def __init__(self, obs: TensorDict, obs_groups: dict[str, list[str]], obs_set: str, output_dim: int, **kwargs):
        if TARGET_GROUP not in obs.keys():
            raise ValueError(f"the velocity estimator needs the observation group {TARGET_GROUP!r}")
        self.estimate_dim = obs[TARGET_GROUP].shape[-1]  # read by _get_latent_dim() inside super().__init__()
        super().__init__(obs, obs_groups, obs_set, output_dim, **kwargs)
        activation = kwargs.get("activation", "elu")
        self.estimator = MLP(self.obs_dim, self.estimate_dim, ESTIMATOR_HIDDEN_DIMS, activation)

    def _get_latent_dim(self) -> int:
        return self.obs_dim + self.estimate_dim

    def get_latent(self, obs: TensorDict, masks: torch.Tensor | None = None, hidden_state=None) -> torch.Tensor:
        normalised = super().get_latent(obs, masks, hidden_state)
        with torch.no_grad():  # only the regression trains the estimator; no graph for PPO's backward to skip
            estimate = self.estimator(normalised)
        return torch.cat([normalised, estimate], dim=-1)

    def estimator_inputs(self, obs: TensorDict) -> torch.Tensor:
        """The estimator's input: the actor's normalised observations (no gradients: the normaliser is not trained
        by gradient)."""
        with torch.no_grad():
            return super().get_latent(obs)

    def estimation_loss(self, obs: TensorDict) -> torch.Tensor:
        """Mean squared error of the estimate against ``velocity_target``."""
        return self.regression_loss(self.estimator_inputs(obs), obs[TARGET_GROUP])

    def regression_loss(self, inputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean squared error of the estimate from :meth:`estimator_inputs` rows against their targets."""
        return (self.estimator(inputs) - target).square().mean()

    def as_onnx(self, verbose: bool) -> _OnnxEstimatorModel:
        return _OnnxEstimatorModel(self, verbose)

    def as_jit(self) -> None:
        # rsl-rl's TorchScript copy would drop the estimator; the project exports ONNX only
        raise NotImplementedError("a velocity-estimating actor exports through as_onnx (sim2real export)")


class _OnnxEstimatorModel(_OnnxMLPModel):
    """The deterministic actor on raw observations: normalise, estimate, act. The estimate is a second output, so
    that a robot or a benchmark can log what the policy believes (``benchmarks/velocity_estimate.py``)."""

    output_names = (OUTPUT_NAME, ESTIMATE_OUTPUT_NAME)

    def __init__(self, model: VelocityEstimatorModel, verbose: bool) -> None:
        super().__init__(model, verbose)
        self.estimator = copy.deepcopy(model.estimator)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.obs_normalizer(x)
        estimate = self.estimator(x)
        return self.deterministic_output(self.mlp(torch.cat([x, estimate], dim=-1))), estimate
