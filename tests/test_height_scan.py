"""The height scan from the physics' height grid (``mdp.height_scan_grid``): hand-computed heights, MuJoCo's own
ray cast on the physics model, and Isaac Lab's ``RayCaster`` on every generated terrain type."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch
from conftest import task_env
from test_terrain import GO2_ROUGH, SCAN_RAYS, _columns

from sim2real.tasks.mdp.height_grid import HeightGrid
from sim2real_deploy.commands import quat_from_euler_xyz

NUM_ENVS = 14  # 2 per terrain type

PLANAR = 1e-4  # [m] a grid cell whose two diagonals give the same heights: h00 + h11 == h10 + h01


def _one_cell_model() -> mujoco.MjModel:
    """A 2 x 2 heightfield 2 m wide at z = 0, its (+1, +1) corner 1 m up."""
    spec = mujoco.MjSpec()
    spec.add_hfield(name="terrain", size=[1.0, 1.0, 1.0, 0.1], nrow=2, ncol=2, userdata=[0.0, 0.0, 0.0, 1.0])
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="terrain")
    return spec.compile()


def _mj_ray_heights(model: mujoco.MjModel, xy: np.ndarray) -> np.ndarray:
    """Height of the first geom hit straight down from 30 m above each point (MuJoCo's own collision geometry)."""
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geomid, out = np.zeros(1, np.int32), []
    for x, y in xy:
        dist = mujoco.mj_ray(model, data, np.array([x, y, 30.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
        out.append(30.0 - dist if dist >= 0 else np.inf)
    return np.array(out)


def test_the_two_triangulations_on_one_cell():
    grid = HeightGrid.from_mujoco(_one_cell_model())
    points = torch.tensor([[0.5, 0.5], [-0.5, 0.5], [0.5, -0.5], [1.0, 1.0]])
    np.testing.assert_allclose(grid.height_at(points, "physics"), [0.75, 0.25, 0.25, 1.0], atol=1e-6)
    np.testing.assert_allclose(grid.height_at(points, "raycast"), [0.5, 0.0, 0.0, 1.0], atol=1e-6)
    assert torch.isinf(grid.height_at(torch.tensor([[1.01, 0.0], [0.0, -1.2]]))).all()  # off the grid: a miss
    with pytest.raises(ValueError, match="triangulation"):
        grid.height_at(points, "bilinear")


def test_physics_triangulation_is_what_mujoco_collides_with():
    model = _one_cell_model()
    xy = np.random.default_rng(0).uniform(-0.99, 0.99, size=(500, 2))
    grid = HeightGrid.from_mujoco(model)
    np.testing.assert_allclose(grid.height_at(torch.tensor(xy), "physics"), _mj_ray_heights(model, xy), atol=1e-6)


@pytest.fixture(scope="module")
def scans():
    """14 Go2s, 2 per terrain type, at random positions and headings on random rows, slightly tilted: the grid term
    in both triangulations, the RayCaster's scan, the scan points and MuJoCo's physics model."""
    from isaaclab.managers import ObservationTermCfg, SceneEntityCfg

    from sim2real.robots import ROBOTS
    from sim2real.tasks import mdp
    from sim2real.tasks.locomotion.rough_env_cfg import HEIGHT_SCANNER
    from sim2real.tasks.mdp.height_grid import scanner_params

    with task_env(GO2_ROUGH, "env.ray_cast_height_scan=true", num_envs=NUM_ENVS) as env:
        base = env.unwrapped
        terrain_cfg = base.scene.terrain.cfg.terrain_generator
        rng = np.random.default_rng(1)
        columns = [_columns(terrain_cfg, name) for name in terrain_cfg.sub_terrains]  # 7 types
        picks = [(int(rng.integers(terrain_cfg.num_rows)), c) for cs in columns for c in (cs[0], cs[-1])]
        robot = base.scene["robot"]
        pose = robot.data.root_pose_w.torch.clone()
        origins = base.scene.terrain.terrain_origins
        for i, (row, col) in enumerate(picks):
            yaw, tilt = rng.uniform(-np.pi, np.pi), rng.uniform(-0.15, 0.15, 2)
            w, x, y, z = quat_from_euler_xyz(tilt[0], tilt[1], yaw)
            quat = torch.tensor([x, y, z, w], dtype=torch.float32)
            pose[i, :3] = origins[row, col] + torch.tensor([*rng.uniform(-2.5, 2.5, 2), 0.6])
            pose[i, 3:] = quat
        robot.write_root_pose_to_sim_index(root_pose=pose)
        robot.write_root_velocity_to_sim_index(root_velocity=torch.zeros(NUM_ENVS, 6))
        env.step(torch.zeros(NUM_ENVS, 12))
        params = {
            **scanner_params(HEIGHT_SCANNER),
            "asset_cfg": SceneEntityCfg("robot", body_names=[ROBOTS["go2"].base_body]),
        }
        term = mdp.height_scan_grid(ObservationTermCfg(func=mdp.height_scan_grid, params=params), base)
        grid = {t: term(base, **params, triangulation=t) for t in ("physics", "raycast")}
        ray_cast = mdp.height_scan(base, SceneEntityCfg("height_scanner"))
        scanner = base.scene["height_scanner"]
        points = scanner.data.ray_hits_w.torch[..., :2].clone()
        base_z = robot.data.root_pos_w.torch[:, 2:3].clone()
        yield grid, ray_cast, points, term, base.sim.physics_manager._solver.mj_model, base_z


def test_raycast_triangulation_equals_isaac_labs_ray_caster_on_every_terrain(scans):
    grid, ray_cast, *_ = scans
    assert grid["raycast"].shape == ray_cast.shape == (NUM_ENVS, SCAN_RAYS)
    assert (grid["raycast"] - ray_cast).abs().max() < 1e-3


def test_physics_triangulation_equals_mujocos_collision_geometry(scans):
    """The term's output: base height above what MuJoCo's own ray cast hits on the training model, less 0.5 m."""
    grid, _, points, _, mj_model, base_z = scans
    heights = _mj_ray_heights(mj_model, points.reshape(-1, 2).double().numpy()).reshape(points.shape[:2])
    np.testing.assert_allclose(grid["physics"].numpy(), (base_z.double().numpy() - heights - 0.5), atol=2e-4)


def test_the_triangulations_agree_where_a_cell_is_planar_and_differ_on_rough_ground(scans):
    grid, ray_cast, points, term, _, _ = scans
    g = term.grid
    u, v = ((points[..., 0] - g.x0) / g.dx).floor().long(), ((points[..., 1] - g.y0) / g.dy).floor().long()
    twist = (g.z[v, u] + g.z[v + 1, u + 1] - g.z[v, u + 1] - g.z[v + 1, u]).abs()
    planar = twist < PLANAR
    assert planar.float().mean() > 0.5
    assert (grid["physics"] - ray_cast)[planar].abs().max() < 1e-3
    assert (grid["physics"] - ray_cast)[~planar].abs().max() > 5e-3  # the diagonal matters off planar cells
    print(
        f"planar {planar.float().mean():.2f}; off planar: max {(grid['physics'] - ray_cast)[~planar].abs().max():.4f} m"
    )
