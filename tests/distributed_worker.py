"""One rank of a 2-process CPU training run, started by torchrun from test_distributed.py.

Trains a tiny Go2 run through the same code path as ``sim2real train`` and saves this rank's final actor
parameters, so the test can check that every rank holds the same network after the gradient all-reduce.
"""

import sys
from pathlib import Path

import torch

from sim2real.config import load_task, world
from sim2real.train import make_env, make_runner, seed_everything, simulation

out = Path(sys.argv[1])
size, rank, _ = world()
run = load_task("Sim2Real-Velocity-Flat-Go2-v0", ["env.scene.num_envs=4", "agent.num_steps_per_env=8"])
seed_everything(run.env.seed)
with simulation(run):
    env = make_env(run)
    runner = make_runner(env, run, log_dir=str(out / "logs") if rank == 0 else None)
    runner.learn(num_learning_iterations=2)
    torch.save(
        {
            "actor": runner.alg.actor.state_dict(),
            "seed": run.env.seed,
            "first_obs": env.get_observations()["policy"][0],
        },
        out / f"rank{rank}.pt",
    )
    env.close()
