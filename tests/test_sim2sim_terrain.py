"""The terrain check: tiles of the rough task's own generator as MuJoCo heightfields (robot side, numpy + MuJoCo),
the fall rule judged above the ground under the base, and the committed tile file equal to what the generator gives.
"""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from sim2real import REPO_ROOT
from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.sim2sim import Segment, Sim2SimConfig
from sim2real_deploy.sim2sim.cli import main
from sim2real_deploy.sim2sim.terrain import HFIELD, TerrainGround, add_tile, load_tiles

TILES = REPO_ROOT / "assets/terrain/go2_rough.npz"
SHIPPED = REPO_ROOT / "assets/policies/go2_flat/policy.onnx"
ROUGH = REPO_ROOT / "assets/policies/go2_rough/policy.onnx"


@pytest.mark.parametrize(
    "robot, task", [("go2", "Sim2Real-Velocity-Rough-Go2-v0"), ("g1", "Sim2Real-Velocity-Rough-G1-v0")]
)
def test_the_tile_file_is_what_the_task_generator_gives(robot, task):
    from sim2real.terrain_tiles import generate_tiles

    fresh = generate_tiles(task)
    with np.load(REPO_ROOT / f"assets/terrain/{robot}_rough.npz") as committed:
        assert json.loads(str(committed["meta"])) == json.loads(json.dumps(fresh["meta"]))
        for name in fresh["meta"]["tiles"]:
            np.testing.assert_array_equal(committed[name], fresh[name], err_msg=name)
    stairs = fresh["meta"]["tiles"]["stairs_0.9"]
    low, high = stairs["config"]["step_height_range"]
    step = low + 0.9 * (high - low)
    heights = np.unique(np.round(fresh["stairs_0.9"], 4))
    assert step >= 0.10 and np.allclose(np.diff(heights), step, atol=0.005)  # 10 cm steps and more (G1: 21 cm)


def test_a_finer_grid_keeps_the_vertices_and_steepens_the_risers(tmp_path):
    """``--spacing 0.05``: every second vertex is the check's own 0.1 m grid, and the 11 cm stairs' risers climb over
    half as many metres (one 0.05 m cell instead of one 0.1 m cell)."""
    from sim2real.cli import main as sim2real_cli

    out = tmp_path / "fine.npz"
    assert (
        sim2real_cli(["terrain-tiles", "Sim2Real-Velocity-Rough-Go2-v0", "--spacing", "0.05", "--out", str(out)]) == 0
    )
    with np.load(out) as fine, np.load(TILES) as check:
        assert json.loads(str(fine["meta"]))["horizontal_scale"] == 0.05
        for name in ("stairs_inv_0.9", "random_rough_0.9", "slope_inv_0.9"):
            np.testing.assert_allclose(fine[name][::2, ::2], check[name], atol=1e-5, err_msg=name)

        def risers(z: np.ndarray) -> int:  # grid cells along the mid-tile row where the ground rises a step
            return int((np.abs(np.diff(z[:, z.shape[1] // 2])) > 0.05).sum())

        coarse, steep = check["stairs_inv_0.9"], fine["stairs_inv_0.9"]
        assert risers(steep) == risers(coarse) > 0  # one cell per riser on either grid: half the run on the fine one
        assert np.abs(np.diff(steep, axis=0)).max() == pytest.approx(np.abs(np.diff(coarse, axis=0)).max(), abs=1e-3)
    task = "Sim2Real-Velocity-Rough-Go2-v0"
    assert sim2real_cli(["terrain-tiles", task, "--spacing", "0.05"]) == 2  # would overwrite the check's own file
    for coarse_or_uneven in ("0.2", "0.03"):  # coarser than the physics' grid; 8 m is not a whole number of cells
        assert sim2real_cli(["terrain-tiles", task, "--spacing", coarse_or_uneven, "--out", str(out)]) == 2


@pytest.mark.parametrize("name", ["stairs_0.9", "random_rough_0.9", "slope_inv_0.9"])
def test_the_heightfield_is_the_tile_and_the_ground_lookup_is_what_mujoco_collides_with(name):
    tile = load_tiles(TILES)[name]
    spec = mujoco.MjSpec()
    add_tile(spec, tile)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    ground = TerrainGround(tile)
    rng = np.random.default_rng(0)
    geomid = np.zeros(1, dtype=np.int32)
    for x, y in rng.uniform(-3.9, 3.9, (200, 2)):
        distance = mujoco.mj_ray(model, data, np.array([x, y, 5.0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid)
        assert geomid[0] == model.geom(HFIELD).id
        assert 5.0 - distance == pytest.approx(ground(x, y), abs=2e-4), (x, y)
    # the start point is Isaac Lab's spawn point: on a platform, or over random ground's highest point near it
    start = ground(0.0, 0.0)
    assert start == pytest.approx(0.0, abs=1e-6) if tile.info["type"] != "random_rough" else -0.06 < start <= 0.0
    # a vertex of the grid holds the tile's own height there
    i, j = 17, 23
    x, y = np.array([i, j]) * tile.spacing - tile.origin[:2]
    assert ground(x, y) == pytest.approx(tile.z[i, j] - tile.origin[2], abs=1e-6)


def test_a_perceptive_policys_scan_is_the_ground_mujoco_collides_with_around_the_turned_base():
    """The terrain check's height map for a policy with a ``height_scan`` term: the exported points turned with the
    base's yaw, each the ground height there (MuJoCo's ray cast on the heightfield) minus the base height."""
    from sim2real_deploy.policy_file import read_metadata, validate_metadata
    from sim2real_deploy.sim2sim.run import _robot

    raw = json.loads(json.dumps(read_metadata(ROUGH).raw))
    points = np.stack(np.meshgrid(np.arange(-0.8, 0.81, 0.1), np.arange(-0.5, 0.51, 0.1)), -1).reshape(-1, 2)
    scan = {"name": "height_scan", "size": len(points), "scale": 1.0, "clip": [-1.0, 1.0], "params": {"offset": 0.5}}
    raw["observations"].append({**scan, "points": points.tolist()})
    meta = validate_metadata(raw)
    robot = _robot(meta, Sim2SimConfig(terrain=str(TILES), terrain_tile="stairs_0.9"))
    base, yaw = np.array([1.3, -0.4, 0.35]), 0.6  # astride the steps down from the platform, turned
    robot.data.qpos[robot.base_qpos : robot.base_qpos + 7] = [*base, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    mujoco.mj_forward(robot.model, robot.data)
    state = robot.state()
    rot = np.array([[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]])
    hfield, below = robot.model.geom(HFIELD).id, []
    for x, y in base[:2] + points @ rot.T:  # the terrain only: the robot's own geoms are under some points
        down = mujoco.mj_rayHfield(robot.model, robot.data, hfield, np.array([x, y, 5.0]), np.array([0, 0, -1.0]))
        below.append(5.0 - down - base[2])
    np.testing.assert_allclose(state.ground_b, below, atol=2e-4)
    assert np.ptp(state.ground_b) > 0.2  # the scan spans steps


def test_walking_down_stairs_is_no_fall_and_the_robot_starts_on_the_ground():
    """The shipped flat policy walks down the 7 cm stairs: its base ends lower in the world than a fall height below
    its start, yet never comes within the fall height of the ground under it (a world-z rule would call that a fall)."""
    from sim2real_deploy.policy_file import OnnxPolicy
    from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations
    from sim2real_deploy.sim2sim.run import _robot

    schedule = (Segment("stand", 1.0, (0.0, 0.0, 0.0)), Segment("forward_0.5", 7.0, (0.5, 0.0, 0.0)))
    cfg = Sim2SimConfig(schedule=schedule, terrain=str(TILES), terrain_tile="stairs_0.5")
    policy = OnnxPolicy(SHIPPED)
    robot = _robot(policy.metadata, cfg)
    flat = MujocoRobot.from_metadata(policy.metadata)
    start = flat.standing_height()
    assert robot.standing_height() == pytest.approx(start)  # on the platform as on a floor
    nominal = sample_perturbations(cfg.randomization, np.random.default_rng(0), 8.0, robot)
    episode = run_episode(policy, robot, cfg, nominal, start)
    trace, fall = episode["trace"], policy.metadata.fall_rule["min_base_height"]
    world_z = trace["height"] + np.array([robot.ground(x, y) for x, y in trace["xy"]])
    assert episode["survived"] and trace["height"].min() > fall
    assert world_z[-1] < start - fall  # it went down the stairs: by world z alone, a fall


def test_the_terrain_check_judges_every_tile(tmp_path, capsys):
    out = tmp_path / "terrain"
    status = main([str(SHIPPED), "--terrain", str(TILES), "--tiles", "boxes_0.5,stairs_inv_0.9", "--out", str(out)])
    text = capsys.readouterr().out
    report = json.loads((out / "terrain_report.json").read_text())
    rows = {row["tile"]: row for row in report["tiles"]}
    assert status == 1 and not report["passed"] and list(rows) == ["boxes_0.5", "stairs_inv_0.9"]
    assert rows["boxes_0.5"]["passed"] and 0.65 <= rows["boxes_0.5"]["speed_ratio"] <= 1.35  # a flat policy copes
    climb = rows["stairs_inv_0.9"]  # 11 cm steps up: a blind flat policy survives them, slowed to about a third
    assert climb["survival_rate"] == 1.0 and not climb["passed"] and "% of the command" in " ".join(climb["failed"])
    assert "stairs_inv_0.9" in text and (out / "stairs_inv_0.9" / "report.json").is_file()
    assert report["warnings"] == []  # Go2 tiles, a Go2 policy


def test_the_shipped_rough_policy_passes_randomised_tiles_that_the_flat_one_fails(tmp_path):
    """20 randomised episodes each: 7 cm stairs up at the commanded speed (the flat policy: 52 %) and the 10 cm boxes
    with no fall (the flat policy: 4 of 20 fall; docs/terrain_check_go2_flat_randomized.json)."""
    tiles = "stairs_inv_0.5,boxes_0.9"
    out = tmp_path / "rough"
    assert main([str(ROUGH), "--terrain", str(TILES), "--tiles", tiles, "--randomize", "--out", str(out)]) == 0
    report = json.loads((out / "terrain_report.json").read_text())
    rows = {row["tile"]: row for row in report["tiles"]}
    assert all(row["passed"] for row in rows.values()) and rows["boxes_0.9"]["survival_rate"] == 1.0
    assert rows["stairs_inv_0.5"]["speed_ratio"] >= 0.65


def test_a_wrong_tile_or_file_is_a_clear_error(tmp_path, capsys):
    assert main([str(SHIPPED), "--terrain", str(TILES), "--tiles", "lava_1", "--out", str(tmp_path)]) == 2
    assert "no tile 'lava_1'" in capsys.readouterr().err
    bogus = tmp_path / "x.npz"
    bogus.write_bytes(b"not a tile file")
    assert main([str(SHIPPED), "--terrain", str(bogus), "--out", str(tmp_path)]) == 2
    assert "terrain-tiles" in capsys.readouterr().err
