"""Where a CPU training iteration's time goes: microseconds per env-step in each part of the loop, for a task (Go2
flat by default, any physics preset) or for the bare native-MuJoCo + PPO loop of ``bare_native_ppo.py``.

Wraps the loop's functions with timers (nested parts are included in their parents: ``native`` inside
``solver_step`` inside ``sim_step`` inside ``env_step``), runs 2 warm-up and N timed PPO iterations.

    .venv/bin/python benchmarks/profile_training.py task --num-envs 1024
    .venv/bin/python benchmarks/profile_training.py bare --num-envs 1024
    .venv/bin/python benchmarks/profile_training.py task --num-envs 1024 physics=newton_cpu
    .venv/bin/python benchmarks/profile_training.py task --task Sim2Real-Velocity-Rough-Go2-v0 --num-envs 256
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the sim2real CLI does
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim2real.cli import DEFAULT_TASK  # noqa: E402

SECONDS: dict[str, float] = collections.defaultdict(float)


def timed(owner, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its wall time to ``SECONDS[label]``."""
    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[label] += time.perf_counter() - start

    setattr(owner, name, wrapper)


def time_runner(runner, iterations: int) -> tuple[float, int]:
    """(seconds, env steps) of ``iterations`` timed PPO iterations after 2 warm-up ones."""
    runner.learn(2)  # warm-up: kernel compilation, first resets
    SECONDS.clear()
    timed(runner.alg, "update", "ppo_update")
    timed(runner.alg, "act", "policy_act")
    start = time.perf_counter()
    runner.learn(iterations)
    return time.perf_counter() - start, iterations * runner.cfg["num_steps_per_env"] * runner.env.num_envs


def profile_task(task: str, num_envs: int, iterations: int, overrides: list[str]) -> tuple[float, int]:
    import newton._src.solvers.mujoco.solver_mujoco as mj_solver
    from isaaclab_newton.physics.newton_manager import NewtonManager

    from sim2real.config import load_task
    from sim2real.tasks import physics_native
    from sim2real.train import make_env, make_runner, seed_everything, simulation

    run = load_task(task, [f"env.scene.num_envs={num_envs}", *overrides])
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, log_dir=None)
        u = env.unwrapped
        timed(env, "step", "env_step")
        timed(u.sim, "step", "sim_step")
        timed(mj_solver.SolverMuJoCo, "step", "solver_step")
        timed(physics_native.NativeBatch, "step", "native")
        timed(mj_solver.SolverMuJoCo, "_update_newton_state", "update_newton_state")
        timed(mj_solver, "eval_fk", "eval_fk")
        timed(mj_solver.SolverMuJoCo, "_update_mjc_data", "update_mjc_data")
        timed(mj_solver.SolverMuJoCo, "_apply_mjc_control", "apply_mjc_control")
        timed(NewtonManager, "_update_sensors", "update_sensors")
        timed(u.scene, "update", "scene_update")
        for name, sensor in u.scene.sensors.items():
            timed(sensor, "update", f"sensor {name}")
        timed(u, "_reset_idx", "reset_idx")
        for manager in ("observation_manager", "reward_manager", "termination_manager", "command_manager"):
            timed(getattr(u, manager), "compute", manager)
        result = time_runner(runner, iterations)
        env.close()
    return result


def profile_bare(num_envs: int, iterations: int) -> tuple[float, int]:
    from bare_native_ppo import bare_runner

    env, runner = bare_runner(num_envs)
    timed(env, "step", "env_step")
    timed(env.runner, "rollout", "native")
    return time_runner(runner, iterations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("loop", choices=("task", "bare"))
    parser.add_argument("--task", default=DEFAULT_TASK, help="task id (loop 'task' only)")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=4, help="timed PPO iterations")
    parser.add_argument("overrides", nargs="*", help="config overrides for the task, as for `sim2real train`")
    args = parser.parse_args()
    if args.loop == "task":
        elapsed, steps = profile_task(args.task, args.num_envs, args.iterations, args.overrides)
    else:
        elapsed, steps = profile_bare(args.num_envs, args.iterations)
    name = args.task if args.loop == "task" else "bare loop"
    print(f"\n{name}, {args.num_envs} envs: {steps / elapsed:,.0f} env-steps/s; microseconds per env-step:")
    print(f"  {'total':22s} {1e6 * elapsed / steps:7.1f}")
    for label, seconds in sorted(SECONDS.items(), key=lambda kv: -kv[1]):
        print(f"  {label:22s} {1e6 * seconds / steps:7.1f}")


if __name__ == "__main__":
    main()
