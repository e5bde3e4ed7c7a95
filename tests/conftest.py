"""Shared fixtures: real Isaac Lab environments on the CPU (Newton physics, no network, no GPU)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim2real_deploy.gl_backend import default_headless_gl

os.environ.setdefault("WARP_CACHE_PATH", os.path.expanduser("~/.cache/warp"))
default_headless_gl()  # before any test module imports mujoco: the video test renders offscreen

GO2_TASK = "Sim2Real-Velocity-Flat-Go2-v0"
G1_TASK = "Sim2Real-Velocity-Flat-G1-v0"


def g1_with_damped_held_joints():
    """The G1 spec with its held waist and arms at Kd 15 / 10 simulated as implicit joint damping (session 42's
    run; the shipped G1 keeps 5 / 1 explicit)."""
    from dataclasses import replace

    from sim2real.robots import ROBOTS

    g1 = ROBOTS["g1"]
    kd = {"waist_yaw_joint": 15.0, ".*_(shoulder_.*|elbow|wrist_roll)_joint": 10.0}
    groups = tuple(
        replace(g, damping=kd[g.pattern], implicit_damping=True) if g.pattern in kd else g for g in g1.joint_groups
    )
    return replace(g1, joint_groups=groups)


@contextlib.contextmanager
def task_env(task: str, *overrides: str, num_envs: int = 8, configure=None):
    """A task's env wrapped for rsl-rl, built and closed around the block; ``configure(run)`` may edit the config."""
    from sim2real.config import load_task
    from sim2real.train import make_env, seed_everything, simulation

    run = load_task(task, [f"env.scene.num_envs={num_envs}", *overrides])
    if configure is not None:
        configure(run)
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        try:
            yield env
        finally:
            env.close()


def go2_env(*overrides: str, num_envs: int = 8):
    return task_env(GO2_TASK, *overrides, num_envs=num_envs)


@pytest.fixture(scope="module")
def env():
    """One 8-env Go2 env shared by the read-only tests of a module (building one takes seconds)."""
    with go2_env() as wrapped:
        yield wrapped


def run_cli(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """``sim2real <args>`` in a subprocess, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "sim2real.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def documented_terms(doc: Path, section: str, group: str) -> list[tuple[str, int]]:
    """(term, size) rows of one observation group's table in ``## <section>`` of a docs page."""
    text = doc.read_text().split(f"## {section}")[1].split("\n## ")[0]
    table = text.split(f"#### `{group}` group")[1].split("\n#### ")[0]
    return [(name, int(size)) for name, size in re.findall(r"^\| \d+ \| (\w+) \| (\d+) \|", table, flags=re.M)]


def obs_layout(env, group: str) -> list[tuple[str, int]]:
    """(term, size) of every active term of an env's observation group, in order."""
    manager = env.unwrapped.observation_manager
    dims = [d[0] for d in manager.group_obs_term_dim[group]]
    return list(zip(manager.active_terms[group], dims, strict=True))
