"""Seconds per PPO iteration of training runs, split into collection and learning (TensorBoard ``Perf/*``), side by
side: the way to compare two code revisions on a shared, noisy machine is short runs of each, alternated.

    # A/B of two revisions, 30 iterations each, alternated twice (the tree at A, then at B, ...):
    git checkout A && .venv/bin/sim2real train agent.max_iterations=30 --log-root /tmp/ab/A1
    git checkout B && .venv/bin/sim2real train agent.max_iterations=30 --log-root /tmp/ab/B1   # then A2, B2
    .venv/bin/python benchmarks/iteration_time.py /tmp/ab/A1 /tmp/ab/B1 /tmp/ab/A2 /tmp/ab/B2
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from sim2real.curves import read_scalars

WARM_UP = 5  # the first iterations include start-up effects (allocations, the first resets)


def run_dirs(path: Path) -> list[Path]:
    """``path`` itself if it holds TensorBoard events, else the run folders below it (a ``--log-root``)."""
    if any(path.glob("events.out.tfevents.*")):
        return [path]
    return sorted(p.parent for p in path.glob("**/events.out.tfevents.*"))


def iteration_seconds(run_dir: Path) -> dict[str, float]:
    """Mean collection and learning seconds per iteration after the warm-up, and their sum."""
    means = {}
    for part in ("collection", "learning"):
        _, _, seconds = read_scalars(run_dir, f"Perf/{part}_time")
        means[part] = statistics.mean(seconds[WARM_UP:] or seconds)
    means["total"] = means["collection"] + means["learning"]
    return means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="run folders or --log-root folders")
    args = parser.parse_args()
    print(f"{'run':<60} {'collection':>10} {'learning':>9} {'total':>7}  [s per iteration]")
    for path in args.runs:
        for run_dir in run_dirs(path):
            t = iteration_seconds(run_dir)
            print(f"{str(run_dir)[-60:]:<60} {t['collection']:>10.3f} {t['learning']:>9.3f} {t['total']:>7.3f}")


if __name__ == "__main__":
    main()
