"""The actor's smoothness (Lipschitz) penalty (``agent.algorithm.smoothness_coef``, ``sim2real.smoothness``): its
value and gradient on a linear actor by hand, the actor left as it was after an update, and PPO training that
flattens the actor with it."""

from __future__ import annotations

import torch
from rsl_rl.models.mlp_model import MLPModel
from tensordict import TensorDict

from sim2real.smoothness import AddedToLoss, SmoothnessPenalty

OBS_DIM, ACTIONS = 5, 3


def test_added_to_loss_adds_the_penalty_to_the_gradient():
    theta = torch.tensor(1.5, requires_grad=True)
    loss = 3.0 * AddedToLoss.apply(2.0 * theta, theta**2)
    assert float(loss.detach()) == 9.0  # the forward pass is the carrier alone: 3 * 2 * 1.5
    loss.backward()
    assert float(theta.grad) == 3.0 * 2.0 + 2.0 * 1.5  # d(3 * 2 theta)/d theta + d(theta^2)/d theta


def _linear_actor() -> MLPModel:
    obs = TensorDict({"policy": torch.zeros(1, OBS_DIM)}, batch_size=[1])
    gaussian = {"class_name": "GaussianDistribution", "init_std": 0.5}
    actor = MLPModel(obs, {"actor": ["policy"]}, "actor", ACTIONS, hidden_dims=[4], distribution_cfg=gaussian)
    actor.mlp = torch.nn.Linear(OBS_DIM, ACTIONS)  # mu = W o + b: the Jacobian is W on every row
    return actor


def test_penalty_and_its_gradient_on_a_linear_actor():
    """mu = W o + b, actions a = mu + sigma eps: the penalty is mean_rows ||W^T eps||^2, and the surrogate's
    gradient gains coef x that penalty's gradient in W."""
    torch.manual_seed(0)
    actor, coef = _linear_actor(), 0.3
    obs = torch.randn(8, OBS_DIM)
    eps = torch.randn(8, ACTIONS)
    with torch.no_grad():
        actions = actor.mlp(obs) + 0.5 * eps
    weight = actor.mlp.weight

    def surrogate(log_prob: torch.Tensor) -> torch.Tensor:
        return -(log_prob * torch.linspace(-1, 2, 8)).mean()  # advantages of either sign

    with SmoothnessPenalty(actor, coef) as penalty:  # what rsl-rl's update calls, in its order
        actor(TensorDict({"policy": obs}, batch_size=[8]), stochastic_output=True)
        surrogate(actor.get_output_log_prob(actions)).backward()
    by_hand = (eps @ weight.detach()).square().sum(dim=-1).mean()  # W^T eps per row, as rows: eps W
    torch.testing.assert_close(torch.tensor(penalty.values), by_hand.unsqueeze(0))

    got = weight.grad.clone()
    weight.grad = None
    actor(TensorDict({"policy": obs}, batch_size=[8]), stochastic_output=True)
    (surrogate(actor.get_output_log_prob(actions)) + coef * (eps @ weight).square().sum(-1).mean()).backward()
    torch.testing.assert_close(got, weight.grad)


def test_the_actor_is_left_as_it_was():
    actor = _linear_actor()
    with SmoothnessPenalty(actor, 1.0):
        pass
    assert "get_output_log_prob" not in vars(actor)  # the class's method again
    assert not actor.obs_normalizer._forward_hooks


def _jacobian_norm(actor: MLPModel, obs: torch.Tensor) -> float:
    """Mean squared Frobenius norm of d mu / d (normalised o) over ``obs`` rows."""
    normalised = actor.obs_normalizer(obs)
    rows = [torch.autograd.functional.jacobian(actor.mlp, row) for row in normalised]
    return float(torch.stack(rows).square().sum(dim=(1, 2)).mean())


def _trained(coef: float):
    """rsl-rl's runner with this project's PPO on a fake env, seeded alike, after 5 iterations."""
    from rsl_rl.runners import OnPolicyRunner
    from test_export import _FakeVecEnv, fake_runner_cfg

    torch.manual_seed(0)
    algorithm = {"class_name": "sim2real.ppo:PPO", "num_learning_epochs": 2, "num_mini_batches": 2}
    runner = OnPolicyRunner(_FakeVecEnv(), fake_runner_cfg(algorithm | {"smoothness_coef": coef}), None, "cpu")
    runner.learn(5)
    return runner


def test_training_with_the_penalty_flattens_the_actor():
    """The same seeded runs on a fake env (random rewards): with the penalty the actor's Jacobian ends smaller, the
    penalty is logged, and the actor keeps no trace of the update's hooks."""
    plain, smooth = _trained(0.0), _trained(1.0)
    obs = torch.randn(64, smooth.alg.actor.obs_dim) * 2.0
    assert _jacobian_norm(smooth.alg.actor, obs) < 0.5 * _jacobian_norm(plain.alg.actor, obs)
    assert "get_output_log_prob" not in vars(smooth.alg.actor)
    losses = smooth.alg.update()  # the last rollout again: the update reports the penalty
    assert losses["smoothness"] > 0 and "smoothness" not in plain.alg.update()
