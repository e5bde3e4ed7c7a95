"""Two or more policies' full sim-to-sim checks side by side: per segment, the nominal robot's tracking (measured /
commanded on the main axis, and the mean error there) and the randomised episodes' mean error, plus survival; the
way to decide whether a new policy is at least as good as the shipped one.

    .venv/bin/python benchmarks/compare_checks.py \
        --policy shipped assets/policies/go2_flat/sim2sim/nominal assets/policies/go2_flat/sim2sim/randomized \
        --policy seed43 <keep>/model_599/sim2sim <keep>/model_599/sim2sim_randomized
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sim2real_deploy.sim2sim.config import AXES


def load(report_dir: Path) -> dict:
    return json.loads((report_dir / "report.json").read_text())


def segment_rows(report: dict) -> dict[str, tuple[float | None, float]]:
    """Segment name -> (measured / commanded on the main axis, None for standing; mean error on that axis, or the
    mean planar speed error while standing)."""
    rows = {}
    for seg in report["segments"]:
        command = seg["command"]
        if not seg["episodes"]:
            continue
        if any(command):
            axis = max(range(3), key=lambda a: abs(command[a]))
            ratio = seg["measured_mean"][AXES[axis]] / command[axis]
            rows[seg["name"]] = (ratio, seg["err_mean"][AXES[axis]])
        else:
            rows[seg["name"]] = (None, seg["err_mean"]["vx"] + seg["err_mean"]["vy"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--policy", nargs=3, action="append", required=True, metavar=("LABEL", "NOMINAL_DIR", "RANDOMIZED_DIR")
    )
    args = parser.parse_args()
    checks = [(label, load(Path(nominal)), load(Path(randomized))) for label, nominal, randomized in args.policy]
    print("segment          " + "".join(f"{label:>34}" for label, _, _ in checks))
    print("                 " + "".join(f"{'nominal % / err, randomised err':>34}" for _ in checks))
    names = [seg["name"] for seg in checks[0][1]["segments"]]
    tables = [(segment_rows(nominal), segment_rows(randomized)) for _, nominal, randomized in checks]
    for name in names:
        cells = []
        for nominal, randomized in tables:
            ratio, error = nominal.get(name, (None, float("nan")))
            shown = "  -  " if ratio is None else f"{ratio:5.0%}"
            cells.append(f"{shown} / {error:.3f}, {randomized.get(name, (None, float('nan')))[1]:.3f}")
        print(f"{name:<17}" + "".join(f"{cell:>34}" for cell in cells))
    verdicts = [
        f"{'pass' if n['passed'] else 'FAIL'} / {r['survival_rate']:.0%} {'pass' if r['passed'] else 'FAIL'}"
        for _, n, r in checks
    ]
    print(f"{'verdict':<17}" + "".join(f"{v:>34}" for v in verdicts))


if __name__ == "__main__":
    main()
