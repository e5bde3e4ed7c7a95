"""The rough-terrain generator (no simulation) and the height scan over a known heightfield (real Isaac Lab)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import task_env

GO2_ROUGH = "Sim2Real-Velocity-Rough-Go2-v0"
SCAN_RAYS = 17 * 11
VERTICAL = 0.005  # the generator's height quantum [m]


@pytest.fixture(scope="module")
def generated():
    """The Go2 rough terrain as generated for training: (config, {(row, col): sub-terrain vertices})."""
    from isaaclab.terrains import TerrainGenerator

    from sim2real.robots.go2.env_cfg import Go2RoughEnvCfg

    cfg = Go2RoughEnvCfg().scene.terrain.terrain_generator
    cfg.seed = 0
    generator = TerrainGenerator(cfg)
    # the generator appends sub-terrains column by column, each column from the easiest row up, then the border
    meshes = generator.terrain_meshes[: cfg.num_rows * cfg.num_cols]
    tiles = {(i % cfg.num_rows, i // cfg.num_rows): np.asarray(m.vertices) for i, m in enumerate(meshes)}
    return cfg, tiles


def _columns(cfg, name: str) -> list[int]:
    """Columns of sub-terrain ``name`` (the generator lays them out by proportion, in the config's order)."""
    from sim2real.tasks.mdp.commands import sub_terrain_columns

    return [col for col, sub in enumerate(sub_terrain_columns(cfg)) if sub == name]


def _tiles(cfg, tiles: dict, name: str):
    """(row, vertices) of every tile of sub-terrain ``name``, each of its columns from the easiest row up."""
    for col in _columns(cfg, name):
        for row in range(cfg.num_rows):
            yield row, tiles[row, col]


def _band(value_range: tuple[float, float], row: int, rows: int) -> tuple[float, float]:
    """The values row ``row`` may take: its 1/rows slice of the range, less one height quantum of rounding."""
    low, high = value_range
    return low + (high - low) * row / rows - VERTICAL, low + (high - low) * (row + 1) / rows + 1e-6


def test_every_type_has_its_columns(generated):
    cfg, _ = generated
    assert {name: len(_columns(cfg, name)) for name in cfg.sub_terrains} == {
        "flat": 1,
        "slope": 1,
        "slope_inv": 1,
        "stairs": 2,
        "stairs_inv": 2,
        "random_rough": 2,
        "boxes": 1,
    }
    assert _columns(cfg, "flat") == [0] and _columns(cfg, "stairs_inv") == [5, 6]


def test_the_floor_is_flat_at_every_difficulty(generated):
    cfg, tiles = generated
    rows = list(_tiles(cfg, tiles, "flat"))
    assert len(rows) == cfg.num_rows and all(np.abs(vertices[:, 2]).max() == 0.0 for _, vertices in rows)


@pytest.mark.parametrize("name, sign", [("stairs", 1), ("stairs_inv", -1)])
def test_stair_height_follows_the_row_difficulty(generated, name, sign):
    cfg, tiles = generated
    sub = cfg.sub_terrains[name]
    for row, vertices in _tiles(cfg, tiles, name):
        levels = np.unique(np.round(sign * vertices[:, 2], 4))  # 0, h, 2h, ... (down for inverted)
        steps = np.diff(levels)
        assert len(steps) >= 4 and np.allclose(steps, steps[0], atol=1e-4), (row, levels)
        low, high = _band(sub.step_height_range, row, cfg.num_rows)
        assert low <= steps[0] <= high, (row, steps[0])


@pytest.mark.parametrize("name, sign", [("slope", 1), ("slope_inv", -1)])
def test_slope_follows_the_row_difficulty(generated, name, sign):
    cfg, tiles = generated
    sub = cfg.sub_terrains[name]
    for row, vertices in _tiles(cfg, tiles, name):
        centre = vertices[:, :2].min(0) + np.asarray(cfg.size) / 2
        # along the line through the pyramid's top, height grows linearly from the edge to the platform
        line = vertices[np.abs(vertices[:, 1] - centre[1]) < 1e-3]
        line = line[np.argsort(line[:, 0])]
        z = sign * line[:, 2]
        assert (z >= 0).all()
        rising = (z[:-1] > 0) & (z[1:] < z.max()) & (line[:-1, 0] < centre[0])
        slope = np.median(np.diff(z)[rising] / np.diff(line[:, 0])[rising]) if rising.any() else 0.0
        low, high = _band(sub.slope_range, row, cfg.num_rows)
        assert low - 0.03 <= slope <= high + 0.03, (row, slope)  # +-0.03: heights are rounded to 5 mm per cell


def test_boxes_rise_and_sink_by_the_row_height(generated):
    cfg, tiles = generated
    sub = cfg.sub_terrains["boxes"]
    for row, vertices in _tiles(cfg, tiles, "boxes"):
        z = vertices[:, 2]
        height = np.abs(z).max()
        low, high = _band(sub.obstacle_height_range, row, cfg.num_rows)
        assert low <= height <= high, (row, height)
        # boxes and pits of the full or half height (floor-divided: -7 // 2 == -4) on a flat floor
        levels = set(np.round(np.unique(np.abs(z)) / VERTICAL).astype(int))
        full = round(height / VERTICAL)
        assert levels <= {0, full, full // 2, (full + 1) // 2}, (row, levels)


def test_random_rough_stays_in_its_noise_range(generated):
    """Isaac Lab's uniform noise ignores the difficulty: every row draws from the same range."""
    cfg, tiles = generated
    sub = cfg.sub_terrains["random_rough"]
    for _, vertices in _tiles(cfg, tiles, "random_rough"):
        z = vertices[:, 2]
        noisy = z[z > 0]  # the sub-terrain's flat border is at 0
        assert sub.noise_range[0] - 1e-6 <= noisy.min() and noisy.max() <= sub.noise_range[1] + 1e-6
        values = round((sub.noise_range[1] - sub.noise_range[0]) / sub.noise_step) + 1
        assert len(np.unique(np.round(noisy, 4))) == values  # every step of the range occurs


# A known heightfield: one pyramid of 3 steps (0.1 m high, 0.5 m treads) up to a 2.9 m platform at 0.3 m, centred
# on the world origin. Generator layout: an 8 m tile of 81 x 81 vertices 0.1 m apart, a 1 m (11-vertex) flat rim,
# then the steps; vertex (i, j) is at x = i * 0.1 - 4, y = j * 0.1 - 4.
STEP, TREAD_CELLS, RIM, INNER = 0.1, 5, 11, 59


def _stairs_terrain(run) -> None:
    from isaaclab.terrains import HfPyramidStairsTerrainCfg

    generator = run.env.scene.terrain.terrain_generator
    generator.num_rows = generator.num_cols = 1
    generator.border_width = 1.0
    generator.sub_terrains = {
        "stairs": HfPyramidStairsTerrainCfg(
            step_height_range=(STEP, STEP), step_width=0.51, platform_width=3.0, border_width=1.0
        )
    }
    run.env.events.reset_base.params["pose_range"] = {}
    run.env.events.reset_base.params["velocity_range"] = {}
    run.env.events.reset_joints.params["position_range"] = (1.0, 1.0)
    run.env.events.push_robot = None


def _known_height(xy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Terrain height at ``xy`` [m] and whether ``xy`` is at a vertex whose neighbours are all at that height
    (a heightfield interpolates between vertices, so only those points have one exact height)."""
    index = torch.round((xy + 4.0) / 0.1)
    on_vertex = ((index * 0.1 - 4.0 - xy).abs() < 0.02).all(-1)

    def level(ij: torch.Tensor) -> torch.Tensor:
        p = ij - RIM  # position inside the stairs, 0 .. INNER - 1
        steps = torch.minimum(p, INNER - 1 - p).div(TREAD_CELLS, rounding_mode="floor").amin(-1)
        return steps.clamp(0, 3)

    centre = level(index)
    shifts = [(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
    flat = torch.stack([level(index + torch.tensor(s)) == centre for s in shifts]).all(0)
    return centre * STEP, on_vertex & flat


def test_height_scan_matches_a_known_heightfield_and_the_robot_stands_on_it():
    from sim2real.robots import ROBOTS
    from sim2real.tasks import mdp

    with task_env(
        GO2_ROUGH,
        "env.height_scan_in_policy=true",
        "env.ray_cast_height_scan=true",
        num_envs=2,
        configure=_stairs_terrain,
    ) as env:
        base = env.unwrapped
        robot, scanner = base.scene["robot"], base.scene["height_scanner"]
        # env 0 on the top platform; env 1 astride the three steps on the -x side (scan reaches x = -2.3 .. -0.7)
        pose = robot.data.root_pose_w.torch.clone()
        pose[:, :3] = torch.tensor([[0.0, 0.0, 0.62], [-1.5, 0.0, 0.52]])
        pose[:, 3:] = torch.tensor([0.0, 0.0, 0.0, 1.0])
        robot.write_root_pose_to_sim_index(root_pose=pose)
        robot.write_root_velocity_to_sim_index(root_velocity=torch.zeros(2, 6))
        obs, *_ = env.step(torch.zeros(2, 12))
        hits = scanner.data.ray_hits_w.torch
        expected, exact = _known_height(hits[..., :2])
        assert exact.sum(-1).min() > 60  # most rays land on a vertex inside a tread
        assert torch.allclose(hits[..., 2][exact], expected[exact], atol=2e-3)
        assert (expected[1][exact[1]] / STEP).round().unique().tolist() == [1, 2, 3]  # env 1 sees three steps
        # the critic's term is the base height above each hit point less 0.5 m; the policy's is the same, noisy
        scan = obs["critic"][:, -SCAN_RAYS:]
        base_z = scanner.data.pos_w.torch[:, 2:3]
        assert torch.allclose(scan[exact], (base_z - expected - 0.5)[exact], atol=3e-3)
        # the reward and fall terms' ground (the grid's lookup, no rays) is the same terrain
        ground = mdp.ground_height(base, hits[..., :2])
        assert torch.allclose(ground[exact], expected[exact], atol=2e-3)
        base_pos = robot.data.root_pos_w.torch
        top = 3 * STEP  # env 0 stands on the platform: its base is 0.3 m lower above the ground than in world z
        assert torch.allclose(mdp.height_above_ground(base, base_pos)[0], base_pos[0, 2] - top, atol=2e-3)
        lowered = mdp.base_height_above_ground_l2(base, target_height=base_pos[0, 2].item())[0]
        assert torch.isclose(lowered, torch.tensor(top**2), atol=2e-3)  # world z would score 0
        assert obs["policy"].shape == (2, 5 * 47 + SCAN_RAYS)  # the main job's 5-step history, the latest scan only
        assert (obs["policy"][:, -SCAN_RAYS:] - scan).abs().max() <= 0.1 + 1e-5
        # contacts with the heightfield hold the robot up: 1 s with zero actions on the platform, all four feet
        # touching in every step of the second half (a 1 cm MuJoCo gap once made them float and flicker)
        sensor = base.scene["contact_forces"]
        feet, _ = sensor.find_bodies(list(ROBOTS["go2"].foot_bodies), preserve_order=True)
        for step in range(50):
            env.step(torch.zeros(2, 12))
            if step >= 25:
                assert (sensor.data.net_forces_w.torch[0, feet].norm(dim=-1) > 1.0).all(), step
        height = robot.data.root_pos_w.torch[0, 2] - 0.3
        assert 0.2 < height < 0.4, height


@pytest.mark.parametrize("ray_cast", [False, True], ids=["grid", "ray-cast"])
def test_height_scan_mirror_rule_is_the_scan_at_the_mirrored_position(ray_cast: bool):
    """The stairs are symmetric about y = 0: the scan of a base at (x, -y) is the mirror rule applied to the scan at
    (x, y), here astride the steps where the scan is not symmetric itself."""
    from sim2real.tasks.mdp.symmetry import mirror_left_right

    with task_env(
        GO2_ROUGH, f"env.ray_cast_height_scan={str(ray_cast).lower()}", num_envs=2, configure=_stairs_terrain
    ) as env:
        robot = env.unwrapped.scene["robot"]
        pose = robot.data.root_pose_w.torch.clone()
        pose[:, :3] = torch.tensor([[-1.3, 1.1, 0.5], [-1.3, -1.1, 0.5]])
        pose[:, 3:] = torch.tensor([0.0, 0.0, 0.0, 1.0])
        robot.write_root_pose_to_sim_index(root_pose=pose)
        robot.write_root_velocity_to_sim_index(root_velocity=torch.zeros(2, 6))
        obs, *_ = env.step(torch.zeros(2, 12))
        scans = obs["critic"][:, -SCAN_RAYS:]
        mirrored, _ = mirror_left_right(env, obs=obs)
        assert (scans[0] - scans[1]).abs().max() > 0.05  # the two positions see different steps
        torch.testing.assert_close(mirrored["critic"][2, -SCAN_RAYS:], scans[1], atol=1e-2, rtol=0)
