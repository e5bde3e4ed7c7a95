"""The height scan read from the terrain's height grid, as the physics collides with it: no ray cast.

Isaac Lab's ``height_scan`` ray-casts a grid of points under the base (a ``RayCaster``: 187 rays, 126 us per env-step
on one CPU core). The generated terrain reaches the physics as one MuJoCo heightfield (Newton resamples the terrain
mesh to a 0.1 m grid), so the height under any point is a lookup and a linear interpolation: 6-7 us per env-step.

Triangulation: MuJoCo (native, MuJoCo-Warp) and Newton's collision split each grid cell along the diagonal from its
(x0, y0) corner to its (x1, y1) corner (``"physics"``, the default: the heights the feet stand on). Newton's ray-cast
mesh, which the ``RayCaster`` hits, splits it along the other diagonal (``"raycast"``): the two differ by up to the
height step across a cell where the cell is not planar (random rough ground, step edges). Design and measurements:
``docs/height_scan_design.md``.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from isaaclab.managers import ManagerTermBase, ObservationTermCfg, SceneEntityCfg
from isaaclab.sensors import RayCasterCfg

if TYPE_CHECKING:
    from isaaclab.envs import ManagerBasedRLEnv

TRIANGULATIONS = ("physics", "raycast")


@dataclass(frozen=True)
class HeightGrid:
    """Heights ``z[row, col]`` [m] of a regular grid: vertex (row, col) at (x0 + col dx, y0 + row dy)."""

    z: torch.Tensor
    x0: float
    y0: float
    dx: float
    dy: float

    @classmethod
    def from_mujoco(cls, model, device: str | torch.device = "cpu") -> HeightGrid:
        """The one heightfield geom of a MuJoCo model (world frame, as MuJoCo places its vertices)."""
        import mujoco

        geoms = [g for g in range(model.ngeom) if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_HFIELD]
        if len(geoms) != 1:
            raise ValueError(f"the physics model has {len(geoms)} heightfield geoms, expected the terrain's one")
        g = geoms[0]
        if abs(model.geom_quat[g][0]) != 1.0 or model.geom_bodyid[g] != 0:
            raise ValueError("the terrain heightfield is rotated or on a moving body: the grid lookup assumes neither")
        h = model.geom_dataid[g]
        nrow, ncol, adr = int(model.hfield_nrow[h]), int(model.hfield_ncol[h]), int(model.hfield_adr[h])
        sx, sy, sz, _ = model.hfield_size[h]
        px, py, pz = model.geom_pos[g]
        data = torch.as_tensor(model.hfield_data[adr : adr + nrow * ncol].reshape(nrow, ncol).copy())
        z = (pz + sz * data.double()).float().to(device)
        return cls(z, float(px - sx), float(py - sy), float(2 * sx / (ncol - 1)), float(2 * sy / (nrow - 1)))

    def height_at(self, xy: torch.Tensor, triangulation: str = "physics") -> torch.Tensor:
        """Terrain height under each point ``xy[..., 2]``; +inf outside the grid (as a ray that misses)."""
        nrow, ncol = self.z.shape
        u, v = (xy[..., 0] - self.x0) / self.dx, (xy[..., 1] - self.y0) / self.dy
        col, row = u.floor().clamp_(0, ncol - 2), v.floor().clamp_(0, nrow - 2)
        fx, fy = u - col, v - row
        # one flat index and four offsets: 1-D gathers cost less than 2-D indexing
        corner, heights = row.long() * ncol + col.long(), self.z.view(-1)
        h00, h10 = heights[corner], heights[corner + 1]  # h10: one step in x
        h01, h11 = heights[corner + ncol], heights[corner + ncol + 1]
        if triangulation == "physics":  # cell split along (x0, y0)-(x1, y1)
            below = h00 + fx * (h10 - h00) + fy * (h11 - h10)
            above = h00 + fy * (h01 - h00) + fx * (h11 - h01)
            z = torch.where(fx >= fy, below, above)
        elif triangulation == "raycast":  # cell split along (x1, y0)-(x0, y1)
            near = h00 + fx * (h10 - h00) + fy * (h01 - h00)
            far = h11 + (1 - fx) * (h01 - h11) + (1 - fy) * (h10 - h11)
            z = torch.where(fx + fy <= 1, near, far)
        else:
            raise ValueError(f"triangulation must be one of {TRIANGULATIONS}, got {triangulation!r}")
        outside = (u < 0) | (u > ncol - 1) | (v < 0) | (v > nrow - 1)
        return z.masked_fill_(outside, float("inf"))


_GRIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> its terrain's HeightGrid, or None (flat)


def terrain_grid(env: ManagerBasedRLEnv) -> HeightGrid | None:
    """The height grid of the env's generated terrain as the physics holds it (built once per env); None on the
    flat ground plane."""
    if env not in _GRIDS:
        terrain = getattr(env.scene.cfg, "terrain", None)
        generated = terrain is not None and terrain.terrain_type == "generator"
        model = env.sim.physics_manager._solver.mj_model if generated else None
        _GRIDS[env] = None if model is None else HeightGrid.from_mujoco(model, env.device)
    return _GRIDS[env]


def ground_height(env: ManagerBasedRLEnv, xy: torch.Tensor) -> torch.Tensor:
    """Height of the ground under each point ``xy[..., 2]`` [m], as the physics collides with it: the generated
    terrain's height grid, or 0 on the flat ground plane (and off the grid, where no robot stands before
    ``terrain_out_of_bounds`` ends its episode)."""
    grid = terrain_grid(env)
    if grid is None:
        return torch.zeros(xy.shape[:-1], device=xy.device)
    return torch.nan_to_num(grid.height_at(xy), posinf=0.0)


def height_above_ground(env: ManagerBasedRLEnv, pos_w: torch.Tensor) -> torch.Tensor:
    """Height [m] of each world point ``pos_w[..., 3]`` above the ground under it (:func:`ground_height`)."""
    return pos_w[..., 2] - ground_height(env, pos_w[..., :2])


def base_height_above_ground_l2(
    env: ManagerBasedRLEnv, target_height: float, asset_cfg: SceneEntityCfg = SceneEntityCfg("robot")
) -> torch.Tensor:
    """Isaac Lab's ``base_height_l2`` measured above the ground under the base: the same on flat ground, and on
    generated terrain without a ray caster."""
    return (height_above_ground(env, env.scene[asset_cfg.name].data.root_pos_w.torch) - target_height).square()


def scanner_params(scanner: RayCasterCfg) -> dict:
    """The parameters of :class:`height_scan_grid` that place its points where ``scanner`` starts its rays."""
    if scanner.ray_alignment != "yaw":
        raise ValueError(f"height_scan_grid places points yaw-aligned; the scanner is {scanner.ray_alignment!r}")
    return {"pattern_cfg": scanner.pattern_cfg, "offset_xy": tuple(scanner.offset.pos[:2])}


def scan_points(params: dict, device: str = "cpu") -> torch.Tensor:
    """(x, y) [m] of :class:`height_scan_grid`'s points in the base's yaw frame, in output order: the pattern's ray
    starts shifted by ``offset_xy`` (exported, so the robot side samples its height map at the same points)."""
    pattern = params["pattern_cfg"]
    starts, _ = pattern.func(pattern, device)
    return starts[:, :2] + torch.tensor(params.get("offset_xy", (0.0, 0.0)), device=device)


class height_scan_grid(ManagerTermBase):
    """Isaac Lab's ``height_scan`` (base height above the terrain at each point of a yaw-aligned ray-caster pattern,
    minus ``offset``) from the physics' height grid. ``pattern_cfg`` and ``offset_xy`` are those of the
    ``RayCasterCfg`` it replaces (:func:`scanner_params`): the points are exactly where that sensor starts its rays.
    """

    def __init__(self, cfg: ObservationTermCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        grid = terrain_grid(env)
        if grid is None:
            raise ValueError("height_scan_grid reads generated terrain; this scene has none")
        self.grid = grid
        self.local_xy = scan_points(cfg.params, env.device)
        asset_cfg: SceneEntityCfg = cfg.params["asset_cfg"]
        asset = env.scene[asset_cfg.name]
        self.asset, self.body = asset, asset.find_bodies(asset_cfg.body_names)[0][0]

    def __call__(
        self,
        env: ManagerBasedRLEnv,
        pattern_cfg: object,
        asset_cfg: SceneEntityCfg,
        offset_xy: tuple[float, float] = (0.0, 0.0),
        offset: float = 0.5,
        triangulation: str = "physics",
    ) -> torch.Tensor:
        pose = self.asset.data.body_link_pose_w.torch[:, self.body]
        pos, (qx, qy, qz, qw) = pose[:, :3], pose[:, 3:].unbind(-1)
        yaw = torch.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
        cos, sin = yaw.cos()[:, None], yaw.sin()[:, None]
        x, y = self.local_xy[:, 0], self.local_xy[:, 1]
        xy = torch.stack((cos * x - sin * y, sin * x + cos * y), dim=-1) + pos[:, None, :2]
        return pos[:, 2:3] - self.grid.height_at(xy, triangulation) - offset
