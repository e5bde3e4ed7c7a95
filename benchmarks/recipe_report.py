"""One recipe experiment as one JSON: each run's training curves (TensorBoard, sampled actions, every 50 iterations)
beside its ``time_to_walk.py`` checks (deterministic actor, native MuJoCo), labelled run by run.

    .venv/bin/python benchmarks/time_to_walk.py RUN --every 100 --all --out checks.json
    .venv/bin/python benchmarks/recipe_report.py --run clock=RUN --checks clock=checks.json \
        --note "what changed, the overrides" --out docs/recipe_<name>.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sim2real.curves import read_scalars
from sim2real.runlog import machine_description

CURVES = {
    "episode_length": "Train/mean_episode_length",
    "error_vel_xy": "Metrics/base_velocity/error_vel_xy",
    "error_vel_yaw": "Metrics/base_velocity/error_vel_yaw",
    "action_std": "Policy/mean_std",
    "gait_contact": "Episode_Reward/gait_contact",
}
CHECK_KEYS = (
    "minutes",
    "nominal_passed",
    "nominal_failed",
    "tracking_ratio",
    "randomized_survival",
    "randomized_failed",
)


def curves(run_dir: Path, every: int = 50) -> dict[str, dict[str, float]]:
    """Each logged curve of ``CURVES`` at every ``every``-th iteration; a tag the run did not log is left out."""
    out = {}
    for key, tag in CURVES.items():
        try:
            iterations, _, values = read_scalars(run_dir, tag)
        except ValueError:  # read_scalars: not logged by this run
            continue
        out[key] = {str(i): round(v, 3) for i, v in zip(iterations, values, strict=True) if i % every == 0}
    return out


def checks(files: list[Path]) -> dict[str, dict]:
    """The checked checkpoints of ``time_to_walk.py`` outputs (one run each), by iteration."""
    rows = {}
    for file in files:
        for row in json.loads(file.read_text())["runs"][0]["checked"]:
            rows[row["iteration"]] = {key: row.get(key) for key in CHECK_KEYS}
    return {str(i): rows[i] for i in sorted(rows)}


def labelled(pairs: list[str]) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for pair in pairs:
        label, sep, path = pair.partition("=")
        if not sep:
            raise SystemExit(f"recipe_report: expected LABEL=PATH, got {pair!r}")
        out.setdefault(label, []).append(Path(path))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, help="LABEL=RUN_DIR, once per run")
    parser.add_argument("--checks", action="append", default=[], help="LABEL=time_to_walk JSON, any number per run")
    parser.add_argument("--note", required=True, help="what the experiment changed, with its overrides")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    runs, found = labelled(args.run), labelled(args.checks)
    if bad := [label for label, dirs in runs.items() if len(dirs) > 1] + sorted(set(found) - set(runs)):
        raise SystemExit(f"recipe_report: labels {bad}: each --checks label needs one --run with the same label")
    report = {"machine": machine_description(), "note": args.note, "training": {}, "checks": {}}
    for label, (run_dir,) in runs.items():
        report["training"][label] = curves(run_dir)
        report["checks"][label] = checks(found.get(label, []))
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
