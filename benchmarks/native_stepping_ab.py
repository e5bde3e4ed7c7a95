"""Native stepping time of two versions of the C stepping routine (``tasks/physics_native_batch.c``), side by side.

Both versions are compiled and loaded into one process; one env, driven by a trained policy (so the worlds are
in the states training sees; without ``--checkpoint`` zero actions hold every robot in its default pose), is stepped
in alternating blocks of 10 env steps, each block's ``NativeBatch.step`` calls timed with one version or the other.
Alternating in one process keeps a shared, noisy machine's drift out of the ratio. Also reported: the mean contacts
and constraint rows per world, which the solver's cost grows with.

    git show <rev>:tasks/physics_native_batch.c > /tmp/old.c
    .venv/bin/python benchmarks/native_stepping_ab.py /tmp/old.c --checkpoint <run>/model_1000.pt \\
        --task Sim2Real-Velocity-Rough-Go2-v0 'agent.critic.hidden_dims=[128,128,128]'
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the sim2real CLI does

from sim2real.cli import DEFAULT_TASK  # noqa: E402


def measure(args: argparse.Namespace) -> dict:
    import torch

    from sim2real.config import load_task
    from sim2real.tasks import physics_native
    from sim2real.train import make_env, make_runner, seed_everything, simulation

    libs = {name: physics_native.build_library(Path(path)) for name, path in (("old", args.old), ("new", args.new))}
    seconds, calls = dict.fromkeys(libs, 0.0), dict.fromkeys(libs, 0)
    contacts, rows = [], []  # per-world means after each timed step: what the solver works on
    run = load_task(args.task, [f"env.scene.num_envs={args.num_envs}", *args.overrides])
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        if args.checkpoint:
            runner = make_runner(env, run, log_dir=None)
            runner.load(args.checkpoint)
            policy = runner.get_inference_policy()
        else:
            policy = lambda obs: torch.zeros(env.num_envs, env.num_actions)  # noqa: E731
        native = env.unwrapped.sim.physics_manager._solver.native
        step, current = physics_native.NativeBatch.step, ["old"]

        def timed_step(batch) -> None:
            start = time.perf_counter()
            step(batch)
            seconds[current[0]] += time.perf_counter() - start
            calls[current[0]] += 1
            contacts.append(batch.ncon_world.mean())
            rows.append(batch.nefc_world.mean())

        native.step = timed_step.__get__(native)
        obs = env.get_observations()
        with torch.no_grad():
            for block in range(-args.warmup_blocks, args.blocks):
                current[0] = "old" if block % 2 == 0 else "new"
                native._lib = libs[current[0]]
                for _ in range(10):
                    obs, *_ = env.step(policy(obs))
                if block < 0:  # warm-up: the policy walks into its states, nothing counted
                    seconds.update(dict.fromkeys(seconds, 0.0))
                    calls.update(dict.fromkeys(calls, 0))
                    contacts.clear()
                    rows.clear()
        env.close()
    us = {name: 1e6 * seconds[name] / calls[name] / args.num_envs * run.env.decimation for name in libs}
    return {
        "task": args.task,
        "checkpoint": args.checkpoint,
        "num_envs": args.num_envs,
        "overrides": args.overrides,
        "native_us_per_env_step": {name: round(value, 1) for name, value in us.items()},
        "new_over_old": round(us["new"] / us["old"], 3),
        "contacts_per_world": round(float(np.mean(contacts)), 2),
        "constraint_rows_per_world": round(float(np.mean(rows)), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", help="the C source to compare against (e.g. from git show)")
    parser.add_argument("--new", default=str(Path(__file__).resolve().parents[1] / "tasks" / "physics_native_batch.c"))
    parser.add_argument("--checkpoint", help="a training checkpoint of the task (model_N.pt); default: zero actions")
    parser.add_argument("--task", default=DEFAULT_TASK)
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--blocks", type=int, default=30, help="timed blocks of 10 env steps, alternating versions")
    parser.add_argument("--warmup-blocks", type=int, default=10)
    parser.add_argument("--out", help="write the result as JSON here")
    parser.add_argument("overrides", nargs="*", help="config overrides, as for `sim2real train`")
    args = parser.parse_intermixed_args()  # overrides may follow the options
    result = measure(args)
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
