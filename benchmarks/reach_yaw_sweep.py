"""Which hand turns a reach policy reaches: the reach check's hold, target by target, as the hand's yaw sweeps a
full turn at fixed positions (hand pointing down, as the Panda reach task samples it).

Each target is held from rest in the default pose for the check's 4 s, behind the slew limit it was trained with;
errors are averaged over the last second (``sim2real_deploy.sim2sim.reach``). A band of yaws that fails at every
position is a turn the wrist cannot make from there, not noise (docs/tasks.md, "The hand turns the wrist can make").

    .venv/bin/python benchmarks/reach_yaw_sweep.py assets/policies/panda_reach/policy.onnx \
        --out docs/reach_yaw_sweep.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sim2real_deploy.commands import quat_from_euler_xyz
from sim2real_deploy.sim2sim.reach import ReachConfig, run_reach


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", type=Path, help="an exported reach policy (.onnx)")
    parser.add_argument("--steps", type=int, default=24, help="yaws over the full turn [-pi, pi)")
    parser.add_argument(
        "--positions", type=float, nargs="+", default=[0.5, 0.18, 0.4, 0.5, -0.18, 0.4], help="x y z triples [m]"
    )
    parser.add_argument("--out", type=Path, help="write the rows as JSON here")
    args = parser.parse_args()
    yaws = np.linspace(-np.pi, np.pi, args.steps, endpoint=False)
    positions = np.array(args.positions).reshape(-1, 3)
    sweep = [(p, yaw) for p in positions for yaw in yaws]
    report = run_reach(
        args.policy, ReachConfig(poses=tuple((*p, *quat_from_euler_xyz(0.0, np.pi, y)) for p, y in sweep))
    )
    rows = []
    for (position, yaw), target in zip(sweep, report["targets"], strict=True):
        rows.append(
            {
                "position": position.tolist(),
                "yaw": round(float(yaw), 4),
                **{k: target[k] for k in ("pos_err", "rot_err", "sway")},
            }
        )
        print(f"{position} yaw {yaw:+.2f}  position {target['pos_err']:.4f} m  turn {target['rot_err']:.3f} rad")
    if args.out:
        args.out.write_text(json.dumps({"policy": str(args.policy), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
