"""Env-steps/s of a task on this machine: stepping alone (random actions) and full PPO training iterations.

Each env count runs in its own process. Stepping excludes the first steps (Warp kernel compilation); training
times whole rsl-rl iterations (rollout + PPO update) after one warm-up iteration.

    .venv/bin/python benchmarks/throughput.py                       # Go2 flat, 64/256/1024 envs, CPU
    .venv/bin/python benchmarks/throughput.py --num-envs 4096 device=cuda:0 --out gpu.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default=DEFAULT_TASK)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--steps", type=int, default=50, help="timed env steps per env count")
    parser.add_argument("--iterations", type=int, default=2, help="timed PPO iterations per env count")
    parser.add_argument("--out", help="write the results as JSON here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("overrides", nargs="*", help="config overrides, as for `sim2real train`")
    args = parser.parse_args()
    if args.child is not None:
        print("RESULT " + json.dumps(measure(args.task, args.child, args.steps, args.iterations, args.overrides)))
        return
    from sim2real.runlog import machine_description

    results = []
    for n in args.num_envs:
        cmd = [
            sys.executable,
            __file__,
            "--task",
            args.task,
            "--child",
            str(n),
            "--steps",
            str(args.steps),
            "--iterations",
            str(args.iterations),
            *args.overrides,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        result = json.loads(lines[-1][7:]) if lines else {"num_envs": n, "error": proc.stderr[-1500:]}
        results.append(result)
        print(json.dumps(result), flush=True)
    report = {"task": args.task, "machine": machine_description(), "overrides": args.overrides, "results": results}
    print(
        f"\n{args.task} on {report['machine']}\n| envs | stepping env-steps/s | training env-steps/s |\n|---|---|---|"
    )
    for r in results:
        print(
            f"| {r['num_envs']} | {r.get('stepping_env_steps_per_s', 'error')} | "
            f"{r.get('training_env_steps_per_s', 'error')} |"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
