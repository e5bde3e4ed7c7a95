"""What a sim-to-sim run depends on besides the policy file: the schedule, perturbations and pass criteria."""

from __future__ import annotations

from dataclasses import dataclass, field


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


DEFAULT_SCHEDULE = (
    Segment("stand", 3.0, (0.0, 0.0, 0.0)),
    Segment("forward_0.5", 4.0, (0.5, 0.0, 0.0)),
    Segment("forward_1.0", 4.0, (1.0, 0.0, 0.0)),
    Segment("sideways_0.3", 3.0, (0.0, 0.3, 0.0)),
    Segment("turn_0.8", 3.0, (0.0, 0.0, 0.8)),
    Segment("stop", 3.0, (0.0, 0.0, 0.0)),
)


@dataclass(frozen=True)
class Thresholds:
    """Pass criteria. A criterion naming a segment absent from the schedule is skipped (and listed)."""

    require_survival: bool = True
    max_lin_x_err: float = 0.15  # mean |vx - cmd_x| [m/s]
    lin_x_segments: tuple[str, ...] = ("forward_0.5", "forward_1.0")
    max_yaw_err: float = 0.3  # mean |yaw rate - cmd| [rad/s]
    yaw_segments: tuple[str, ...] = ("turn_0.8",)
    max_joint_limit_violations: int | None = None  # physics steps with a joint outside its limits; None: report only

    def segment_criteria(self) -> tuple[tuple[str, float, tuple[str, ...], str], ...]:
        """(metric, limit, segments, unit) for each per-segment tracking criterion."""
        return (
            ("lin_x_err_mean", self.max_lin_x_err, self.lin_x_segments, "m/s"),
            ("yaw_rate_err_mean", self.max_yaw_err, self.yaw_segments, "rad/s"),
        )


@dataclass(frozen=True)
class Randomization:
    """Per-episode perturbations, all off by default; sampled from a generator seeded by (seed, episode)."""

    # sliding friction of every contact (all geoms set alike, so MJCF priorities do not matter); None: the MJCF's
    friction: tuple[float, float] | None = None
    push_interval_s: tuple[float, float] | None = None  # time between pushes
    push_velocity: float = 0.5  # max |delta v| per horizontal axis [m/s], as Isaac Lab's push_by_setting_velocity
    latency_steps: tuple[int, int] = (0, 0)  # action delay in control steps, inclusive range


# Friction as the Go2 task's training range (0.4-1.25); the MJCF's own foot friction is 0.4.
RANDOMIZED = Randomization(friction=(0.4, 1.25), push_interval_s=(4.0, 7.0), latency_steps=(0, 1))


@dataclass(frozen=True)
class Sim2SimConfig:
    """Everything a run depends on besides the policy file; stored in the report for reproducibility."""

    schedule: tuple[Segment, ...] = DEFAULT_SCHEDULE
    episodes: int = 1
    seed: int = 0
    randomization: Randomization = field(default_factory=Randomization)
    thresholds: Thresholds = field(default_factory=Thresholds)
    transition_s: float = 0.5  # skipped at the start of each segment when measuring tracking
    min_base_height: float = 0.15  # fall: base below this [m] ...
    max_tilt: float = 1.0  # ... or base z axis this far from vertical [rad]
    limit_tolerance: float = 0.01  # MuJoCo limits are soft: slack before a joint counts as outside [rad]
    mjcf: str | None = None  # path of an MJCF to use instead of the metadata's robot.mjcf
    init_base_height: float | None = None  # None: feet just touching the floor in the default pose
    out_dir: str | None = None  # where report.json and tracking.png go; None writes nothing
    video: str | None = None  # MP4 of episode 0 (needs offscreen GL and imageio[ffmpeg])
