"""Env-steps/s of a task on this machine: stepping alone (random actions) and full PPO training iterations,
each also as a ratio to the robot's raw physics speed in native MuJoCo on the same machine (the limit).

Each env count runs in its own process. Stepping excludes the first steps (Warp kernel compilation); training
times whole rsl-rl iterations (rollout + PPO update) after one warm-up iteration.

    .venv/bin/python benchmarks/throughput.py                       # Go2 flat, 64/256/1024 envs, CPU
    .venv/bin/python benchmarks/throughput.py --task Sim2Real-Reach-Panda-v0 --num-envs 64 256
    .venv/bin/python benchmarks/throughput.py --task all --num-envs 64 256 --out docs/throughput_tasks.json
    .venv/bin/python benchmarks/throughput.py --num-envs 4096 device=cuda:0 --out gpu.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from sim2real.cli import DEFAULT_TASK


def measure(task: str, num_envs: int, steps: int, iterations: int, overrides: list[str]) -> dict:
    import torch

    from sim2real.config import load_task
    from sim2real.train import make_env, make_runner, seed_everything, simulation

    run = load_task(task, [f"env.scene.num_envs={num_envs}", *overrides])
    seed_everything(run.env.seed)
    device = run.settings["device"]
    with simulation(run):
        env = make_env(run)
        env.reset()
        for _ in range(5):  # warm-up: kernel compilation, first resets
            env.step(torch.rand(num_envs, env.num_actions, device=device) * 2 - 1)
        start = time.perf_counter()
        for _ in range(steps):
            env.step(torch.rand(num_envs, env.num_actions, device=device) * 2 - 1)
        stepping = steps * num_envs / (time.perf_counter() - start)
        runner = make_runner(env, run, log_dir=None)
        runner.learn(1)  # warm-up iteration
        start = time.perf_counter()
        runner.learn(iterations)
        training = iterations * run.agent.num_steps_per_env * num_envs / (time.perf_counter() - start)
        env.close()
    return {
        "num_envs": num_envs,
        "stepping_env_steps_per_s": round(stepping),
        "training_env_steps_per_s": round(training),
        "physics": run.settings["physics"],
        "device": device,
    }


def measure_bare_physics(task: str, num_envs: int, steps: int) -> dict:
    """The task robot's raw physics speed: its MJCF alone in native MuJoCo on all cores, no Isaac Lab, no learning
    (no terrain or objects: the limit of any task with that robot)."""
    import os

    from sim2real.config import load_task

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from native_physics import measure_bare

    robot = load_task(task).env.robot
    return {"robot": robot, **measure_bare(num_envs, steps, nthread=os.cpu_count() or 1, robot=robot)}


def run_child(args: list[str]) -> dict | None:
    """This script in a fresh process with ``args`` (``--child N`` or ``--bare-child N``); its result, None on error."""
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        print(proc.stderr[-1500:], file=sys.stderr)
        return None
    return json.loads(lines[-1][7:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default=DEFAULT_TASK, help="a task id, or 'all' for every registered task")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--steps", type=int, default=50, help="timed env steps per env count")
    parser.add_argument("--iterations", type=int, default=2, help="timed PPO iterations per env count")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--bare-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help="config overrides, as for `sim2real train`")
    args = parser.parse_args()
    if args.child is not None:
        print("RESULT " + json.dumps(measure(args.task, args.child, args.steps, args.iterations, args.overrides)))
        return
    if args.bare_child is not None:
        print("RESULT " + json.dumps(measure_bare_physics(args.task, args.bare_child, args.steps)))
        return
    from sim2real.runlog import machine_description
    from sim2real.tasks import TASKS

    tasks = list(TASKS) if args.task == "all" else [args.task]
    machine = machine_description()
    reports = [_measure_task(task, args) for task in tasks]
    print(f"\non {machine} ({' '.join(args.overrides) or 'defaults'})")
    print(
        "| task | envs | stepping env-steps/s | training env-steps/s | native MuJoCo limit | stepping / limit "
        "| training / limit |\n|---|---|---|---|---|---|---|"
    )
    for report in reports:
        for r in report["results"]:
            print(f"| {report['task']} | " + " | ".join(str(r.get(k, "error")) for k in _COLUMNS) + " |")
    if args.out:
        payload = {"machine": machine, "overrides": args.overrides}
        payload |= reports[0] if len(reports) == 1 else {"tasks": reports}
        with open(args.out, "w") as f:
            json.dump(payload, f, indent=2)


_COLUMNS = (
    "num_envs",
    "stepping_env_steps_per_s",
    "training_env_steps_per_s",
    "native_mujoco_limit_env_steps_per_s",
    "stepping_vs_native_limit",
    "training_vs_native_limit",
)


def _measure_task(task: str, args: argparse.Namespace) -> dict:
    """Every env count of one task, each in its own process, with the ratios to the robot's native limit."""
    results = []
    for n in args.num_envs:
        common = ["--task", task, "--steps", str(args.steps), "--iterations", str(args.iterations)]
        result = run_child([*common, "--child", str(n), *args.overrides]) or {"num_envs": n, "error": "see stderr"}
        limit = (run_child([*common, "--bare-child", str(n)]) or {}).get("env_steps_per_s")
        result["native_mujoco_limit_env_steps_per_s"] = limit
        for key in ("stepping", "training"):
            if limit and f"{key}_env_steps_per_s" in result:
                result[f"{key}_vs_native_limit"] = round(result[f"{key}_env_steps_per_s"] / limit, 2)
        results.append(result)
        print(json.dumps({"task": task, **result}), flush=True)
    return {"task": task, "results": results}


if __name__ == "__main__":
    main()
