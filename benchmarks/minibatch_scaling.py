"""Experiment: fixed minibatch COUNT vs fixed minibatch SIZE as the number of envs grows (issue: 1M-env PPO recipe).

Trains Go2 flat for the same env-step budget at each env count under both settings, then plots mean reward
against env steps and against wall-clock. Fixed count keeps ``algorithm.num_mini_batches=4`` (minibatches grow
with envs); fixed size keeps ``agent.minibatch_size=384`` (the 64-env minibatch; more envs -> more minibatches,
same learning rate), as in arXiv 2603.06009. At 64 envs the two settings are the same run.

    .venv/bin/python benchmarks/minibatch_scaling.py --budget 2e6 --out docs/minibatch_scaling
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

MINIBATCH_SIZE = 384  # 64 envs x 24 steps / 4 minibatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--budget", type=float, default=1.5e6, help="env steps per run")
    parser.add_argument("--log-root", type=Path, default=Path("logs/minibatch_scaling"))
    parser.add_argument("--out", type=Path, default=Path("docs/minibatch_scaling"), help="PNG/JSON path stem")
    parser.add_argument("overrides", nargs="*", help="extra overrides for every run, e.g. physics=newton_cpu")
    args = parser.parse_args()

    from sim2real.curves import plot_runs, read_scalars

    runs: dict[str, Path] = {}
    for num_envs in args.num_envs:
        iterations = max(1, round(args.budget / (num_envs * 24)))
        settings = {"fixed count": [], "fixed size": [f"agent.minibatch_size={MINIBATCH_SIZE}"]}
        for label, extra in settings.items():
            if num_envs * 24 // 4 == MINIBATCH_SIZE and label == "fixed size":
                continue  # identical to the fixed-count run
            name = f"{num_envs}envs_{label.replace(' ', '_')}"
            cmd = [
                sys.executable,
                "-m",
                "sim2real.cli",
                "train",
                "--log-root",
                str(args.log_root),
                f"env.scene.num_envs={num_envs}",
                f"agent.max_iterations={iterations}",
                "agent.save_interval=1000",
                f"run_name={name}",
                "physics=native_mujoco_cpu",
                *extra,
                *args.overrides,
            ]
            print(" ".join(cmd[2:]), flush=True)
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            (run_dir,) = sorted((args.log_root / "go2_flat").glob(f"*_{name}"))[-1:]
            runs[f"{num_envs} envs, {label}"] = run_dir
    plot_runs(runs, args.out.with_suffix(".png"))
    summary = {}
    for label, run_dir in runs.items():
        _, seconds, rewards = read_scalars(run_dir, "Train/mean_reward")
        summary[label] = {
            "final_reward": round(sum(rewards[-5:]) / len(rewards[-5:]), 2),
            "wall_clock_min": round(seconds[-1] / 60, 1),
            "run": str(run_dir),
        }
    args.out.with_suffix(".json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
