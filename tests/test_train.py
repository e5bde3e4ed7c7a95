"""The train CLI end to end: a tiny real training run, its run folder, resume, and clear errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import run_cli

TINY = ["env.scene.num_envs=8", "agent.num_steps_per_env=8", "agent.save_interval=1"]
# entropy bonus 0.01 and action std cap 1 (the initial std) up to iteration 1, then linearly to 0 and 0.5 at 3
SCHEDULES = [
    "agent.algorithm.entropy_coef=0.01",
    "agent.algorithm.entropy_coef_final=0.0",
    "agent.algorithm.entropy_anneal=[1,3]",
    "agent.algorithm.action_std_max_final=0.5",
    "agent.algorithm.action_std_anneal=[1,3]",
]


sim2real = run_cli


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    result = sim2real("train", "--log-root", str(root), *TINY, *SCHEDULES, "agent.max_iterations=2", cwd=root)
    assert result.returncode == 0, result.stderr[-3000:]
    (run_dir,) = (root / "go2_flat").iterdir()
    return run_dir


def test_training_writes_run_folder(trained_run: Path):
    assert sorted(p.name for p in trained_run.glob("model_*.pt")) == ["model_0.pt", "model_1.pt"]
    info = json.loads((trained_run / "run.json").read_text())
    assert info["task"] == "Sim2Real-Velocity-Flat-Go2-v0"
    assert info["settings"]["device"] == "cpu" and info["settings"]["seed"] == 42
    assert info["versions"]["isaaclab"] == "3.0.0" and info["versions"]["rsl-rl-lib"] == "5.5.1"
    assert len(info["git_revision"]) >= 7
    assert "env.scene.num_envs=8" in info["overrides"]
    assert (trained_run / "params" / "env.yaml").is_file() and (trained_run / "params" / "agent.yaml").is_file()
    assert list(trained_run.glob("events.out.tfevents.*")), "no TensorBoard log"
    log = (trained_run / "train.log").read_text()
    assert "Learning iteration 1/2" in log


def test_resume_continues_iteration_count_and_optimiser(trained_run: Path):
    before = torch.load(trained_run / "model_1.pt", weights_only=False)
    assert before["iter"] == 1 and before["optimizer_state_dict"]["state"]
    randomization = trained_run / "domain_randomization.json"
    assert json.loads(randomization.read_text())["max_target_rate"] is None
    # on from here: behind policy_node's slew limit, and a faster gait clock (a fine-tune changing the interface)
    more = ["agent.max_iterations=4", "env.slew_limited=true", "env.gait_period=0.4"]
    result = sim2real("train", "--resume", str(trained_run), *more, cwd=trained_run)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "from model_1.pt at iteration 2/4" in result.stdout
    info = json.loads((trained_run / "run.json").read_text())  # the resume is on record, and replayed by the next
    assert info["overrides"][-3:] == more
    assert [(r["checkpoint"], r["overrides"]) for r in info["resumes"]] == [("model_1.pt", more)]
    # what the checkpoints from here on trained under, for their export: the Go2 node's 0.5 x no-load speed and the
    # 0.4 s clock; model_0 and model_1 keep the records they trained under
    assert json.loads(randomization.read_text())["max_target_rate"]["FL_calf_joint"] == pytest.approx(0.5 * 15.7)
    assert json.loads((trained_run / "domain_randomization.to_1.json").read_text())["max_target_rate"] is None
    assert _clock_period(json.loads((trained_run / "policy_interface.json").read_text())) == 0.4
    assert _clock_period(json.loads((trained_run / "policy_interface.to_1.json").read_text())) == 0.5
    assert sorted(p.name for p in trained_run.glob("model_*.pt"))[-1] == "model_3.pt"
    after = torch.load(trained_run / "model_3.pt", weights_only=False)
    assert after["iter"] == 3
    # the optimiser kept its moment estimates across the resume (Adam step count grows, not restarts)
    step_before = next(iter(before["optimizer_state_dict"]["state"].values()))["step"]
    step_after = next(iter(after["optimizer_state_dict"]["state"].values()))["step"]
    assert step_after > step_before
    # and the schedules went on from iteration 2, not from their start
    assert _scalars(trained_run, "Loss/entropy_coef") == pytest.approx([0.01, 0.01, 0.005, 0.0])
    assert _scalars(trained_run, "Loss/action_std_max") == pytest.approx([1.0, 1.0, 0.75, 0.5])
    # each checkpoint holds the std clamped for the next iteration's rollouts; unclamped it would stay near 1, and an
    # update moves it only a little below the cap the rollouts ran under
    for iteration, cap in ((1, 0.75), (3, 0.5)):
        state = torch.load(trained_run / f"model_{iteration}.pt", weights_only=False)["actor_state_dict"]
        std = state["distribution.std_param"]
        assert float(std.max()) <= cap and float(std.min()) > cap - 0.01, std


def _clock_period(interface: dict) -> float:
    return next(term for term in interface["observations"] if term["name"] == "gait_phase")["params"]["period"]


def test_a_checkpoint_exports_with_what_it_trained_under(trained_run: Path, tmp_path: Path):
    """A resume that changed the gait clock and the slew limit: the checkpoint before it exports with neither (its
    own config rebuilt, no --force), the one after with both."""
    from sim2real_deploy.policy_file import read_metadata

    for checkpoint, period, slew_limited in (("model_1.pt", 0.5, False), ("model_3.pt", 0.4, True)):
        out = tmp_path / checkpoint / "policy.onnx"
        result = sim2real("export", str(trained_run / checkpoint), "--out", str(out), cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        meta = read_metadata(out)
        assert _clock_period(meta.raw) == period
        assert bool(meta.domain_randomization["max_target_rate"]) == slew_limited


def test_recorded_overrides_at_an_iteration_leave_later_resumes_out():
    from sim2real.runlog import recorded_overrides

    info = {
        "settings": {"seed": 1, "cone": "mjcf"},
        "overrides": ["a=1", "b=2", "c=3", "d=4"],
        "resumes": [
            {"checkpoint": "model_10.pt", "overrides": ["b=2", "seed=7"]},  # settings are not replayed
            {"checkpoint": "model_20.pt", "overrides": ["c=3", "d=4"]},
        ],
    }
    assert recorded_overrides(info, ("seed",), iteration=10) == ["seed=1", "a=1"]
    assert recorded_overrides(info, ("seed",), iteration=11) == ["seed=1", "a=1", "b=2"]
    assert recorded_overrides(info, ("seed",), iteration=21) == recorded_overrides(info, ("seed",))


def test_wrong_task_id_lists_valid_tasks(tmp_path: Path):
    result = sim2real("train", "--task", "Sim2Real-Velocity-Flat-Go3-v0", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown task 'Sim2Real-Velocity-Flat-Go3-v0'" in result.stderr
    assert "Sim2Real-Velocity-Flat-Go2-v0" in result.stderr
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("env.scene.nm_envs=8", "Did you mean 'num_envs'?"),
        ("env.scene.num_envs=many", "expects int"),
        ("agent.algorithm.learnin_rate=1e-3", "Did you mean 'learning_rate'?"),
        ("physics=bullet", "Valid presets: newton_cpu, newton_gpu"),
        ("device=tpu", "device must be 'cpu' or 'cuda[:N]'"),
        ("agent.algorithm.entropy_anneal=[5,2]", "must be [start,end] with 0 <= start <= end"),
        ("agent.algorithm.action_std_anneal=[-1,2]", "must be [start,end] with 0 <= start <= end"),
        ("agent.algorithm.action_std_max_final=0.0", "action_std_max_final=0.0 must be > 0"),
        ("env.gait_period=0 env.gait_stand_still_weight=-0.5", "need env.gait_period > 0"),
        ("env.gait_period=0.5 env.gait_relax_rewards={track_lin_vel_xy_fin:1}", "no reward term"),
        ("env.reward_ramps={action_rate_l:-0.1}", "env.reward_ramps: no reward term 'action_rate_l'"),
        ("env.reward_ramps={action_rate_l2:-0.1} env.reward_ramp_steps=[5,2]", "need 0 <= start <= end"),
        ("env.held_swing={FL_thigh_joint:0.2}", "env.held_swing swings held joints, and env.held_joints holds none"),
    ],
)
def test_bad_override_is_a_clear_error(tmp_path: Path, override: str, message: str):
    result = sim2real("train", "--log-root", str(tmp_path / "logs"), *override.split(), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert not (tmp_path / "logs").exists()


def test_corrupted_checkpoint_is_a_clear_error(trained_run: Path, tmp_path: Path):
    for name in ("run.json", "policy_interface.json"):
        (tmp_path / name).write_text((trained_run / name).read_text())
    bad = tmp_path / "model_5.pt"
    bad.write_bytes((trained_run / "model_0.pt").read_bytes()[:1000])  # a truncated download
    result = sim2real("export", str(bad), cwd=tmp_path)
    assert result.returncode == 2
    assert "model_5.pt: not a readable PyTorch checkpoint" in result.stderr
    assert not (tmp_path / "exported").exists()


def _scalars(run_dir: Path, tag: str) -> list[float]:
    """A TensorBoard scalar's values by iteration, over every event file of the run (a resume adds one)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    values = {}
    for path in sorted(run_dir.glob("events.out.tfevents.*")):
        events = EventAccumulator(str(path))
        events.Reload()
        values.update({e.step: e.value for e in events.Scalars(tag)})
    return [values[step] for step in sorted(values)]


def test_data_to_divergence_is_logged(trained_run: Path):
    kl = _scalars(trained_run, "Loss/kl_behaviour_updated")
    d2d = _scalars(trained_run, "Loss/data_to_divergence")
    samples = 8 * 8  # num_envs x num_steps_per_env of TINY
    assert len(kl) == len(d2d) >= 2 and all(k > 0 for k in kl)
    assert d2d == pytest.approx([samples / k for k in kl], rel=1e-4)


@pytest.mark.parametrize("num_envs", [64, 256, 1024])
def test_fixed_minibatch_size_scales_minibatch_count_with_envs(num_envs: int):
    from sim2real.config import load_task

    run = load_task("Sim2Real-Velocity-Flat-Go2-v0", [f"env.scene.num_envs={num_envs}", "agent.minibatch_size=384"])
    assert run.agent.algorithm.num_mini_batches == num_envs * 24 // 384
    assert run.agent.algorithm.learning_rate == 1e-3
    fixed_count = load_task("Sim2Real-Velocity-Flat-Go2-v0", [f"env.scene.num_envs={num_envs}"])
    assert fixed_count.agent.algorithm.num_mini_batches == 4


def test_curves_plots_reward_from_the_run(trained_run: Path, tmp_path: Path):
    from sim2real.curves import read_scalars

    # a 2-iteration run may finish no episode yet (no Train/mean_reward): plot a scalar every iteration logs
    iterations, _, values = read_scalars(trained_run, "Loss/value")
    assert iterations == sorted(iterations) and iterations[:2] == [0, 1] and len(values) == len(iterations)
    out = tmp_path / "curves.png"
    result = sim2real("curves", f"tiny={trained_run}", "--tag", "Loss/value", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = sim2real("curves", str(trained_run), "--tag", "Train/nope", "--out", str(out), cwd=tmp_path)
    assert missing.returncode == 2 and "no 'Train/nope'" in missing.stderr


def test_play_reports_survival_and_tracking(trained_run: Path, tmp_path: Path):
    result = sim2real("play", str(trained_run), "--num-envs", "2", "env.episode_length_s=1.0", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr[-2000:]
    report = json.loads(result.stdout[result.stdout.index("{\n") :])
    assert 0.0 <= report["survival_rate"] <= 1.0 and 0.0 < report["mean_survival_time_s"] <= 1.0 + 1e-6
    assert report["lin_vel_xy_error_mean"] >= 0 and report["yaw_rate_error_mean"] >= 0
    assert report["checkpoint"].endswith(".pt") and Path(report["plot"]).is_file()


def test_export_uses_the_run_recorded_interface(trained_run: Path, tmp_path: Path):
    """Metadata comes from what the run recorded at training time; a spec that changed since is refused, by name."""
    import shutil

    from sim2real_deploy.policy_file import read_metadata

    run = Path(shutil.copytree(trained_run, tmp_path / "run"))
    recorded = json.loads((run / "policy_interface.json").read_text())
    assert recorded["robot"]["name"] == "go2" and recorded["actuator"] == {"model": "dc_motor"}
    recorded["stiffness"][0] = 30.0  # as if the Go2 spec's Kp had been edited after this run trained
    (run / "policy_interface.json").write_text(json.dumps(recorded))
    refused = sim2real("export", str(run), cwd=tmp_path)
    assert refused.returncode == 2 and "stiffness" in refused.stderr and "Traceback" not in refused.stderr
    assert not (run / "exported").exists()
    forced = sim2real("export", str(run), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr[-2000:]
    meta = read_metadata(run / "exported" / "policy.onnx")
    assert meta.raw["stiffness"][0] == 30.0 and meta.raw["stiffness"][1] == 25.0  # the run's values, not today's


def test_interface_fields_added_after_a_run_are_filled_in_not_refused():
    """A run recorded before the exporter learned a robot fact (e.g. ``robot.fall``) exports with today's value of
    that fact; a recorded value that changed is still refused, and --force keeps the recorded one."""
    from sim2real.export_run import differing_fields, with_additions

    recorded = {"robot": {"name": "go2"}, "stiffness": [25.0], "commands": {}}
    today = {"robot": {"name": "go2", "fall": {"max_tilt": 1.0}}, "stiffness": [25.0], "commands": {"frame": "base"}}
    assert differing_fields(recorded, today) == []
    assert with_additions(recorded, today) == today
    gripper = {**today, "action": {"gripper": {"speed": 0.05}}}  # a training setting, not a robot fact
    assert differing_fields(recorded, gripper) == ['action: null -> {"gripper": {"speed": 0.05}}']
    today["stiffness"] = [30.0]
    assert differing_fields(recorded, today) == ["stiffness: [25.0] -> [30.0]"]
    assert with_additions(recorded, today)["stiffness"] == [25.0]


def test_runs_from_before_the_cone_setting_rebuild_with_their_cone():
    """Old runs trained on the pyramidal cone, or on the removed elliptic preset: export and resume rebuild that."""
    from sim2real.runlog import recorded_overrides

    old = {"settings": {"device": "cpu", "seed": 1, "physics": "native_mujoco_cpu"}, "overrides": []}
    assert "cone=pyramidal" in recorded_overrides(old)
    elliptic = {"settings": {"physics": "native_mujoco_cpu_elliptic"}, "overrides": []}
    assert recorded_overrides(elliptic) == ["physics=native_mujoco_cpu", "cone=mjcf"]
    new = {"settings": {"physics": "native_mujoco_cpu", "cone": "mjcf"}, "overrides": []}
    assert recorded_overrides(new, ("cone",)) == ["cone=mjcf"]
