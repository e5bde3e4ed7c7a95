"""Left-right symmetric data augmentation (``sim2real.tasks.mdp.symmetry``): hand-computed mirror tables, and a
mirrored robot in the real Isaac Lab env seeing exactly the mirrored observations."""

from __future__ import annotations

import pytest
import torch
from conftest import GO2_TASK, task_env
from tensordict import TensorDict

from sim2real.config import ConfigError, load_task
from sim2real.robots import ROBOTS
from sim2real.tasks.locomotion.velocity_env_cfg import TROT
from sim2real.tasks.mdp.symmetry import mirror_left_right, phase_shift_sign

# physics the same in every env: no per-env randomisation, latency or sensor noise
IDENTICAL_ENVS = [
    *(f"env.events.{term}=null" for term in ("friction", "added_base_mass", "base_com", "motor_strength")),
    *(f"env.events.{term}=null" for term in ("joint_dynamics", "push_robot")),
    "env.actions.joint_pos.delay_range=[0,0]",
    "env.observations.policy.enable_corruption=false",
]


def test_go2_mirror_swaps_legs_and_negates_hips():
    spec = ROBOTS["go2"]  # policy order FL, FR, RL, RR x (hip, thigh, calf)
    assert spec.mirror.permutation(spec.joint_names) == [3, 4, 5, 0, 1, 2, 9, 10, 11, 6, 7, 8]
    assert spec.mirror.signs(spec.joint_names) == [-1.0, 1.0, 1.0] * 4
    assert spec.mirror.permutation(spec.foot_bodies) == [1, 0, 3, 2]
    assert spec.mirror.name("base_link") == "base_link"


@pytest.mark.parametrize("robot", [name for name, spec in sorted(ROBOTS.items()) if spec.mirror])
def test_each_mirrored_robot_is_symmetric_in_its_spec_and_mjcf(robot):
    """The mirror maps the default pose, the gains and the MJCF's joint limits onto themselves, and every joint's
    axis to its mirror joint's axis reflected through the x-z plane (sign flipped for a negated joint)."""
    import mujoco
    import numpy as np

    spec = ROBOTS[robot]
    names, perm = spec.joint_names, spec.mirror.permutation(spec.joint_names)
    sign = np.array(spec.mirror.signs(names))
    table = {k: np.array(v) for k, v in spec.joint_table().items()}
    np.testing.assert_allclose(table["default_joint_pos"][perm] * sign, table["default_joint_pos"], atol=1e-9)
    for key in ("stiffness", "damping", "effort_limit", "velocity_limit"):
        np.testing.assert_array_equal(table[key][perm], table[key])
    model = mujoco.MjModel.from_xml_path(str(spec.mjcf_path))
    ids = [model.joint(n).id for n in names]
    limits, axes = model.jnt_range[ids], model.jnt_axis[ids]
    mirrored = np.sort(limits[perm] * sign[:, None], axis=1)
    np.testing.assert_allclose(mirrored, limits, atol=1e-3)
    reflect = np.array([1.0, -1.0, 1.0])  # an axial vector's reflection through x-z is -(x, -y, z)
    np.testing.assert_allclose(-(axes[perm] * reflect) * sign[:, None], axes, atol=1e-6)


@pytest.mark.parametrize(
    ("offsets", "sign"),
    [(TROT, -1.0), ((0.0, 0.5, 0.0, 0.5), -1.0), ((0.0, 0.0, 0.5, 0.5), 1.0), ((0.0, 0.0, 0.0, 0.0), 1.0)],
)
def test_gait_clock_mirror_is_a_half_period_shift_for_a_trot_or_pace(offsets, sign):
    assert phase_shift_sign(offsets, [1, 0, 3, 2]) == sign


def test_asymmetric_gait_offsets_are_refused():
    with pytest.raises(ValueError, match="not left-right symmetric"):
        phase_shift_sign((0.0, 0.25, 0.5, 0.75), [1, 0, 3, 2])


def test_symmetry_without_a_robot_mirror_is_a_config_error():
    with pytest.raises(ConfigError, match="has none"):
        load_task("Sim2Real-Reach-Panda-v0", ["agent.symmetry=true"])


def test_symmetry_without_a_term_mirror_rule_is_a_config_error(monkeypatch):
    from sim2real.tasks.mdp import symmetry

    load_task("Sim2Real-Velocity-Rough-Go2-v0", ["agent.symmetry=true"])  # every term has its rule
    monkeypatch.setattr(symmetry, "MIRRORED_TERMS", symmetry.MIRRORED_TERMS - {"height_scan"})
    with pytest.raises(ConfigError, match="height_scan"):
        load_task("Sim2Real-Velocity-Rough-Go2-v0", ["agent.symmetry=true"])


def test_symmetry_setting_configures_rsl_rl_augmentation():
    algorithm = load_task(GO2_TASK, ["agent.symmetry=true"]).agent.algorithm
    assert algorithm.symmetry_cfg.use_data_augmentation and not algorithm.symmetry_cfg.use_mirror_loss
    assert algorithm.symmetry_cfg.data_augmentation_func == "sim2real.tasks.mdp.symmetry:mirror_left_right"


def _mirror_state(robot, spec, src: int, dst: int, origins: torch.Tensor) -> None:
    """Put env ``dst``'s robot in the mirror image of env ``src``'s state (reflection through the x-z plane)."""
    data = robot.data
    pose = data.root_pose_w.torch[src].clone()  # x, y, z, qx, qy, qz, qw
    pose[:3] -= origins[src]
    pose[[1, 3, 5]] *= -1  # y; a reflected rotation keeps its y-axis part, negates x and z
    pose[:3] += origins[dst]
    velocity = data.root_vel_w.torch[src].clone() * torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    perm, sign = spec.mirror.permutation(robot.joint_names), torch.tensor(spec.mirror.signs(robot.joint_names))
    position, joint_vel = data.joint_pos.torch[src, perm] * sign, data.joint_vel.torch[src, perm] * sign
    ids = torch.tensor([dst])
    robot.write_root_pose_to_sim_index(root_pose=pose[None], env_ids=ids)
    robot.write_root_velocity_to_sim_index(root_velocity=velocity[None], env_ids=ids)
    robot.write_joint_state_to_sim_index(position=position[None], velocity=joint_vel[None], env_ids=ids)


@pytest.mark.parametrize(
    ("task", "clock_period", "history"),
    [(GO2_TASK, 0.0, 0), (GO2_TASK, 0.4, 0), (GO2_TASK, 0.4, 3), ("Sim2Real-Velocity-Flat-G1-v0", 0.4, 0)],
    ids=["go2", "go2-clock", "go2-clock-history", "g1-clock"],
)
def test_a_mirrored_robot_observes_the_mirrored_observations(task: str, clock_period: float, history: int):
    """Env 1 starts as env 0's mirror image with the mirrored command and is driven by the mirrored actions; every
    policy and critic observation it gets equals ``mirror_left_right`` of env 0's. With a clock, env 1's episode is
    half a period ahead, which is what the mirror rule of a trot's (or a biped's alternating) clock says. With a
    history of policy observations, every frame of it is mirrored."""
    overrides = [*IDENTICAL_ENVS, "agent.symmetry=true", f"env.gait_period={clock_period}"]
    overrides += [f"env.observations.policy.history_length={history}"] if history else []
    with task_env(task, *overrides, num_envs=2) as env:
        u = env.unwrapped
        robot, spec = u.scene["robot"], ROBOTS[u.cfg.robot]
        env.reset()
        generator = torch.Generator().manual_seed(0)
        for _ in range(10):  # a non-trivial state: legs moving, base tilted
            env.step(0.3 * torch.randn(2, env.num_actions, generator=generator))
        _mirror_state(robot, spec, 0, 1, u.scene.env_origins)
        term = u.command_manager.get_term("base_velocity")
        term.is_standing_env[:] = False  # a standing env's command is zeroed at every step
        command = term.vel_command_b
        command[0] = torch.tensor([0.6, 0.3, 0.5])
        command[1] = command[0] * torch.tensor([1.0, -1.0, -1.0])
        u.episode_length_buf[1] = u.episode_length_buf[0] + round(clock_period / 2 / u.step_dt)
        for _ in range(5):  # no latency: the first action replaces every target of the earlier ones
            action = 0.3 * torch.randn(1, env.num_actions, generator=generator)
            _, both = mirror_left_right(env, actions=action)
            obs, *_ = env.step(both)
        expected, _ = mirror_left_right(env, obs=TensorDict({k: v[:1] for k, v in obs.items()}, batch_size=[1]))
        for group in ("policy", "critic"):
            torch.testing.assert_close(obs[group][1], expected[group][1], atol=1e-2, rtol=1e-2)  # physics: ~5e-3
        # and the mirror is not the identity here: the test would catch a missing sign
        assert (obs["policy"][1] - obs["policy"][0]).abs().max() > 0.1


def test_mirroring_twice_is_the_identity():
    with task_env(GO2_TASK, "env.gait_period=0.5", "agent.symmetry=true", num_envs=2) as env:
        obs = env.get_observations()
        random = TensorDict({k: torch.randn(5, v.shape[1]) for k, v in obs.items()}, batch_size=[5])
        actions = torch.randn(5, env.num_actions)
        once, actions_once = mirror_left_right(env, obs=random, actions=actions)
        assert once.batch_size[0] == 10 and actions_once.shape[0] == 10
        torch.testing.assert_close(once[:5], random)  # the original rows first
        twice, actions_twice = mirror_left_right(env, obs=once[5:], actions=actions_once[5:])
        torch.testing.assert_close(twice[5:], random)
        torch.testing.assert_close(actions_twice[5:], actions)
        assert not torch.allclose(once[5:]["policy"], random["policy"])


def test_training_with_symmetry_updates_on_mirrored_batches(tmp_path):
    """``sim2real train agent.symmetry=true`` runs rsl-rl's augmentation with this mirror: its symmetry loss (the
    actor's disagreement with its own mirror image, logged) is there and positive for an untrained actor."""
    from conftest import run_cli

    from sim2real.curves import read_scalars

    tiny = ["env.scene.num_envs=8", "agent.num_steps_per_env=8", "agent.max_iterations=2", "agent.symmetry=true"]
    result = run_cli("train", "--log-root", str(tmp_path), *tiny, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    (run_dir,) = (tmp_path / "go2_flat").iterdir()
    _, _, losses = read_scalars(run_dir, "Loss/symmetry")
    assert len(losses) == 2 and all(0 < loss < 10 for loss in losses), losses


def _negate(env, obs=None, actions=None):
    """A stand-in mirror for a fake env: the original rows, then their negatives."""
    return (
        None if obs is None else torch.cat([obs, -obs]),
        None if actions is None else torch.cat([actions, -actions]),
    )


def _trained_symmetric_runner(rsl_rl_mirror_loss: bool):
    """An rsl-rl runner with this project's PPO, mirror augmentation and a fake env, seeded alike each time, after 3
    iterations; with ``rsl_rl_mirror_loss`` it logs rsl-rl's own full-batch mirror loss, not the sampled one."""
    from rsl_rl.extensions.symmetry import Symmetry
    from rsl_rl.runners import OnPolicyRunner
    from test_export import _FakeVecEnv, fake_runner_cfg

    torch.manual_seed(0)
    symmetry = {"use_data_augmentation": True, "use_mirror_loss": False, "data_augmentation_func": _negate}
    algorithm = {"class_name": "sim2real.ppo:PPO", "num_learning_epochs": 2, "num_mini_batches": 2}
    cfg = fake_runner_cfg({**algorithm, "symmetry_cfg": symmetry})
    runner = OnPolicyRunner(_FakeVecEnv(), cfg, log_dir=None, device="cpu")
    if rsl_rl_mirror_loss:
        runner.alg.symmetry.compute_loss = Symmetry.compute_loss.__get__(runner.alg.symmetry)
    runner.learn(3)
    return runner


def test_sampled_mirror_loss_leaves_learning_unchanged():
    """The logged-only mirror loss on a no-grad slice (sim2real.ppo) instead of rsl-rl's full actor pass with its
    graph: the same updates bit for bit, and a logged loss of the same size."""
    ours, reference = _trained_symmetric_runner(False), _trained_symmetric_runner(True)
    assert ours.alg.symmetry.compute_loss == ours.alg._logged_mirror_loss
    for name, value in ours.alg.actor.state_dict().items():
        assert torch.equal(value, reference.alg.actor.state_dict()[name]), name
    ours_loss = ours.alg.symmetry.compute_loss(ours.alg.actor, *_augmented_batch(ours))
    reference_loss = reference.alg.symmetry.compute_loss(reference.alg.actor, *_augmented_batch(reference))
    # 64 transitions per minibatch here, under MIRROR_LOG_SAMPLES: the slice is the whole minibatch
    assert float(ours_loss) == pytest.approx(float(reference_loss), rel=1e-5) and float(ours_loss) > 0


def _augmented_batch(runner):
    batch = next(runner.alg.storage.mini_batch_generator(1, 1))
    size = batch.observations.batch_size[0]
    runner.alg.symmetry.augment_batch(batch, size)
    return batch, size
