"""Training with rsl-rl PPO on an Isaac Lab task: one device setting, seeded before env creation, resumable."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from sim2real.config import ConfigError, RunConfig, load_task, to_plain, world
from sim2real.runlog import (
    checkpoint_iteration,
    new_run_dir,
    read_run_info,
    record_resume,
    recorded_overrides,
    resolve_checkpoint,
    write_run_info,
)


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def check_device(device: str) -> None:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"device={device} requested but no CUDA GPU is usable here; use device=cpu")


def make_env(run: RunConfig):
    """The gym env wrapped for rsl-rl. Call inside :func:`simulation`."""
    import gymnasium as gym
    from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper

    env = gym.make(run.task, cfg=run.env)
    return RslRlVecEnvWrapper(env, clip_actions=run.agent.clip_actions)


def simulation(run: RunConfig):
    """Isaac Lab's kit-less launcher: Newton physics, no Isaac Sim, no visualiser."""
    from isaaclab.app.sim_launcher import launch_simulation

    return launch_simulation(run.env, {"device": run.settings["device"], "visualizer": "none"})


def make_runner(env, run: RunConfig, log_dir: Path | None):
    import importlib.metadata

    from isaaclab_rl.rsl_rl.utils import handle_deprecated_rsl_rl_cfg

    from sim2real.runner import Runner

    agent = handle_deprecated_rsl_rl_cfg(run.agent, importlib.metadata.version("rsl-rl-lib"))
    return Runner(env, agent.to_dict(), log_dir=str(log_dir) if log_dir else None, device=agent.device)


class CheckpointError(ValueError):
    """A checkpoint that cannot be loaded; the message names the file and what is wrong."""


def load_checkpoint(runner, path: Path, actor_only: bool = False) -> None:
    """Load ``path`` into ``runner``; a truncated, foreign or mismatched file raises :class:`CheckpointError`."""
    import torch

    try:
        state = torch.load(path, weights_only=False, map_location=runner.device)
    except Exception as exc:  # pickle/zip errors from a truncated or foreign file
        raise CheckpointError(f"{path}: not a readable PyTorch checkpoint ({type(exc).__name__}: {exc})") from exc
    missing = [k for k in ("actor_state_dict", "iter") if not isinstance(state, dict) or k not in state]
    if missing:
        raise CheckpointError(f"{path}: not an rsl-rl checkpoint (missing {', '.join(missing)})")
    try:
        runner.load(str(path), load_cfg={"actor": True} if actor_only else None, strict=True)
    except RuntimeError as exc:  # state-dict shape mismatch: checkpoint from another task or network size
        raise CheckpointError(f"{path}: does not fit this task's networks ({exc})") from exc


def continue_env_schedules(env, iteration: int, steps_per_env: int) -> None:
    """The env's step-counted schedules (reward-weight switches such as the gait clock's relaxation, curriculum
    windows) go on from ``iteration`` instead of restarting: the count is policy steps per env."""
    env.unwrapped.common_step_counter = iteration * steps_per_env


def train(task: str, overrides: list[str], log_root: Path = Path("logs"), resume: str | None = None) -> Path | None:
    """Train ``task`` (or resume the run at ``resume``); returns the run folder (None on ranks other than 0)."""
    if resume is not None:
        run_dir, checkpoint = resolve_checkpoint(resume)
        info = read_run_info(run_dir)
        task = info["task"]
        resume_overrides, overrides = overrides, [*recorded_overrides(info), *overrides]
    from sim2real.export_run import record_interface, record_randomization

    run = load_task(task, overrides)
    check_device(run.settings["device"])
    size, rank, _ = world()
    if resume is None:
        run_dir = new_run_dir(log_root, run.agent.experiment_name, run.settings["run_name"]) if rank == 0 else None
        if run_dir is not None:
            write_run_info(run_dir, task, run.settings, overrides, to_plain(run.env), to_plain(run.agent), sys.argv)
            record_interface(run_dir, task, run.env, run.agent.clip_actions)
            record_randomization(run_dir, run.env, run.settings["physics"])
    log_dir = run_dir if rank == 0 else None  # only rank 0 logs and checkpoints
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, log_dir)
        start = 0
        if resume is not None:
            load_checkpoint(runner, checkpoint)
            if rank == 0:
                record_resume(run_dir, checkpoint, resume_overrides, sys.argv)
                # what the next checkpoints train under; the earlier ones keep theirs
                resumed_from = checkpoint_iteration(checkpoint)
                record_interface(run_dir, task, run.env, run.agent.clip_actions, resumed_from=resumed_from)
                record_randomization(run_dir, run.env, run.settings["physics"], resumed_from=resumed_from)
            start = runner.current_learning_iteration + 1
            runner.current_learning_iteration = start
            continue_env_schedules(env, start, run.agent.num_steps_per_env)
            print(f"resuming {run_dir} from {checkpoint.name} at iteration {start}/{run.agent.max_iterations}")
        remaining = run.agent.max_iterations - start
        if remaining > 0:
            envs = f"{run.env.scene.num_envs} envs" + (f" x {size} ranks" if size > 1 else "")
            print(
                f"training {task}: {envs} on {run.settings['device']} ({run.settings['physics']}), "
                f"{remaining} iterations -> {log_dir}"
            )
            runner.learn(num_learning_iterations=remaining, init_at_random_ep_len=resume is None)
        else:
            print(f"{run_dir} already finished {run.agent.max_iterations} iterations; raise agent.max_iterations")
        env.close()
    return run_dir
