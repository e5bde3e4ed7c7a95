"""cProfile of the Go2 main job's PPO update (256 envs, defaults): where the learning half of an iteration goes.

.venv/bin/python benchmarks/profile_update.py   # 2 warm-up iterations, then 3 profiled updates
"""

import cProfile
import os
import pstats

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the sim2real CLI does
from sim2real.config import load_task  # noqa: E402
from sim2real.train import make_env, make_runner, seed_everything, simulation  # noqa: E402

run = load_task("Sim2Real-Velocity-Flat-Go2-v0", [])
seed_everything(run.env.seed)
with simulation(run):
    env = make_env(run)
    runner = make_runner(env, run, log_dir=None)
    runner.learn(2)
    prof = cProfile.Profile()
    inner = runner.alg.update

    def update():
        prof.enable()
        try:
            return inner()
        finally:
            prof.disable()

    runner.alg.update = update
    runner.learn(3)
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(25)
    env.close()
