"""Shared fixtures: real Isaac Lab environments on the CPU (Newton physics, no network, no GPU)."""

from __future__ import annotations

import contextlib
import os

import pytest

os.environ.setdefault("WARP_CACHE_PATH", os.path.expanduser("~/.cache/warp"))

GO2_TASK = "Sim2Real-Velocity-Flat-Go2-v0"


@contextlib.contextmanager
def go2_env(*overrides: str, num_envs: int = 8):
    """A Go2 flat env wrapped for rsl-rl, built and closed around the block."""
    from sim2real.config import load_task
    from sim2real.train import make_env, seed_everything, simulation

    run = load_task(GO2_TASK, [f"env.scene.num_envs={num_envs}", *overrides])
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        try:
            yield env
        finally:
            env.close()


@pytest.fixture(scope="module")
def env():
    """One 8-env Go2 env shared by the read-only tests of a module (building one takes seconds)."""
    with go2_env() as wrapped:
        yield wrapped
