"""Convert the robots' MJCF descriptions to the USD files Isaac Lab loads.

Rerunnable and offline. The converted files are committed, so users never need the converter;
maintainers rerun this after editing an MJCF:

    python3.12 -m venv .venv-convert && .venv-convert/bin/pip install mujoco-usd-converter==0.8.0
    .venv-convert/bin/python assets/convert.py            # all robots
    .venv-convert/bin/python assets/convert.py go2        # one robot

The converter has its own venv because its USD pins conflict with Isaac Lab's. Before converting,
a stripped copy of the MJCF is written: torque ``motor`` actuators would become extra zero-command
actuators in the USD (Isaac Lab drives joints through its own actuator models), sensors and keyframes are
unsupported, and the root body's ``pos`` is zeroed so the robot spawns where Isaac Lab's init state says.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ASSETS = Path(__file__).resolve().parent
sys.path.insert(0, str(ASSETS.parent))  # the robot registry is plain data: importable from the converter's venv
from sim2real.robots import ROBOTS  # noqa: E402


def strip_mjcf(src: Path, dst: Path) -> None:
    tree = ET.parse(src)
    root = tree.getroot()
    for tag in ("actuator", "sensor", "keyframe"):
        for elem in root.findall(tag):
            root.remove(elem)
    root_body = root.find("worldbody/body")
    if root_body is not None:
        root_body.set("pos", "0 0 0")
    compiler = root.find("compiler")
    if compiler is not None and "meshdir" in compiler.attrib:  # keep meshes resolvable from the temp copy
        compiler.set("meshdir", str((src.parent / compiler.get("meshdir")).resolve()))
    tree.write(dst)


def convert(name: str) -> Path:
    robot_dir = ASSETS / "robots" / name
    out_dir = robot_dir / "usd"
    with tempfile.TemporaryDirectory() as tmp:
        stripped = Path(tmp) / f"{name}.xml"
        strip_mjcf(robot_dir / ROBOTS[name].mjcf, stripped)
        converted = Path(tmp) / "out"
        exe = Path(sys.executable).parent / "mujoco_usd_converter"
        subprocess.run(
            [str(exe), "--no-layer-structure", "--no-physics-scene", str(stripped), str(converted)],
            check=True,
        )
        usd_files = sorted(converted.glob("*.usd*"))
        if len(usd_files) != 1:
            raise RuntimeError(f"expected one USD file from the converter, got {usd_files}")
        out_dir.mkdir(exist_ok=True)
        target = out_dir / f"{name}.usdc"
        shutil.copyfile(usd_files[0], target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()[:16]
    print(f"{name}: wrote {target.relative_to(ASSETS.parent)} (sha256 {digest})")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("robots", nargs="*", choices=[*ROBOTS, []], help="robots to convert (default: all)")
    for name in parser.parse_args().robots or ROBOTS:
        convert(name)


if __name__ == "__main__":
    main()
