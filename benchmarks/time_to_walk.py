"""Time to walk: the first checkpoint of a training run that passes the full native-MuJoCo sim-to-sim check, and
the wall-clock it took from the start of ``sim2real train`` (start-up included) to that checkpoint being written.

The full check is ``sim2real sim2sim``'s default schedule (every commanded axis and standing still, nominal
physics) and then, if that passes, its randomised mode (``--randomize``: 20 episodes of combined disturbances,
>= 95 % survival). Each checkpoint is exported as a robot gets it (deterministic actor, ONNX), oldest first; the
scan of a run stops at its first pass unless ``--all`` is given. Give one folder per seed of uninterrupted runs
(a resumed run's file times do not measure training time); the summary is a table seed by seed. ``--reuse`` takes
earlier ``--out`` files, so that a checkpoint checked once (e.g. while its run trained) is not checked again.

Time to climb: with ``--terrain <tile file>`` a pass also needs the terrain check (``sim2real sim2sim --terrain``)
on every tile, nominal and then randomised; the terrain check runs on every scanned checkpoint.

    .venv/bin/sim2real train seed=1   # the main job: Go2 flat, 256 envs, a checkpoint every 50 iterations
    .venv/bin/python benchmarks/time_to_walk.py logs/go2_flat/<run seed 1> <run seed 2> ... --every 100 \
        --out docs/time_to_walk.json --plot docs/time_to_walk.png
    .venv/bin/python benchmarks/time_to_walk.py logs/go2_rough/<run> --terrain assets/terrain/go2_rough.npz
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from exported import export_checkpoint

from sim2real_deploy.sim2sim.config import AXES


def checkpoints(run_dir: Path, every: int, start: int = 0) -> list[tuple[int, Path]]:
    """Every ``every``-th checkpoint from ``start`` on, and the run's last one (``model_<max_iterations - 1>.pt``)."""
    found = sorted(
        (int(m.group(1)), p) for p in run_dir.glob("model_*.pt") if (m := re.fullmatch(r"model_(\d+)\.pt", p.name))
    )
    last = found[-1][0] if found else None
    return [(it, p) for it, p in found if it > 0 and it >= start and (it % every == 0 or it == last)]


def started_at(run_dir: Path) -> float:
    """Unix time at which ``sim2real train`` started the run (before Isaac Lab start-up)."""
    return datetime.fromisoformat(json.loads((run_dir / "run.json").read_text())["started_at"]).timestamp()


def minutes_since_start(run_dir: Path, checkpoint: Path) -> float:
    return (checkpoint.stat().st_mtime - started_at(run_dir)) / 60


def check(checkpoint: Path, work: Path, terrain: Path | None = None, force: bool = False) -> dict:
    """Export ``checkpoint`` in a subprocess (one Isaac Lab simulation per process), then run the full check, and
    with ``terrain`` the terrain check on its tiles too."""
    from sim2real_deploy.sim2sim import RANDOMIZED_CONFIG, Sim2SimConfig, run_sim2sim

    onnx = export_checkpoint(checkpoint, work / checkpoint.stem / "policy.onnx", force)
    nominal = run_sim2sim(onnx, Sim2SimConfig(out_dir=str(onnx.parent / "sim2sim")))
    row = {"policy": str(onnx), "nominal_passed": nominal["passed"], "nominal_failed": nominal["failed"]}
    row["tracking_ratio"] = tracking_ratios(nominal)
    if nominal["passed"]:
        randomised = run_sim2sim(onnx, replace(RANDOMIZED_CONFIG, out_dir=str(onnx.parent / "sim2sim_randomized")))
        row |= {"randomized_survival": randomised["survival_rate"], "randomized_failed": randomised["failed"]}
    row["passed"] = nominal["passed"] and not row.get("randomized_failed", ["not run"])
    if terrain is not None:
        row |= check_terrain(onnx, terrain)
        row["passed"] = row["passed"] and row["terrain_passed"]
    return row


def check_terrain(onnx: Path, terrain: Path) -> dict:
    """The terrain check on every tile, nominal and then, if every tile passes, randomised."""
    from sim2real_deploy.sim2sim import run_terrain, terrain_config

    row = {}
    for mode, randomize in (("terrain", False), ("terrain_randomized", True)):
        cfg = replace(terrain_config(str(terrain), randomize), out_dir=str(onnx.parent / mode))
        report = run_terrain(onnx, cfg)
        row[f"{mode}_failed"] = [tile["tile"] for tile in report["tiles"] if not tile["passed"]]
        row[f"{mode}_speed_ratio"] = {tile["tile"]: tile["speed_ratio"] for tile in report["tiles"]}
        if not report["passed"]:
            break
    row["terrain_passed"] = "terrain_randomized_failed" in row and not row["terrain_randomized_failed"]
    return row


def tracking_ratios(report: dict) -> dict[str, float | None]:
    """Measured / commanded velocity on each moving segment's main axis (None after a fall)."""
    ratios = {}
    for row in report["segments"]:
        command = row["command"]
        if any(command):
            axis = max(range(3), key=lambda a: abs(command[a]))
            ratios[row["name"]] = (
                round(row["measured_mean"][AXES[axis]] / command[axis], 2) if row["episodes"] else None
            )
    return ratios


def plot(runs: list[dict], out: Path, limit_min: float = 30.0) -> None:
    """Mean episode reward against wall-clock since each run started, every checked checkpoint marked pass/fail."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sim2real.curves import read_scalars

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, entry in enumerate(runs):
        run_dir, results = Path(entry["run"]), entry["checked"]
        _, seconds, rewards = read_scalars(run_dir, "Train/mean_reward", since=started_at(run_dir))
        minutes = [s / 60 for s in seconds]
        ax.plot(minutes, rewards, color=f"C{k}", lw=1, alpha=0.7, label=f"seed {entry['seed']}: mean episode reward")
        for r in results:
            reward = rewards[min(range(len(minutes)), key=lambda i: abs(minutes[i] - r["minutes"]))]
            ax.scatter(r["minutes"], reward, color="tab:green" if r["passed"] else "tab:red", zorder=3, s=18)
        if first := entry["first_pass"]:
            ax.axvline(first["minutes"], color=f"C{k}", ls="--", lw=1)
    ax.scatter([], [], color="tab:green", label="checkpoint passes the full check")
    ax.scatter([], [], color="tab:red", label="fails")
    ax.axvline(limit_min, color="0.6", ls=":", lw=1)
    ax.set_xlabel("wall-clock since `sim2real train` started [min]")
    ax.set_ylabel("mean episode reward")
    ax.legend(loc="upper left", fontsize="small")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def earlier_rows(files: list[Path]) -> dict[tuple[str, int], dict]:
    """Checked rows of earlier ``--out`` files, by (run folder, iteration): a checkpoint is checked once."""
    rows = {}
    for file in files:
        for run in json.loads(file.read_text())["runs"]:
            rows |= {(run["run"], row["iteration"]): row for row in run["checked"]}
    return rows


def scan(
    run: Path,
    every: int,
    start: int,
    scan_all: bool,
    keep: Path | None,
    earlier: dict[tuple[str, int], dict],
    terrain: Path | None = None,
    force: bool = False,
) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        work = keep / run.name if keep else Path(tmp)
        for iteration, path in checkpoints(run, every, start):
            row = earlier.get((str(run), iteration))
            if row is None:
                row = {"iteration": iteration, "minutes": round(minutes_since_start(run, path), 1)}
                row |= check(path, work, terrain, force)
            results.append(row)
            verdict = "PASS" if row["passed"] else ("nominal only" if row["nominal_passed"] else "fail")
            survival = row.get("randomized_survival")
            print(
                f"{run.name} iteration {iteration:5d} {row['minutes']:6.1f} min  {verdict:<12}"
                f"{'' if survival is None else f' randomised survival {survival:.0%}'}  {row['tracking_ratio']}"
                f"{terrain_summary(row)}",
                flush=True,
            )
            if row["passed"] and not scan_all:
                break
    return results


def terrain_summary(row: dict) -> str:
    if "terrain_failed" not in row:
        return ""
    failed = row.get("terrain_randomized_failed", row["terrain_failed"])
    mode = "randomised" if "terrain_randomized_failed" in row else "nominal"
    return f"  terrain ({mode}) failed: {', '.join(failed) or 'none'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", type=Path, nargs="+", help="training run folders (one per seed)")
    parser.add_argument("--every", type=int, default=100, help="check every N-th iteration's checkpoint")
    parser.add_argument("--start", type=int, default=0, help="skip checkpoints before this iteration")
    parser.add_argument("--all", action="store_true", help="check every checkpoint, not only up to the first pass")
    parser.add_argument("--keep", type=Path, help="keep the exported policies and reports under this folder")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--plot", type=Path, help="draw the reward curves with each checked checkpoint here (PNG)")
    parser.add_argument(
        "--reuse", type=Path, nargs="+", default=[], help="earlier --out files: their checkpoints are not checked again"
    )
    parser.add_argument(
        "--terrain",
        type=Path,
        help="a tile file (assets/terrain/<robot>_rough.npz): a pass also needs the terrain check, nominal and "
        "randomised (time to climb)",
    )
    parser.add_argument(
        "--force", action="store_true", help="export runs that today's task config no longer matches (as trained)"
    )
    args = parser.parse_args()
    earlier = earlier_rows(args.reuse)

    runs = []
    for run in args.runs:
        results = scan(run, args.every, args.start, args.all, args.keep, earlier, args.terrain, args.force)
        first = next((r for r in results if r["passed"]), None)
        seed = json.loads((run / "run.json").read_text()).get("settings", {}).get("seed")
        runs.append({"run": str(run), "seed": seed, "first_pass": first, "checked": results})
    print("\n| seed | first full pass | minutes | randomised survival |\n|---:|---:|---:|---:|")
    for r in runs:
        f = r["first_pass"]
        cells = (f["iteration"], f["minutes"], f"{f['randomized_survival']:.0%}") if f else ("none", "-", "-")
        print(f"| {r['seed']} | {' | '.join(map(str, cells))} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"machine": machine(), "runs": runs}, indent=2) + "\n")
    if args.plot:
        plot(runs, args.plot)


def machine() -> str:
    import os
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} logical cores"


if __name__ == "__main__":
    main()
