"""Terrain scenes for the sim-to-sim check: a rough task's sub-terrains as MuJoCo heightfields (numpy + MuJoCo).

A tile file (``assets/terrain/<robot>_rough.npz``, written on the training side by ``sim2real terrain-tiles`` from
the task's own terrain generator) holds each tile's heights on the physics' grid. A scene puts one tile under the
robot: the tile's start point (where a training env spawns: on the platform of stairs and slopes, over the highest
point of random ground) at the world origin and z = 0, the tile surrounded by ``PAD`` of flat ground at its edge
heights. Walking forward from the start crosses the tile: down the
pyramid stairs and slopes (their start is the top platform), up the inverted ones, over rough ground and boxes.

Heights follow MuJoCo's heightfield layout (``data[row, col]`` at x = col, y = row) and its triangulation (each cell
split along the diagonal from its (x0, y0) to its (x1, y1) corner), so :class:`TerrainGround` gives the height a
foot stands on, and the fall rule judges the base height above the ground under it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from sim2real_deploy.sim2sim.config import Sim2SimError

HFIELD = "sim2sim_terrain"
PAD = 2.0  # [m] flat ground around the tile, at its edge heights
BASE = 0.1  # [m] the heightfield's solid base below its lowest point


@dataclass(frozen=True)
class TerrainTile:
    """Heights ``z[ix, iy]`` [m] at (ix, iy) * ``spacing`` in the tile frame, and the start point in that frame."""

    name: str
    z: np.ndarray
    spacing: float
    origin: tuple[float, float, float]
    info: dict[str, Any] = field(default_factory=dict)  # type, difficulty, the generator's parameters, its robot

    def padded(self) -> tuple[np.ndarray, float, float]:
        """Heights with ``PAD`` of edge-height ground around, and the world (x, y) of their (0, 0) vertex."""
        cells = round(PAD / self.spacing)
        z = np.pad(self.z, cells, mode="edge")
        return z, -cells * self.spacing - self.origin[0], -cells * self.spacing - self.origin[1]


def load_tiles(path: str | Path) -> dict[str, TerrainTile]:
    """Every tile of a tile file, by name (``<type>_<difficulty>``)."""
    try:
        with np.load(path) as data:
            meta = json.loads(str(data["meta"]))
            arrays = {name: np.asarray(data[name], dtype=np.float64) for name in meta["tiles"]}
    except (OSError, KeyError, ValueError) as exc:
        raise Sim2SimError(f"{path}: not a terrain tile file ({exc}); write one with `sim2real terrain-tiles`") from exc
    spacing = float(meta["horizontal_scale"])
    return {
        name: TerrainTile(name, arrays[name], spacing, tuple(info["origin"]), {**info, "robot": meta.get("robot")})
        for name, info in meta["tiles"].items()
    }


def add_tile(spec: mujoco.MjSpec, tile: TerrainTile) -> None:
    """The tile as the scene's ground: one heightfield geom, start point at the origin, its ground at z = 0."""
    z, x0, y0 = tile.padded()
    z = z - tile.origin[2]
    low, high = float(z.min()), float(z.max())
    rise = max(high - low, 1e-3)
    nx, ny = z.shape
    sx, sy = (nx - 1) * tile.spacing / 2, (ny - 1) * tile.spacing / 2
    spec.add_hfield(
        name=HFIELD,
        size=[sx, sy, rise, BASE],
        nrow=ny,
        ncol=nx,
        userdata=((z.T - low) / rise).ravel().tolist(),  # row = y, col = x
    )
    spec.worldbody.add_geom(
        name=HFIELD,
        type=mujoco.mjtGeom.mjGEOM_HFIELD,
        hfieldname=HFIELD,
        pos=[x0 + sx, y0 + sy, low],
        rgba=[0.45, 0.45, 0.5, 1.0],
    )


class TerrainGround:
    """The terrain height under a point, as MuJoCo collides with the heightfield (the physics triangulation)."""

    def __init__(self, tile: TerrainTile):
        self.z, self.x0, self.y0 = tile.padded()
        self.z = self.z - tile.origin[2]
        self.spacing = tile.spacing

    def __call__(self, x: float, y: float) -> float:
        return float(self.heights(np.array([x]), np.array([y]))[0])

    def heights(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The heights under many points at once (a height scan)."""
        nx, ny = self.z.shape
        u, v = (x - self.x0) / self.spacing, (y - self.y0) / self.spacing
        i, j = np.clip(np.floor(u), 0, nx - 2).astype(int), np.clip(np.floor(v), 0, ny - 2).astype(int)
        fx, fy = np.clip(u - i, 0, 1), np.clip(v - j, 0, 1)
        h00, h10, h01, h11 = self.z[i, j], self.z[i + 1, j], self.z[i, j + 1], self.z[i + 1, j + 1]
        below = h00 + fx * (h10 - h00) + fy * (h11 - h10)  # fx >= fy: below the (x0, y0)-(x1, y1) diagonal
        return np.where(fx >= fy, below, h00 + fy * (h01 - h00) + fx * (h11 - h01))
