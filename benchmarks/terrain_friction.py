"""The terrain check at fixed floor frictions: which tiles a policy fails because its feet slip, and which it fails
whatever the friction. The nominal check runs at the robot MJCF's own foot friction (the Go2's 0.4, the bottom of its
training range); a 0.36 grade needs 0.36 just to stand on, so a steep slope there is near the friction limit.

    .venv/bin/python benchmarks/terrain_friction.py assets/policies/go2_rough/policy.onnx \
        --terrain assets/terrain/go2_rough.npz --tiles slope_0.9,slope_inv_0.9,stairs_inv_0.9,stairs_0.9 \
        --friction 0.4 0.5 0.6 0.8 1.0 --out docs/terrain_friction_go2_rough.json
    (and --friction 0.4 0.6 0.8 1.0 --randomize --out docs/terrain_friction_go2_rough_randomized.json)

Each friction is one nominal episode per tile, every other parameter the MJCF's (deterministic); ``--randomize``
runs the randomised check's episodes instead, everything but the friction perturbed as there.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from sim2real.runlog import machine_description
from sim2real_deploy.sim2sim.config import terrain_config
from sim2real_deploy.sim2sim.run import run_terrain


def sweep(policy: str, terrain: str, tiles: list[str] | None, frictions: list[float], randomize: bool) -> list[dict]:
    """One terrain check per friction: each tile's pass, survival and forward speed over the command."""
    rows = []
    for mu in frictions:
        cfg = terrain_config(terrain, randomize)
        cfg = replace(cfg, randomization=replace(cfg.randomization, friction=(mu, mu)))
        report = run_terrain(policy, cfg, tiles)
        rows.append({"friction": mu, "tiles": report["tiles"]})
    return rows


def _cell(tile: dict) -> str:
    verdict = "pass" if tile["passed"] else "FAIL"
    return f"{100 * (tile['speed_ratio'] or 0):>18.0f} % {tile['survival_rate']:>6.0%} {verdict:>5}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported policy (.onnx)")
    parser.add_argument("--terrain", required=True, help="tile file (sim2real terrain-tiles)")
    parser.add_argument("--tiles", help="comma-separated tile names (default: all)")
    parser.add_argument("--friction", type=float, nargs="+", default=[0.4, 0.6, 0.8, 1.0])
    parser.add_argument("--randomize", action="store_true", help="the randomised check's episodes at each friction")
    parser.add_argument("--out", help="JSON file for the table")
    args = parser.parse_args()
    tiles = args.tiles.split(",") if args.tiles else None
    rows = sweep(args.policy, args.terrain, tiles, args.friction, args.randomize)
    names = [t["tile"] for t in rows[0]["tiles"]]
    print("friction " + "".join(f"{name + ' (speed, survival)':>34}" for name in names))
    for row in rows:
        cells = "".join(_cell(t) for t in row["tiles"])
        print(f"{row['friction']:>8} {cells}")
    if args.out:
        result = {"policy": args.policy, "terrain": args.terrain, "randomize": args.randomize, "rows": rows}
        result["machine"] = machine_description()
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
