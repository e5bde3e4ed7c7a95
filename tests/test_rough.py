"""The Go2 rough velocity task on real Isaac Lab: layout, stepping, terrain and command curricula, CLI training."""

from __future__ import annotations

import re

import pytest
import torch
from conftest import task_env
from test_task import DOCS, documented_terms

GO2_ROUGH = "Sim2Real-Velocity-Rough-Go2-v0"
NUM_ENVS = 4
SCAN_RAYS = 17 * 11  # 1.6 m x 1.0 m at 0.1 m
ANNEALS = ("entropy_anneal", "action_std_anneal")


def rough_critic_terms() -> list[tuple[str, int]]:
    """(term, size) rows that docs/observations.md lists for the critic on rough terrain."""
    section = DOCS.read_text().split("## `critic` group on rough terrain")[1].split("\n## ")[0]
    return [(name, int(size)) for name, size in re.findall(r"^\| \d+ \| (\w+) \| (\d+) \|", section, flags=re.M)]


def test_the_default_height_scan_reads_the_physics_grid_with_no_ray_caster():
    from sim2real.config import load_task
    from sim2real.robots import ROBOTS
    from sim2real.tasks import mdp

    run = load_task(GO2_ROUGH, [])
    term = run.env.observations.critic.height_scan
    assert run.env.scene.height_scanner is None and term.func is mdp.height_scan_grid
    assert term.params["asset_cfg"].body_names == [ROBOTS["go2"].base_body]
    ray_cast = load_task(GO2_ROUGH, ["env.ray_cast_height_scan=true"]).env
    assert (
        ray_cast.scene.height_scanner is not None and ray_cast.observations.critic.height_scan.func is mdp.height_scan
    )


@pytest.fixture(scope="module")
def env():
    # the command curriculum at the shared default start (the Go2 starts at full ranges)
    with task_env(GO2_ROUGH, "env.curriculum.command_ranges.params.start=0.5", num_envs=NUM_ENVS) as wrapped:
        yield wrapped


def test_observation_groups_match_documented_layout(env):
    manager = env.unwrapped.observation_manager
    policy = documented_terms("policy", 12)  # the flat main job's, gait clock included
    critic = policy + documented_terms("critic", 12) + rough_critic_terms()
    frames = {"policy": env.unwrapped.cfg.observations.policy.history_length, "critic": 1}
    for group, expected in (("policy", policy), ("critic", critic)):
        dims = [d[0] // frames[group] for d in manager.group_obs_term_dim[group]]
        assert list(zip(manager.active_terms[group], dims, strict=True)) == expected
    assert critic[-1] == ("height_scan", SCAN_RAYS)
    obs = env.get_observations()
    assert obs["policy"].shape == (NUM_ENVS, 5 * 47) and obs["critic"].shape == (NUM_ENVS, 121 + SCAN_RAYS)


def test_rough_go2_trains_the_flat_main_job_recipe():
    from sim2real.config import load_task

    rough, flat = load_task(GO2_ROUGH, []), load_task("Sim2Real-Velocity-Flat-Go2-v0", [])
    assert rough.env.rewards.to_dict() == flat.env.rewards.to_dict()
    assert rough.env.events.to_dict() == flat.env.events.to_dict()
    assert rough.env.curriculum.gait_relax.params["weights"] == flat.env.curriculum.gait_relax.params["weights"]
    assert rough.agent.actor.to_dict() == flat.agent.actor.to_dict()
    assert rough.agent.critic.to_dict() == flat.agent.critic.to_dict()  # session 31: widths not told apart
    assert rough.agent.symmetry and rough.agent.velocity_estimator
    # the late stage later: the gait clock relaxes and the noise goes at iteration 1000, not 350
    algorithm, flat_algorithm = rough.agent.algorithm.to_dict(), flat.agent.algorithm.to_dict()
    schedules = {key: (1000, 1000 + flat_algorithm[key][1] - flat_algorithm[key][0]) for key in ANNEALS}
    assert algorithm == {**flat_algorithm, **schedules}
    assert rough.env.curriculum.gait_relax.params["num_steps"] == 1000 * 24
    # but straight walks (heading commands) for the terrain curriculum's distance rule; flat trains free yaw rates
    command, flat_command = rough.env.commands.base_velocity, flat.env.commands.base_velocity
    assert command.heading_command and command.rel_heading_envs == 1.0 and not flat_command.heading_command
    assert command.resampling_time_range == (10.0, 10.0)  # two straight walks per episode
    assert rough.env.curriculum.command_ranges.params["start"] == 1.0  # the terrain rows are the curriculum


def test_env_steps_on_the_terrain(env):
    env.reset()
    for _ in range(10):
        obs, rewards, _, _ = env.step(torch.zeros(env.num_envs, 12))
    assert torch.isfinite(obs["critic"]).all() and torch.isfinite(rewards).all()
    terrain = env.unwrapped.scene.terrain
    assert terrain.terrain_origins.shape == (10, 10, 3)
    assert (terrain.terrain_levels <= 2).all()  # max_init_terrain_level


def test_terrain_level_rises_after_walking_far_and_drops_after_failing(env):
    base = env.unwrapped
    terrain, robot = base.scene.terrain, base.scene["robot"]
    ids = torch.tensor([0, 1])
    terrain.terrain_levels[ids] = 3
    terrain.env_origins[ids] = terrain.terrain_origins[3, terrain.terrain_types[ids]]
    # env 0 walked 5 m (> half an 8 m sub-terrain); env 1 stayed put under a 1 m/s command (20 m expected)
    pose = robot.data.root_pose_w.torch[ids].clone()
    pose[:, :3] = terrain.env_origins[ids] + torch.tensor([[5.0, 0.0, 0.4], [0.0, 0.0, 0.4]])
    robot.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids)
    base.command_manager.get_term("base_velocity").vel_command_b[ids] = torch.tensor([1.0, 0.0, 0.0])
    base.curriculum_manager.compute(env_ids=ids)
    assert terrain.terrain_levels[ids].tolist() == [4, 2]
    expected = terrain.terrain_origins[terrain.terrain_levels[ids], terrain.terrain_types[ids]]
    assert torch.equal(base.scene.env_origins[ids], expected)  # the next reset spawns there


def test_with_a_speed_threshold_only_envs_that_tracked_move_up(env):
    base = env.unwrapped
    terrain, robot, rewards = base.scene.terrain, base.scene["robot"], base.reward_manager
    ids = torch.tensor([0, 1, 2])
    terrain.terrain_levels[ids] = 3
    terrain.env_origins[ids] = terrain.terrain_origins[3, terrain.terrain_types[ids]]
    # envs 0 and 1 walked 5 m in 10 s, env 2 stayed put, all under a 1 m/s command (20 m expected)
    pose = robot.data.root_pose_w.torch[ids].clone()
    pose[:, :3] = terrain.env_origins[ids] + torch.tensor([[5.0, 0.0, 0.4], [0.0, 5.0, 0.4], [0.0, 0.0, 0.4]])
    robot.write_root_pose_to_sim_index(root_pose=pose, env_ids=ids)
    base.command_manager.get_term("base_velocity").vel_command_b[ids] = torch.tensor([1.0, 0.0, 0.0])
    saved_lengths = base.episode_length_buf.clone()
    base.episode_length_buf[ids] = round(10.0 / base.step_dt)
    # tracking reward per second (weight 1.5): env 0 at 0.9 of its maximum, env 1 at 0.5; 0.8 needed
    sums = rewards._episode_sums["track_lin_vel_xy_exp"]
    saved_sums, term = sums.clone(), base.curriculum_manager.cfg.terrain_levels
    sums[ids] = torch.tensor([1.5 * 0.9 * 10.0, 1.5 * 0.5 * 10.0, 0.0])
    term.params["threshold"] = 0.8
    try:
        base.curriculum_manager.compute(env_ids=ids)
    finally:
        term.params["threshold"] = 0.0
        sums[:] = saved_sums
        base.episode_length_buf[:] = saved_lengths
    # env 1 walked as far as env 0, slowly: it stays; env 2 fell short of half its command: down
    assert terrain.terrain_levels[ids].tolist() == [4, 3, 2]


def test_envs_on_the_floor_get_yaw_rate_commands_and_the_rest_steer_to_a_heading(env):
    base = env.unwrapped
    term, terrain = base.command_manager.get_term("base_velocity"), base.scene.terrain
    on_floor = terrain.terrain_types == 0  # column 0 is the floor (test_terrain); 4 envs: columns 0, 2, 5, 7
    assert on_floor.tolist() == [True, False, False, False] and torch.equal(term.yaw_rate_envs, on_floor)
    term._resample_command(torch.arange(env.num_envs))
    assert term.is_heading_env.tolist() == [False, True, True, True]
    term.is_standing_env[:] = False
    drawn = term.vel_command_b[:, 2].clone()
    term.heading_target[:] = base.scene["robot"].data.heading_w.torch + 1.0  # 1 rad to the left of each robot
    term._update_command()
    # the floor env keeps its drawn yaw rate; the others turn at stiffness x heading error
    assert term.vel_command_b[0, 2] == drawn[0]
    assert term.vel_command_b[1:, 2].tolist() == pytest.approx([0.5] * 3, abs=1e-5)


def test_an_unknown_yaw_rate_terrain_is_a_clear_error():
    from sim2real.config import ConfigError, load_task

    with pytest.raises(ConfigError, match="no sub-terrain 'lava'; sub-terrains: flat, slope"):
        load_task(GO2_ROUGH, ["env.commands.base_velocity.yaw_rate_terrains=[flat,lava]"])
    with pytest.raises(ConfigError, match="no sub-terrain 'flat'; sub-terrains: none"):  # a flat task has no terrain
        load_task("Sim2Real-Velocity-Flat-Go2-v0", ["env.commands.base_velocity.yaw_rate_terrains=[flat]"])


def test_command_ranges_widen_only_while_tracking_is_good(env):
    base = env.unwrapped
    term = base.curriculum_manager.cfg.command_ranges.func  # the class term instance
    ranges = base.command_manager.get_term("base_velocity").cfg.ranges
    assert term.fraction == 0.5 and ranges.lin_vel_x == (-0.5, 0.5) and ranges.lin_vel_y == (-0.3, 0.3)
    sums = base.reward_manager._episode_sums["track_lin_vel_xy_exp"]
    weight = base.reward_manager.get_term_cfg("track_lin_vel_xy_exp").weight
    ids = torch.arange(env.num_envs)
    try:
        sums[:] = 0.5 * weight * base.max_episode_length_s  # poor tracking
        base.common_step_counter += base.max_episode_length
        base.curriculum_manager.compute(env_ids=ids)  # closes a window of poor episodes: no change
        assert term.fraction == 0.5
        sums[:] = 0.9 * weight * base.max_episode_length_s  # good tracking from now on
        base.curriculum_manager.compute(env_ids=ids)  # judged only at the end of the window
        assert term.fraction == 0.5
        base.common_step_counter += base.max_episode_length
        base.curriculum_manager.compute(env_ids=ids)
        assert term.fraction == pytest.approx(0.6) and ranges.ang_vel_z == pytest.approx((-0.6, 0.6))
    finally:
        term.set_fraction(0.5)
        sums[:] = 0.0


def test_the_share_of_envs_on_the_hardest_rows_is_logged(env):
    from sim2real.tasks import mdp

    base = env.unwrapped
    terrain = base.scene.terrain
    saved = terrain.terrain_levels.clone()
    try:
        terrain.terrain_levels[:] = torch.tensor([9, 8, 7, 0])
        assert mdp.terrain_top_rows(base, None, rows=2).item() == 0.5
        assert mdp.terrain_top_rows(base, None, rows=3).item() == 0.75
        assert "terrain_top_rows" in base.curriculum_manager.active_terms
    finally:
        terrain.terrain_levels[:] = saved


def test_feet_stumble_reads_feet_on_a_riser_not_on_a_slope_or_the_floor(env):
    """Real contact normals on the generated terrain. Dropped 1.6 m out from each tile's centre on the hardest row
    (11-12 cm steps): on the stairs the front feet land on a riser's ramp (ratio 1.1-1.7, both count); on the 0.4
    slope the normals tilt (ratio about 0.4) and none counts; on the floor they stand straight."""
    from sim2real.tasks.mdp import feet_stumble

    base = env.unwrapped
    terrain, robot = base.scene.terrain, base.scene["robot"]
    params = base.reward_manager.get_term_cfg("feet_stumble").params
    sensor = base.scene.sensors["contact_forces"]
    assert terrain.terrain_types.tolist()[:3] == [0, 2, 4]  # floor, slope up, stairs down (test_terrain's columns)
    saved = terrain.terrain_levels.clone()
    try:
        terrain.terrain_levels[:] = 9
        pose = robot.data.root_pose_w.torch.clone()
        pose[:, :3] = terrain.terrain_origins[9, terrain.terrain_types] + torch.tensor([1.6, 0.0, 0.45])
        pose[:, 3:] = torch.tensor([0.0, 0.0, 0.0, 1.0])  # facing +x, along the slope and across the risers
        robot.write_root_pose_to_sim_index(root_pose=pose)
        robot.write_root_velocity_to_sim_index(root_velocity=torch.zeros(env.num_envs, 6))
        for _ in range(15):
            env.step(torch.zeros(env.num_envs, 12))
        forces = sensor.data.net_normal_forces_w.torch[:, params["sensor_cfg"].body_ids]
        tilt = forces[..., :2].norm(dim=-1) / forces[..., 2].abs()
        stumble = feet_stumble(base, **params)
        assert stumble[0] == 0 and tilt[0].max() < 0.05
        assert stumble[1] == 0 and 0.3 < tilt[1].max() < 0.6
        assert stumble[2] >= 1
    finally:
        terrain.terrain_levels[:] = saved
