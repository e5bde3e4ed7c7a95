"""The velocity-estimating actor (``agent.velocity_estimator=true``, ``sim2real.estimator``): its config, its
regression, the actor path that does not train it, its ONNX export, and a real training run that learns it."""

from __future__ import annotations

import pytest
import torch
from conftest import GO2_TASK, run_cli
from tensordict import TensorDict

from sim2real.config import ConfigError, load_task
from sim2real.estimator import TARGET_GROUP, VelocityEstimatorModel
from sim2real.ppo import ESTIMATOR_OPTIMIZER_KEY
from sim2real.tasks.locomotion.velocity_env_cfg import VelocityTargetCfg
from sim2real_deploy.policy_file import ESTIMATE_OUTPUT_NAME, INPUT_NAME, OUTPUT_NAME

OBS_DIM = 6


def _obs(batch: int, weights: torch.Tensor) -> TensorDict:
    """Policy observations and a velocity target that is a linear function of them (learnable exactly)."""
    policy = torch.randn(batch, OBS_DIM)
    return TensorDict({"policy": policy, TARGET_GROUP: policy @ weights}, batch_size=[batch])


def _model(obs: TensorDict) -> VelocityEstimatorModel:
    gaussian = {"class_name": "GaussianDistribution", "init_std": 1.0}
    return VelocityEstimatorModel(
        obs, {"actor": ["policy"]}, "actor", 4, hidden_dims=[16], obs_normalization=True, distribution_cfg=gaussian
    )


def test_estimator_setting_adds_its_target_group_and_actor():
    run = load_task(GO2_TASK, ["agent.velocity_estimator=true"])
    assert isinstance(run.env.observations.velocity_target, VelocityTargetCfg)
    assert run.agent.actor.class_name == "sim2real.estimator:VelocityEstimatorModel"
    off = load_task(GO2_TASK, ["agent.velocity_estimator=false"])
    assert off.env.observations.velocity_target is None  # nothing added
    assert off.agent.actor.class_name != "sim2real.estimator:VelocityEstimatorModel"


def test_estimator_needs_a_floating_base():
    with pytest.raises(ConfigError, match="locomotion task"):
        load_task("Sim2Real-Reach-Panda-v0", ["agent.velocity_estimator=true"])


def test_estimator_learns_its_target_and_the_actor_does_not_train_it():
    torch.manual_seed(0)
    weights = torch.randn(OBS_DIM, 3)
    model = _model(_obs(8, weights))
    assert model.mlp[0].in_features == OBS_DIM + 3  # the actor reads the observations and the estimate

    model(_obs(32, weights)).square().sum().backward()  # a loss on the actor's output, as PPO's
    assert all(p.grad is None for p in model.estimator.parameters())
    assert model.mlp[0].weight.grad is not None

    optimizer = torch.optim.Adam(model.estimator.parameters(), lr=3e-3)
    initial = float(model.estimation_loss(_obs(256, weights)))
    for _ in range(400):
        loss = model.estimation_loss(_obs(64, weights))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert float(model.estimation_loss(_obs(256, weights))) < 0.05 * initial


def test_onnx_module_acts_as_the_deterministic_actor_and_outputs_its_estimate():
    import onnxruntime as ort

    from sim2real.export.onnx_export import _to_onnx

    torch.manual_seed(1)
    obs = _obs(16, torch.randn(OBS_DIM, 3))
    model = _model(obs)
    model.update_normalization(obs)  # a non-trivial normaliser, as after training
    exported = model.as_onnx(verbose=False)
    actions, estimate = exported(obs["policy"])
    torch.testing.assert_close(actions, model(obs), rtol=0, atol=1e-6)
    with torch.no_grad():
        torch.testing.assert_close(estimate, model.estimator(model.estimator_inputs(obs)), rtol=0, atol=1e-6)

    session = ort.InferenceSession(_to_onnx(exported, OBS_DIM).SerializeToString())
    assert [out.name for out in session.get_outputs()] == [OUTPUT_NAME, ESTIMATE_OUTPUT_NAME]
    onnx_actions, onnx_estimate = session.run(None, {INPUT_NAME: obs["policy"].numpy()})
    torch.testing.assert_close(torch.from_numpy(onnx_actions), actions, rtol=0, atol=1e-5)
    torch.testing.assert_close(torch.from_numpy(onnx_estimate), estimate, rtol=0, atol=1e-5)


def _rsl_rl_minibatch_regression(ppo) -> float:
    """The regression as a pass over rsl-rl's own PPO minibatches (the reference for the indexed one)."""
    for batch in ppo.storage.mini_batch_generator(ppo.num_mini_batches, ppo.num_learning_epochs):
        loss = ppo.actor.estimation_loss(batch.observations)
        ppo.estimator_optimizer.zero_grad()
        loss.backward()
        ppo.estimator_optimizer.step()
    ppo.actor.estimator.zero_grad(set_to_none=True)
    return float(loss)


def _trained_estimating_runner(reference: bool):
    """rsl-rl's runner with this project's PPO and an estimating actor on a fake env, seeded alike, after 3
    iterations; with ``reference`` the estimator regresses over rsl-rl's minibatches."""
    from rsl_rl.runners import OnPolicyRunner
    from test_export import _FakeVecEnv, fake_runner_cfg

    class _FakeEnv(_FakeVecEnv):
        def get_observations(self) -> TensorDict:
            obs = super().get_observations()
            obs[TARGET_GROUP] = obs["policy"][:, :3] * 0.5
            return obs

    torch.manual_seed(0)
    cfg = fake_runner_cfg({"class_name": "sim2real.ppo:PPO", "num_learning_epochs": 3, "num_mini_batches": 2})
    cfg["actor"]["class_name"] = "sim2real.estimator:VelocityEstimatorModel"
    runner = OnPolicyRunner(_FakeEnv(), cfg, log_dir=None, device="cpu")
    if reference:
        runner.alg._update_estimator = lambda: _rsl_rl_minibatch_regression(runner.alg)
    initial = runner.alg.actor.estimator[0].weight.clone()
    runner.learn(3)
    assert not torch.equal(runner.alg.actor.estimator[0].weight, initial)  # the regression ran
    return runner


def test_indexed_regression_matches_rsl_rl_minibatches():
    """``PPO._update_estimator`` normalises the rollout once and indexes two tensors instead of walking rsl-rl's
    minibatches: the same estimator, actor and critic, bit for bit, after 3 iterations."""
    ours, reference = _trained_estimating_runner(False), _trained_estimating_runner(True)
    trained = ours.alg.actor.state_dict()
    for name, value in reference.alg.actor.state_dict().items():
        assert torch.equal(trained[name], value), name
    for name, value in reference.alg.critic.state_dict().items():
        assert torch.equal(ours.alg.critic.state_dict()[name], value), name


def test_training_with_the_estimator_learns_the_base_velocity(tmp_path):
    """A real ``sim2real train agent.velocity_estimator=true``: the regression loss (logged each iteration) falls on
    the rollouts' true base velocity, and the run exports to one ONNX file (parity checked by the export)."""
    from sim2real.curves import read_scalars

    tiny = ["env.scene.num_envs=16", "agent.max_iterations=4"]  # the Go2 main job's actor estimates by default
    result = run_cli("train", "--log-root", str(tmp_path), *tiny, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (run_dir,) = (tmp_path / "go2_flat").iterdir()
    _, _, losses = read_scalars(run_dir, "Loss/velocity_estimation")
    assert len(losses) == 4 and losses[-1] < 0.6 * losses[0], losses
    checkpoint = torch.load(run_dir / "model_3.pt", weights_only=False)
    assert checkpoint[ESTIMATOR_OPTIMIZER_KEY]["state"], "a resume must continue the estimator's Adam"
    exported = run_cli("export", str(run_dir), "--out", str(tmp_path / "policy.onnx"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert (tmp_path / "policy.onnx").is_file()
