"""What the friction cone costs and changes: the Go2 MJCF with each (cone, impratio), in native MuJoCo.

For each setting the same policy runs the default sim-to-sim schedule from the same MJCF (only ``<option>``
edited). Reports the physics time per step in that walking contact regime (one thread, mj_step only) and the
verdict with the tracking ratio of every moving segment. Training, the check and the ROS bridge all use the
robot MJCF's cone (the Go2's: elliptic, impratio 100); ``cone=pyramidal`` trains with the cheaper one.

    .venv/bin/python benchmarks/cone_cost.py assets/policies/go2_flat/policy.onnx --out docs/cone_cost.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import tempfile
import time
from pathlib import Path

import mujoco

from sim2real_deploy.mujoco_robot import MujocoRobot, find_mjcf
from sim2real_deploy.policy_file import read_metadata
from sim2real_deploy.sim2sim import Sim2SimConfig, run_sim2sim
from sim2real_deploy.sim2sim.config import AXES

SETTINGS = (("elliptic", 100.0), ("elliptic", 1.0), ("pyramidal", 100.0), ("pyramidal", 1.0))


def with_option(mjcf: Path, cone: str, impratio: float, folder: Path) -> Path:
    """A copy of the MJCF beside the original (its mesh paths stay valid) with only cone and impratio changed."""
    text, found = re.subn(r"<option[^>]*/>", f'<option cone="{cone}" impratio="{impratio:g}" />', mjcf.read_text())
    if found != 1:
        raise SystemExit(f"{mjcf}: expected one self-closing <option/>, found {found}")
    path = mjcf.parent / f".{mjcf.stem}_{cone}_{impratio:g}_{folder.name}.xml"
    path.write_text(text)
    return path


def timed_check(policy: Path, mjcf: Path) -> tuple[dict, float]:
    """The default check's report and its mean mj_step time [us] (the policy walking the schedule)."""
    total, count = 0.0, 0
    original = mujoco.mj_step

    def timed(model, data, *args):
        nonlocal total, count
        start = time.perf_counter()
        original(model, data, *args)
        total += time.perf_counter() - start
        count += 1

    mujoco.mj_step = timed
    try:
        report = run_sim2sim(policy, Sim2SimConfig(mjcf=str(mjcf)))
    finally:
        mujoco.mj_step = original
    return report, 1e6 * total / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    meta = read_metadata(args.policy)
    mjcf = find_mjcf(meta.raw["robot"]["mjcf"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cone, impratio in SETTINGS:
            path = with_option(mjcf, cone, impratio, Path(tmp))
            try:
                MujocoRobot.from_metadata(meta, path)  # compiles
                report, us = timed_check(args.policy, path)
            finally:
                path.unlink()
            ratios = {
                row["name"]: {
                    a: round(row["measured_mean"][a] / c, 3) for a, c in zip(AXES, row["command"], strict=True) if c
                }
                for row in report["segments"]
                if row["episodes"] and any(row["command"])
            }
            rows.append(
                {
                    "cone": cone,
                    "impratio": impratio,
                    "mj_step_us": round(us, 2),
                    "passed": report["passed"],
                    "failed": report["failed"],
                    "tracking_ratio": ratios,
                }
            )
            print(
                f"{cone:>9} impratio {impratio:>5g}: mj_step {us:6.1f} us, {'PASS' if report['passed'] else 'FAIL'}"
                f"  {'; '.join(report['failed'])}"
            )
    if args.out:
        result = {
            "policy": str(args.policy),
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
            "settings": rows,
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
