"""How much of a legs-only humanoid policy's pelvis shake its held joints carry: the sim-to-sim check again with
extra damping on the joints the policy does not command (a G1's waist and arms).

Those joints hold the default pose on their PD alone (the G1 spec: waist Kd 5, arms Kd 1). A real motor driver closes
that loop at kHz rates, where a Kd of 10 (Isaac Lab's G1 arms) is stable; the check and training run the PD
explicitly at the 200 Hz physics rate, where it is not (Kd x dt / I > 2 on the light forearm and wrist: the robot
falls within 1.3 s). So the extra damping goes in as MuJoCo joint damping, which the integrator treats implicitly:
the copy of the robot's MJCF written to ``--out`` differs from it only there, and ``sim2real sim2sim --mjcf`` runs
the policy on it. ``--damping 0`` reproduces the plain check.

    .venv/bin/python benchmarks/held_joint_damping.py assets/policies/g1_flat/policy.onnx --damping 10 --out /tmp/d10
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mujoco

from sim2real_deploy.mujoco_robot import find_mjcf
from sim2real_deploy.policy_file import read_metadata
from sim2real_deploy.sim2sim.cli import main as sim2sim


def damped_mjcf(policy: str, damping: float, out: Path) -> tuple[Path, list[str]]:
    """The policy's robot MJCF with ``damping`` [N m s/rad] added to every held joint, written into ``out``."""
    meta = read_metadata(policy)
    held = [j for j in meta.joint_names if j not in meta.action_joints]
    if not held:
        raise SystemExit(f"{policy}: the policy commands every joint; nothing is held")
    source = find_mjcf(meta.raw["robot"]["mjcf"])
    spec = mujoco.MjSpec.from_file(str(source))
    spec.meshdir = str((source.parent / (spec.meshdir or ".")).resolve())  # the copy lives elsewhere
    for name in held:
        spec.joint(name).damping += damping
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{source.stem}_held_damping_{damping:g}.xml"
    path.write_text(spec.to_xml())
    return path, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy", help="exported legs-only policy (.onnx)")
    parser.add_argument("--damping", type=float, default=10.0, help="added to each held joint [N m s/rad]")
    parser.add_argument("--randomize", action="store_true", help="the check's randomised mode")
    parser.add_argument("--out", type=Path, required=True, help="folder for the damped MJCF and the check's report")
    args = parser.parse_args()
    mjcf, held = damped_mjcf(args.policy, args.damping, args.out)
    print(f"+{args.damping:g} N m s/rad on {len(held)} held joints: {', '.join(held)}")
    check = [args.policy, "--mjcf", str(mjcf), "--out", str(args.out / "check")]
    sys.exit(sim2sim([*check, "--randomize"] if args.randomize else check))


if __name__ == "__main__":
    main()
