"""Time to walk: the first checkpoint of a training run that passes the native-MuJoCo sim-to-sim check, and the
wall-clock it took from the start of ``sim2real train`` (start-up included) to that checkpoint being written.

Each checkpoint is exported as a robot gets it (deterministic actor, ONNX) and run through ``sim2real sim2sim``'s
default schedule, oldest first; the scan stops at the first pass unless ``--all`` is given. Run it on a folder of
one uninterrupted training run (a resumed run's file times do not measure training time).

    .venv/bin/sim2real train          # the main job: Go2 flat, 256 envs, a checkpoint every 50 iterations
    .venv/bin/python benchmarks/time_to_walk.py logs/go2_flat/<run> --every 100 --all \
        --out docs/time_to_walk.json --plot docs/time_to_walk.png
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path


def checkpoints(run_dir: Path, every: int) -> list[tuple[int, Path]]:
    found = (
        (int(m.group(1)), p) for p in run_dir.glob("model_*.pt") if (m := re.fullmatch(r"model_(\d+)\.pt", p.name))
    )
    return sorted((it, p) for it, p in found if it > 0 and it % every == 0)


def started_at(run_dir: Path) -> float:
    """Unix time at which ``sim2real train`` started the run (before Isaac Lab start-up)."""
    return datetime.fromisoformat(json.loads((run_dir / "run.json").read_text())["started_at"]).timestamp()


def minutes_since_start(run_dir: Path, checkpoint: Path) -> float:
    return (checkpoint.stat().st_mtime - started_at(run_dir)) / 60


def check(checkpoint: Path, work: Path) -> dict:
    """Export ``checkpoint`` in a subprocess (one Isaac Lab simulation per process), then run sim2sim on the file."""
    from sim2real_deploy.sim2sim import Sim2SimConfig, run_sim2sim

    onnx = work / checkpoint.stem / "policy.onnx"
    export = [sys.executable, "-m", "sim2real.cli", "export", str(checkpoint), "--out", str(onnx)]
    subprocess.run(export, check=True, capture_output=True, text=True)
    report = run_sim2sim(onnx, Sim2SimConfig(out_dir=str(onnx.parent / "sim2sim")))
    # a segment after a fall has no samples and no errors: None
    segments = report["episodes"][0]["segments"]
    errors = {
        metric: {m["name"]: round(m[metric], 3) if m["samples"] else None for m in segments}
        for metric in ("lin_vel_err_mean", "lin_x_err_mean", "yaw_rate_err_mean")
    }
    return {"passed": report["passed"], "failed": report["failed"], **errors}


def plot(run_dir: Path, results: list[dict], out: Path, limit_min: float = 30.0) -> None:
    """Mean episode reward against wall-clock since the run started, each checked checkpoint marked pass/fail."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sim2real.curves import read_scalars

    _, seconds, rewards = read_scalars(run_dir, "Train/mean_reward", since=started_at(run_dir))
    minutes = [s / 60 for s in seconds]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(minutes, rewards, color="0.4", lw=1, label="mean episode reward (training)")
    for passed, colour, label in ((True, "tab:green", "checkpoint passes sim2sim"), (False, "tab:red", "fails")):
        rows = [r for r in results if r["passed"] == passed]
        reward_at = [rewards[min(range(len(minutes)), key=lambda i: abs(minutes[i] - r["minutes"]))] for r in rows]
        ax.scatter([r["minutes"] for r in rows], reward_at, color=colour, zorder=3, label=label)
    first = next((r for r in results if r["passed"]), None)
    if first:
        ax.axvline(first["minutes"], color="tab:green", ls="--", lw=1)
        ax.annotate(
            f"first pass: iteration {first['iteration']}, {first['minutes']} min",
            (first["minutes"], 0),
            xytext=(5, 5),
            textcoords="offset points",
            color="tab:green",
        )
    ax.axvline(limit_min, color="0.6", ls=":", lw=1)
    ax.set_xlabel("wall-clock since `sim2real train` started [min]")
    ax.set_ylabel("mean episode reward")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="training run folder")
    parser.add_argument("--every", type=int, default=25, help="check every N-th iteration's checkpoint")
    parser.add_argument("--all", action="store_true", help="check every checkpoint, not only up to the first pass")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--plot", type=Path, help="draw the reward curve with each checked checkpoint here (PNG)")
    args = parser.parse_args()

    results = []
    with tempfile.TemporaryDirectory() as work:
        for iteration, path in checkpoints(args.run, args.every):
            row = {"iteration": iteration, "minutes": round(minutes_since_start(args.run, path), 1)}
            row |= check(path, Path(work))
            results.append(row)
            print(
                f"iteration {iteration:5d}  {row['minutes']:6.1f} min  {'PASS' if row['passed'] else 'fail'}  "
                f"{row['lin_vel_err_mean']}",
                flush=True,
            )
            if row["passed"] and not args.all:
                break
    first = next((r for r in results if r["passed"]), None)
    summary = {"run": str(args.run), "first_pass": first, "checked": results}
    print(f"first passing checkpoint: {first['iteration']} after {first['minutes']} min" if first else "no pass")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
    if args.plot:
        plot(args.run, results, args.plot)


if __name__ == "__main__":
    main()
