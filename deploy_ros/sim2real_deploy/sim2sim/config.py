"""What a sim-to-sim run depends on besides the policy file: the schedule, perturbations and pass criteria."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim2real_deploy.policy_file import PolicyMetadata

AXES = ("vx", "vy", "yaw_rate")  # the velocity command's axes, in the order of Segment.command


class Sim2SimError(RuntimeError):
    """The check could not run (model/metadata mismatch, rendering unavailable...). Not a policy failure."""


@dataclass(frozen=True)
class Segment:
    """A constant command held for ``duration`` seconds: (lin_vel_x [m/s], lin_vel_y [m/s], ang_vel_z [rad/s])."""

    name: str
    duration: float
    command: tuple[float, float, float]

    def __post_init__(self) -> None:  # plain floats, so reports and comparisons do not depend on the caller's types
        object.__setattr__(self, "duration", float(self.duration))
        object.__setattr__(self, "command", tuple(float(c) for c in self.command))

    @property
    def standing(self) -> bool:
        return not any(self.command)


# Every commanded axis, both ways, a combined command, and standing still at the start and after motion.
DEFAULT_SCHEDULE = (
    Segment("stand", 3.0, (0.0, 0.0, 0.0)),
    Segment("forward_0.5", 3.0, (0.5, 0.0, 0.0)),
    Segment("forward_1.0", 3.0, (1.0, 0.0, 0.0)),
    Segment("backward_0.5", 3.0, (-0.5, 0.0, 0.0)),
    Segment("left_0.4", 3.0, (0.0, 0.4, 0.0)),
    Segment("right_0.4", 3.0, (0.0, -0.4, 0.0)),
    Segment("turn_left_0.8", 3.0, (0.0, 0.0, 0.8)),
    Segment("turn_right_0.8", 3.0, (0.0, 0.0, -0.8)),
    Segment("combined", 3.0, (0.6, 0.2, 0.4)),
    Segment("stop", 3.0, (0.0, 0.0, 0.0)),
)


@dataclass(frozen=True)
class Thresholds:
    """Pass criteria, applied to every segment of any schedule by what it commands.

    Moving segments: on every axis the mean |error| is within ``max_lin_err`` / ``max_yaw_err`` (commanded or not:
    walking forward must not drift sideways), and on every commanded axis the mean measured velocity is within
    ``rel_tol`` of the command (an absolute limit alone lets a robot that barely moves pass a small command).
    Standing segments: the base moves at most ``max_stand_drift`` m and turns at most ``max_stand_yaw`` rad.
    Tracking is judged on the mean over the episodes that survived; ``min_survival`` of them must survive.
    """

    min_survival: float = 1.0  # fraction of episodes that must survive the schedule
    max_lin_err: float = 0.15  # mean |v - cmd| per horizontal axis [m/s]
    max_yaw_err: float = 0.3  # mean |yaw rate - cmd| [rad/s]
    rel_tol: float = 0.3  # |mean measured / command - 1| on each commanded axis
    max_stand_drift: float = 0.1  # horizontal base displacement over a standing segment's judged window [m]
    max_stand_yaw: float = 0.15  # yaw change over that window [rad]
    max_joint_limit_violations: int | None = None  # physics steps with a joint outside its limits; None: report only


@dataclass(frozen=True)
class Randomization:
    """Per-episode perturbations, all off by default; sampled from a generator seeded by (seed, episode).

    Gains and joint dynamics are sampled per joint, the rest per episode. ``joint_*`` ranges scale the MJCF's own
    values, unless ``joint_dynamics="trained"`` takes the absolute per-joint ranges the policy was trained with
    from its metadata.
    """

    # sliding friction of every contact (all geoms set alike, so MJCF priorities do not matter); None: the MJCF's
    friction: tuple[float, float] | None = None
    push_interval_s: tuple[float, float] | None = None  # time between pushes
    push_velocity: float = 0.5  # max |delta v| per horizontal axis [m/s], as Isaac Lab's push_by_setting_velocity
    latency_s: tuple[float, float] = (0.0, 0.0)  # action delay, rounded to physics steps
    payload_kg: tuple[float, float] | None = None  # mass added to the base body (negative: lighter)
    kp_scale: tuple[float, float] | None = None  # actuator stiffness x this, per joint
    kd_scale: tuple[float, float] | None = None  # actuator damping x this, per joint
    joint_dynamics: str = "scale"  # "scale": the joint_* ranges scale the MJCF; "trained": the metadata's ranges
    joint_damping: tuple[float, float] | None = None  # passive viscous damping x this
    joint_friction: tuple[float, float] | None = None  # Coulomb friction (frictionloss) x this
    joint_armature: tuple[float, float] | None = None  # armature x this


# Everything a real robot meets, together in one episode. Friction goes below training's 0.4 (a smooth or wet
# floor). The joint ranges scale the MJCF's values over what real motors span (docs/domain_randomization.md);
# for the Go2 they give its training ranges.
RANDOMIZED = Randomization(
    friction=(0.3, 1.25),
    push_interval_s=(4.0, 7.0),
    push_velocity=0.5,
    latency_s=(0.0, 0.02),
    payload_kg=(-1.0, 3.0),
    kp_scale=(0.8, 1.2),
    kd_scale=(0.8, 1.2),
    joint_damping=(0.5, 5.0),
    joint_friction=(0.0, 2.0),
    joint_armature=(0.5, 2.0),
)
RANDOMIZED_EPISODES = 20
# survival over 95 % of the episodes; tracking a little looser than nominal (a 0.3-friction floor slows any gait)
RANDOMIZED_THRESHOLDS = Thresholds(min_survival=0.95, max_lin_err=0.2, max_yaw_err=0.35, rel_tol=0.35)


@dataclass(frozen=True)
class Sim2SimConfig:
    """Everything a run depends on besides the policy file; stored in the report for reproducibility."""

    schedule: tuple[Segment, ...] = DEFAULT_SCHEDULE
    episodes: int = 1
    seed: int = 0
    randomization: Randomization = field(default_factory=Randomization)
    thresholds: Thresholds = field(default_factory=Thresholds)
    transition_s: float = 1.0  # skipped at the start of each segment when measuring tracking
    min_base_height: float | None = None  # fall: base below this [m] (None: the robot's, metadata robot.fall) ...
    max_tilt: float | None = None  # ... or base z axis this far from vertical [rad] (None: the robot's)
    limit_tolerance: float = 0.01  # MuJoCo limits are soft: slack before a joint counts as outside [rad]
    mjcf: str | None = None  # path of an MJCF to use instead of the metadata's robot.mjcf
    init_base_height: float | None = None  # None: feet just touching the floor in the default pose
    target_rate_fraction: float | None = None
    """Joint targets slew-limited to this x no-load speed, as policy_node does; 0: unlimited; None: the limit the
    policy was trained behind (``training.domain_randomization.max_target_rate``), else unlimited."""
    out_dir: str | None = None  # where report.json and tracking.png go; None writes nothing
    video: str | None = None  # MP4 of episode 0 (needs offscreen GL and imageio[ffmpeg])
    terrain: str | None = None  # a terrain tile file (``sim2real terrain-tiles``); None: the flat floor
    terrain_tile: str | None = None  # the tile of ``terrain`` the robot walks on


@dataclass(frozen=True)
class FallRule:
    """When an episode counts as a fall: ``cfg``'s explicit limits, else the robot's own from its metadata."""

    min_base_height: float  # [m]
    max_tilt: float  # [rad]
    source: str = "robot.fall"  # where the limits came from

    @classmethod
    def of(cls, meta: PolicyMetadata, cfg: Sim2SimConfig) -> FallRule:
        rule = meta.fall_rule
        source = "robot.fall" if "fall" in meta.raw["robot"] else "default: the file predates robot.fall"
        if cfg.min_base_height is not None or cfg.max_tilt is not None:
            source = "the check's configuration"
        return cls(
            rule["min_base_height"] if cfg.min_base_height is None else cfg.min_base_height,
            rule["max_tilt"] if cfg.max_tilt is None else cfg.max_tilt,
            source,
        )


RANDOMIZED_CONFIG = Sim2SimConfig(
    episodes=RANDOMIZED_EPISODES, randomization=RANDOMIZED, thresholds=RANDOMIZED_THRESHOLDS
)

# The terrain check: stand, then walk forward across the tile from its start point (3.5 m: to 0.5 m before its
# edge). Judged like the randomised flat check, on each tile: on rough ground no gait tracks as tightly as on a floor.
TERRAIN_SCHEDULE = (Segment("stand", 2.0, (0.0, 0.0, 0.0)), Segment("forward_0.5", 7.0, (0.5, 0.0, 0.0)))
TERRAIN_THRESHOLDS = Thresholds(min_survival=1.0, max_lin_err=0.2, max_yaw_err=0.35, rel_tol=0.35)


def terrain_config(terrain: str, randomize: bool = False) -> Sim2SimConfig:
    """The terrain check on the tiles of ``terrain``: its schedule and tolerances, one nominal episode per tile or
    the randomised mode's episodes and perturbations (with that mode's survival rate)."""
    base = RANDOMIZED_CONFIG if randomize else Sim2SimConfig()
    thresholds = replace(TERRAIN_THRESHOLDS, min_survival=base.thresholds.min_survival)
    return replace(base, schedule=TERRAIN_SCHEDULE, thresholds=thresholds, terrain=terrain)
