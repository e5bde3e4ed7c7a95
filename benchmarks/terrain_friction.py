"""The terrain check at fixed floor frictions and forward speeds: which tiles a policy fails because its feet slip,
which it fails whatever the friction, and whether a tile it is slow on at the check's 0.5 m/s is one it crosses at
another speed. The nominal check runs at the robot MJCF's own foot friction (the Go2's 0.4, the bottom of its
training range); a 0.36 grade needs 0.36 just to stand on, so a steep slope there is near the friction limit.

    .venv/bin/python benchmarks/terrain_friction.py assets/policies/go2_rough/policy.onnx \
        --terrain assets/terrain/go2_rough.npz --tiles slope_0.9,slope_inv_0.9,stairs_inv_0.9,stairs_0.9 \
        --friction 0.4 0.5 0.6 0.8 1.0 --out docs/terrain_friction_go2_rough.json
    (and --friction 0.4 0.6 0.8 1.0 --randomize --out docs/terrain_friction_go2_rough_randomized.json)

    .venv/bin/python benchmarks/terrain_friction.py assets/policies/go2_rough/policy.onnx \
        --terrain assets/terrain/go2_rough.npz --tiles slope_0.9,slope_inv_0.9,stairs_inv_0.9 \
        --friction 0.4 --speed 0.3 0.5 0.8 1.0 --out docs/terrain_speed_go2_rough.json

Each friction is one nominal episode per tile, every other parameter the MJCF's (deterministic); ``--randomize``
runs the randomised check's episodes instead, everything but the friction perturbed as there. ``--speed`` commands
other forward speeds than the check's 0.5 m/s, each over the check's 3.5 m from the start point: the tile's steep part
begins 1.5 m out, past the platform, so a slower command walks for longer (11.7 s at 0.3 m/s) to reach as far.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from sim2real.runlog import machine_description
from sim2real_deploy.sim2sim.config import TERRAIN_SCHEDULE, Segment, terrain_config
from sim2real_deploy.sim2sim.run import run_terrain


def sweep(
    policy: str, terrain: str, tiles: list[str] | None, frictions: list[float], speeds: list[float], randomize: bool
) -> list[dict]:
    """One terrain check per friction and speed: each tile's pass, survival and forward speed over the command."""
    rows = []
    for mu in frictions:
        for speed in speeds:
            cfg = terrain_config(terrain, randomize)
            cfg = replace(cfg, randomization=replace(cfg.randomization, friction=(mu, mu)), schedule=_schedule(speed))
            report = run_terrain(policy, cfg, tiles)
            rows.append({"friction": mu, "speed": speed, "tiles": report["tiles"]})
    return rows


def _schedule(speed: float) -> tuple[Segment, ...]:
    """The check's stand, then forward at ``speed`` over its distance (the check's own schedule at 0.5 m/s)."""
    stand, forward = TERRAIN_SCHEDULE
    distance = forward.duration * forward.command[0]
    return stand, Segment(f"forward_{speed:g}", distance / speed, (speed, 0.0, 0.0))


def _cell(tile: dict) -> str:
    verdict = "pass" if tile["passed"] else "FAIL"
    return f"{100 * (tile['speed_ratio'] or 0):>18.0f} % {tile['survival_rate']:>6.0%} {verdict:>5}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported policy (.onnx)")
    parser.add_argument("--terrain", required=True, help="tile file (sim2real terrain-tiles)")
    parser.add_argument("--tiles", help="comma-separated tile names (default: all)")
    parser.add_argument("--friction", type=float, nargs="+", default=[0.4, 0.6, 0.8, 1.0])
    parser.add_argument("--speed", type=float, nargs="+", default=[0.5], help="forward commands [m/s] (check: 0.5)")
    parser.add_argument("--randomize", action="store_true", help="the randomised check's episodes at each friction")
    parser.add_argument("--out", help="JSON file for the table")
    args = parser.parse_args()
    tiles = args.tiles.split(",") if args.tiles else None
    rows = sweep(args.policy, args.terrain, tiles, args.friction, args.speed, args.randomize)
    names = [t["tile"] for t in rows[0]["tiles"]]
    print("friction  m/s " + "".join(f"{name + ' (speed, survival)':>34}" for name in names))
    for row in rows:
        cells = "".join(_cell(t) for t in row["tiles"])
        print(f"{row['friction']:>8} {row['speed']:>4} {cells}")
    if args.out:
        result = {"policy": args.policy, "terrain": args.terrain, "randomize": args.randomize, "rows": rows}
        result["machine"] = machine_description()
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
