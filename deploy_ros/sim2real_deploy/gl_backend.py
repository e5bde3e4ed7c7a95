"""Pick MuJoCo's offscreen GL back-end on a machine without a display, before ``mujoco`` is imported."""

from __future__ import annotations

import os
from pathlib import Path


def default_headless_gl() -> str | None:
    """Without a display and without ``MUJOCO_GL`` set, use EGL where an NVIDIA GPU is present, else OSMesa (CPU;
    Debian/Ubuntu package ``libosmesa6``). Returns what MUJOCO_GL is now. Has no effect once mujoco is imported."""
    if "MUJOCO_GL" not in os.environ and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["MUJOCO_GL"] = "egl" if Path("/dev/nvidia0").exists() else "osmesa"
    return os.environ.get("MUJOCO_GL")
