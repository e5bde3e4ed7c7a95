"""Velocity tracking on generated rough terrain: a robot's flat task plus terrain, a height scan and two curricula.

:class:`RoughTerrainCfg` is a mixin put in front of a robot's flat task (``class G1RoughEnvCfg(RoughTerrainCfg,
G1FlatEnvCfg)``), so a rough variant keeps that robot's rewards, commands and physics and sets only what differs.

- Terrain: Isaac Lab's generator with height-field sub-terrains only (a floor, pyramid slopes and stairs, up and
  down, random rough, boxes), all ``convert_to_heightfield``: Newton then collides one heightfield, which MuJoCo
  (native C and MuJoCo-Warp alike) collides exactly, where a triangle mesh would collide as convex hulls under
  MuJoCo's own collision detection. Rows are difficulty levels, columns terrain types.
- Terrain curriculum (``mdp.terrain_levels_tracked``, Isaac Lab's ``terrain_levels_vel`` by default): at reset an env
  moves a row up if it walked more than half a sub-terrain from its origin and a row down if it covered less than
  half its commanded distance. ``params.threshold`` > 0 also asks for speed on the way up.
- Command curriculum (``mdp.command_ranges_vel``): commands start at half the robot's ranges and widen by 10% steps
  while velocity tracking is good. Yaw-rate commands come from a heading controller (Isaac Lab's rough tasks), so
  each command is a straight walk that the terrain curriculum's distance rule can judge; on the floor, yaw-rate
  commands as on flat ground.
- Height scan: 17 x 11 points on a 1.6 m x 1.0 m grid around the base, yaw-aligned, terrain only, read from the
  physics' height grid (:mod:`~sim2real.tasks.mdp.height_grid`: what the feet collide with, at 1/20 of a ray cast's
  cost); ``ray_cast_height_scan=True`` puts Isaac Lab's ``RayCaster`` back. Always in the critic; in the policy only
  with ``height_scan_in_policy=True``: blind by default, so the policy deploys without a height map (the real robot
  has no mapping stack here).
"""

from __future__ import annotations

import math

from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.sensors import RayCasterCfg, patterns
from isaaclab.sim.spawners.materials import RigidBodyMaterialBaseCfg
from isaaclab.terrains import (
    HfDiscreteObstaclesTerrainCfg,
    HfInvertedPyramidSlopedTerrainCfg,
    HfInvertedPyramidStairsTerrainCfg,
    HfPyramidSlopedTerrainCfg,
    HfPyramidStairsTerrainCfg,
    HfRandomUniformTerrainCfg,
    TerrainGeneratorCfg,
    TerrainImporterCfg,
)
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg as Unoise

from sim2real.robots import ROBOTS, RobotSpec
from sim2real.tasks import mdp
from sim2real.tasks.locomotion.velocity_env_cfg import (
    CriticObsCfg,
    ObservationsCfg,
    PolicyObsCfg,
    SceneCfg,
    TerminationsCfg,
    VelocityCurriculumCfg,
)

# step_width 0.31: the generator takes int(width / 0.1) cells, and int(0.3 / 0.1) == 2 in floating point
_STAIRS = dict(step_height_range=(0.05, 0.23), step_width=0.31, platform_width=3.0, border_width=1.0)
_SLOPES = dict(slope_range=(0.0, 0.4), platform_width=2.0, border_width=0.25)

# Isaac Lab's rough-terrain mix and full-size heights (isaaclab/terrains/config/rough.py), as height fields; its
# mesh stairs and box grid become their height-field versions, boxes are discrete obstacles (up and down).
ROUGH_TERRAIN_CFG = TerrainGeneratorCfg(
    size=(8.0, 8.0),
    # Isaac Lab: 20 m. 5 m dates from when native MuJoCo kept one model copy per env, heightfield included (~3 MB
    # each at 5 m); it now keeps one per thread, but the terrain tests and curves were made with 5 m
    border_width=5.0,
    num_rows=10,  # difficulty levels
    num_cols=10,  # terrain types by proportion: 1 column per 0.1
    horizontal_scale=0.1,
    vertical_scale=0.005,
    slope_threshold=0.75,
    curriculum=True,
    use_cache=False,
    sub_terrains={
        # a floor at every difficulty, first so it is column 0: on the terrain alone, late in training no env walks on
        # a floor, and the policy walked 18-28 % fast there (docs/tasks.md, session 31)
        "flat": HfPyramidSlopedTerrainCfg(proportion=0.1, **{**_SLOPES, "slope_range": (0.0, 0.0)}),
        "slope": HfPyramidSlopedTerrainCfg(proportion=0.1, **_SLOPES),
        "slope_inv": HfInvertedPyramidSlopedTerrainCfg(proportion=0.1, **_SLOPES),
        "stairs": HfPyramidStairsTerrainCfg(proportion=0.2, **_STAIRS),
        "stairs_inv": HfInvertedPyramidStairsTerrainCfg(proportion=0.2, **_STAIRS),
        "random_rough": HfRandomUniformTerrainCfg(
            proportion=0.2, noise_range=(0.02, 0.10), noise_step=0.02, border_width=0.25
        ),
        "boxes": HfDiscreteObstaclesTerrainCfg(
            proportion=0.1,  # Isaac Lab: 0.2; the floor's column
            obstacle_height_range=(0.05, 0.2),
            obstacle_width_range=(0.4, 1.6),
            num_obstacles=40,
            platform_width=2.0,
            border_width=0.25,
        ),
    },
)


# contacts and constraint rows per env on the terrain: Go2 peaks under random actions on all rows were 17-20 contacts
# and 170-200 rows on native MuJoCo, 130-150 rows on MuJoCo-Warp (the flat presets hold 65); twice that and more
NCONMAX, NJMAX = 64, 400


# Isaac Lab's rough-terrain scanner: the ray caster's config, and the grid term's pattern (read as data)
HEIGHT_SCANNER = RayCasterCfg(
    prim_path="{ENV_REGEX_NS}/Robot/Geometry/base",  # the spec's base body, set by apply_robot
    offset=RayCasterCfg.OffsetCfg(pos=(0.0, 0.0, 20.0)),  # rays start 20 m up: above any terrain
    ray_alignment="yaw",
    pattern_cfg=patterns.GridPatternCfg(resolution=0.1, size=[1.6, 1.0]),
    mesh_prim_paths=["/World/ground"],
    global_world_only=True,  # hit the terrain only, never the robot's own bodies
)


@configclass
class RoughSceneCfg(SceneCfg):
    ground = None  # replaced by the generated terrain, at the same prim path
    terrain = TerrainImporterCfg(
        prim_path="/World/ground",
        terrain_type="generator",
        terrain_generator=ROUGH_TERRAIN_CFG,
        max_init_terrain_level=2,  # CPU runs are short: start on the easier rows, the curriculum does the rest
        collision_group=-1,
        physics_material=RigidBodyMaterialBaseCfg(static_friction=1.0, dynamic_friction=1.0),  # as the flat ground
        visual_material=None,
    )
    height_scanner: RayCasterCfg | None = HEIGHT_SCANNER.replace()  # only with ray_cast_height_scan=True


def height_scan_term(noise: float = 0.0, ray_cast: bool = False) -> ObsTerm:
    """Base height above the terrain at each scan point minus 0.5 m [m], clipped to +-1 m (Isaac Lab's term and
    offset): from the physics' height grid, or with ``ray_cast`` from the ``height_scanner`` sensor."""
    if ray_cast:
        func, params = mdp.height_scan, {"sensor_cfg": SceneEntityCfg("height_scanner")}
    else:  # the base body is set by apply_robot
        params = {**mdp.scanner_params(HEIGHT_SCANNER), "asset_cfg": SceneEntityCfg("robot")}
        func = mdp.height_scan_grid
    params["offset"] = 0.5  # explicit: the exporter writes it into a perceptive policy's metadata
    return ObsTerm(func=func, params=params, noise=Unoise(n_min=-noise, n_max=noise) if noise else None, clip=(-1, 1))


@configclass
class RoughPolicyObsCfg(PolicyObsCfg):
    height_scan: ObsTerm | None = None  # blind; ``height_scan_in_policy=True`` adds it (with +-0.1 m noise)


@configclass
class RoughCriticObsCfg(CriticObsCfg):
    height_scan: ObsTerm | None = None  # set by RoughTerrainCfg.finalize (grid or ray cast)


@configclass
class RoughObservationsCfg(ObservationsCfg):
    policy: RoughPolicyObsCfg = RoughPolicyObsCfg()
    critic: RoughCriticObsCfg = RoughCriticObsCfg()


@configclass
class RoughTerminationsCfg(TerminationsCfg):
    # leaving the generated terrain ends the episode as a time-out: not a failure, and far enough to move up a level
    out_of_bounds = DoneTerm(func=mdp.terrain_out_of_bounds, params={"distance_buffer": 3.0}, time_out=True)
    # off: world z is not the height above generated terrain, and above the ground under the base a G1 astride a
    # 0.23 m stair edge would end as fallen; a fall is a body contact here
    base_too_low = None


@configclass
class CurriculumCfg(VelocityCurriculumCfg):
    terrain_levels = CurrTerm(func=mdp.terrain_levels_tracked, params={"threshold": 0.0})  # 0: Isaac Lab's rule
    terrain_top_rows = CurrTerm(func=mdp.terrain_top_rows, params={"rows": 2})  # logged only
    command_ranges = CurrTerm(func=mdp.command_ranges_vel, params={"start": 0.5, "step": 0.1, "threshold": 0.8})


@configclass
class RoughTerrainCfg:
    """Mixin: generated terrain, height scanner, height-scan observations and the curricula."""

    scene: RoughSceneCfg = RoughSceneCfg(num_envs=256, env_spacing=2.5)
    observations: RoughObservationsCfg = RoughObservationsCfg()
    terminations: RoughTerminationsCfg = RoughTerminationsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()
    height_scan_in_policy: bool = False
    """Give the policy the height scan too (a perceptive policy). Applied by :meth:`finalize`, after overrides."""
    ray_cast_height_scan: bool = False
    """Scan with Isaac Lab's ``RayCaster`` (Newton's ray-cast mesh) instead of the physics' height grid: ~20x the
    cost on the CPU, and the other diagonal in each grid cell (``docs/height_scan_design.md``)."""

    def __post_init__(self):
        super().__post_init__()
        self.scene.height_scanner.update_period = self.decimation * self.sim.dt  # once per policy step
        # heading commands (Isaac Lab's rough tasks): the yaw rate the policy is given steers to a sampled heading, so
        # each 10 s command (two per episode) is a straight walk. The terrain curriculum judges the distance from the
        # spawn point; under free yaw-rate commands an env that tracks a curve well covers little of it (docs/tasks.md)
        command = self.commands.base_velocity
        command.resampling_time_range = (10.0, 10.0)
        command.heading_command = True
        command.heading_control_stiffness = 0.5
        command.rel_heading_envs = 1.0
        command.ranges.heading = (-math.pi, math.pi)
        # on the floor the flat task's yaw-rate commands: sustained turns, which a heading controller rarely holds, and
        # no distance rule to serve (every row is the same floor)
        command.yaw_rate_terrains = ("flat",)

    def apply_robot(self, spec: RobotSpec) -> None:
        super().apply_robot(spec)
        # converted robots (assets/convert.py) keep their body tree under Geometry/, the base body at its root
        self.scene.height_scanner.prim_path = "{ENV_REGEX_NS}/Robot/Geometry/" + spec.base_body

    def finalize(self) -> None:
        """Apply what depends on overridable fields and on the physics preset (called by ``load_task``)."""
        super().finalize()
        ray_cast = self.ray_cast_height_scan
        self.observations.critic.height_scan = height_scan_term(ray_cast=ray_cast)
        if self.height_scan_in_policy and self.observations.policy.height_scan is None:
            self.observations.policy.height_scan = height_scan_term(noise=0.1, ray_cast=ray_cast)
            _only_latest(self.observations.policy, "height_scan")
        for group in (self.observations.critic, self.observations.policy):
            if group.height_scan is not None and "asset_cfg" in group.height_scan.params:
                group.height_scan.params["asset_cfg"].body_names = [ROBOTS[self.robot].base_body]
        if not ray_cast:
            self.scene.height_scanner = None  # no sensor, no site, no ray casts
        # a foot on a heightfield touches several cells at once: more contacts and constraint rows per env than
        # the flat presets hold, and MuJoCo-Warp drops what does not fit ("nefc overflow")
        solver = self.sim.physics.solver_cfg
        solver.nconmax = max(solver.nconmax, NCONMAX)
        solver.njmax = max(solver.njmax, NJMAX)


def _only_latest(group: ObsGroup, name: str) -> None:
    """The group's history for every term but ``name``, which gives its latest value only (Isaac Lab's rough policy
    reads one scan; five would make the policy's input 2.8x as wide). Isaac Lab copies a group's ``history_length``
    into every term, so the group's moves into each term's own."""
    if not group.history_length:
        return
    for term_name, term in vars(group).items():
        if isinstance(term, ObsTerm):
            term.history_length = 0 if term_name == name else group.history_length
            term.flatten_history_dim = group.flatten_history_dim
    group.history_length = None
