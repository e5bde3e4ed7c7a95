"""Terrain tiles for the sim-to-sim check: single sub-terrains of a rough task's own generator, as height grids.

``sim2real terrain-tiles <task>`` builds each sub-terrain of the task's ``TerrainGeneratorCfg`` at chosen
difficulties through Isaac Lab's sub-terrain functions (the generator's own settings: size, scales, slope
threshold, seed), then samples the resulting mesh at the heightfield grid the physics collides with (vertical rays
at every ``horizontal_scale`` vertex: Newton resamples the training terrain to that grid the same way). The file
(``assets/terrain/<robot>_rough.npz``) is read on the robot side by ``sim2real_deploy.sim2sim.terrain`` with numpy
and MuJoCo only. A test regenerates it and compares.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from sim2real import ASSETS_DIR

DIFFICULTIES = (0.5, 0.9)  # a middle row and the hardest: the Go2's stairs have 7 and 11 cm steps there
TERRAIN_DIR = ASSETS_DIR / "terrain"


def _sub_terrain(generator: Any, name: str, difficulty: float) -> Any:
    """The sub-terrain config as Isaac Lab's ``TerrainGenerator`` prepares it before calling its function."""
    from isaaclab.terrains.height_field import HfTerrainBaseCfg

    sub = generator.sub_terrains[name].copy()
    sub.size = generator.size
    if isinstance(sub, HfTerrainBaseCfg):
        sub.horizontal_scale = generator.horizontal_scale
        sub.vertical_scale = generator.vertical_scale
        sub.slope_threshold = generator.slope_threshold
    sub.difficulty, sub.seed = float(difficulty), generator.seed
    return sub


def sample_heights(mesh: Any, size: tuple[float, float], spacing: float) -> np.ndarray:
    """Heights ``z[ix, iy]`` of ``mesh`` at the grid vertices (ix, iy) * ``spacing`` over [0, size]: the top surface
    a vertical ray meets."""
    xs = np.arange(round(size[0] / spacing) + 1) * spacing
    ys = np.arange(round(size[1] / spacing) + 1) * spacing
    grid = np.stack(np.meshgrid(xs, ys, indexing="ij"), -1).reshape(-1, 2)
    grid = np.clip(grid, 1e-6, np.asarray(size) - 1e-6)  # a ray exactly on the mesh's outer edge may slip past it
    z = np.full(len(grid), np.nan)
    # a ray exactly on a triangle edge, or where the slope threshold left a sliver, can slip through: again, aside
    for nudge in (0.0, 1e-5, 1e-4):
        missed = np.flatnonzero(np.isnan(z))
        if not missed.size:
            break
        aside = grid[missed] + [nudge, nudge / 3]  # not along a cell diagonal: the triangles' edges run there
        origins = np.column_stack([aside, np.full(len(missed), float(mesh.bounds[1, 2]) + 1.0)])
        down = np.tile([0.0, 0.0, -1.0], (len(missed), 1))
        hits, ray, _ = mesh.ray.intersects_location(origins, down, multiple_hits=False)
        z[missed[ray]] = hits[:, 2]
    if np.isnan(z).any():
        raise ValueError(f"{np.isnan(z).sum()} grid vertices miss the terrain mesh")
    return z.reshape(len(xs), len(ys))


def generate_tiles(
    task_id: str, difficulties: tuple[float, ...] = DIFFICULTIES, spacing: float | None = None
) -> dict[str, Any]:
    """``{"meta": {...}, "<name>_<difficulty>": heights}`` for every sub-terrain of the task at each difficulty, on the
    physics' grid, or on a finer ``spacing`` [m]: steeper risers than the training heightfield's (real stairs')."""
    from sim2real.config import ConfigError, load_task

    env = load_task(task_id, []).env
    terrain = getattr(env.scene, "terrain", None)
    if terrain is None or terrain.terrain_generator is None:
        raise ConfigError(f"{task_id} has no generated terrain (a rough task has)")
    generator = terrain.terrain_generator
    if generator.seed is None:
        generator.seed = 0  # random rough ground: the same tiles on every run
    spacing = spacing or generator.horizontal_scale
    cells = [size / spacing for size in generator.size]
    if spacing > generator.horizontal_scale or any(abs(c - round(c)) > 1e-6 for c in cells):
        raise ConfigError(
            f"spacing {spacing} m: needs to be at most the physics' {generator.horizontal_scale} m and divide the "
            f"{generator.size[0]:g} m tile"
        )
    tiles: dict[str, Any] = {}
    meta: dict[str, Any] = {
        "task_id": task_id,
        "robot": env.robot,
        "horizontal_scale": spacing,
        "size": list(generator.size),
        "seed": generator.seed,
        "tiles": {},
    }
    for name in generator.sub_terrains:
        for difficulty in difficulties:
            sub = _sub_terrain(generator, name, difficulty)
            np.random.seed(generator.seed)  # the generator seeds numpy's global RNG; random ground draws from it
            meshes, origin = sub.function(difficulty, sub)
            key = f"{name}_{difficulty:g}"
            tiles[key] = sample_heights(meshes[0], generator.size, spacing).astype(np.float32)
            meta["tiles"][key] = {
                "type": name,
                "difficulty": difficulty,
                "origin": [round(float(v), 4) for v in origin],  # [m] tile frame: where a robot starts
                "config": _plain(sub.to_dict()),
            }
    return {"meta": meta, **tiles}


def _plain(cfg: dict[str, Any]) -> dict[str, Any]:
    """The sub-terrain's JSON-ready parameters (its generator function dropped)."""
    return {k: v for k, v in cfg.items() if isinstance(v, int | float | str | list | tuple | type(None))}


def write_tiles(task_id: str, out: Path | None = None, spacing: float | None = None) -> Path:
    """The task's tiles as ``out`` (default ``assets/terrain/<robot>_rough.npz``)."""
    tiles = generate_tiles(task_id, spacing=spacing)
    out = out or TERRAIN_DIR / f"{tiles['meta']['robot']}_rough.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: v for k, v in tiles.items() if k != "meta"}
    np.savez_compressed(out, meta=np.array(json.dumps(tiles["meta"])), **arrays)
    return out
