"""Velocity-tracking locomotion on flat ground, shared by every legged robot.

Robots subclass :class:`VelocityEnvCfg` and set ``robot`` (a :class:`~sim2real.robots.RobotSpec`); everything
that names bodies or joints is derived from the spec in ``__post_init__``, so a variant overrides only what
changes. Policy observation order and scales are documented in ``docs/observations.md``.
"""

from __future__ import annotations

import math
import re
from dataclasses import MISSING

import isaaclab.sim as sim_utils
from isaaclab.assets import ArticulationCfg, AssetBaseCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sensors import ContactSensorCfg
from isaaclab.sim import SimulationCfg
from isaaclab.sim.spawners.materials import RigidBodyMaterialBaseCfg
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg as Unoise

from sim2real import ASSETS_DIR
from sim2real.robots import ROBOTS, RobotSpec
from sim2real.robots.isaaclab import articulation_cfg
from sim2real.tasks import mdp
from sim2real.tasks.physics import newton_cpu

GROUND_USD = str(ASSETS_DIR / "ground" / "ground_plane.usda")
TROT = (0.0, 0.5, 0.5, 0.0)
"""Gait-clock offsets of a trot for feet ordered FL, FR, RL, RR: diagonal pairs (FL with RR, FR with RL)."""


@configclass
class SceneCfg(InteractiveSceneCfg):
    ground = AssetBaseCfg(
        prim_path="/World/ground",
        spawn=sim_utils.GroundPlaneCfg(
            usd_path=GROUND_USD,
            physics_material=RigidBodyMaterialBaseCfg(static_friction=1.0, dynamic_friction=1.0),
        ),
    )
    robot: ArticulationCfg = MISSING  # set from the robot spec
    contact_forces = ContactSensorCfg(prim_path="{ENV_REGEX_NS}/Robot/.*", history_length=3, track_air_time=True)


@configclass
class CommandsCfg:
    base_velocity = mdp.AxisVelocityCommandCfg(
        asset_name="robot",
        resampling_time_range=(4.0, 8.0),
        rel_standing_envs=0.1,  # some envs learn to stand still on a zero command
        heading_command=False,  # yaw-rate commands, as a joystick or nav stack sends them
        debug_vis=False,
        ranges=mdp.AxisVelocityCommandCfg.Ranges(lin_vel_x=(-1.0, 1.0), lin_vel_y=(-0.6, 0.6), ang_vel_z=(-1.0, 1.0)),
    )


@configclass
class ActionsCfg:
    joint_pos = mdp.DelayedJointPositionActionCfg(
        asset_name="robot",
        joint_names=[".*"],
        scale=0.25,
        use_default_offset=True,
        preserve_order=True,
        delay_range=(0, 2),
    )
    held: mdp.HeldJointPositionActionCfg | None = None  # VelocityEnvCfg.held_joints


@configclass
class PolicyObsCfg(ObsGroup):
    """What the robot measures (IMU, joint encoders) plus the command and its own last action, with sensor noise."""

    base_ang_vel = ObsTerm(func=mdp.base_ang_vel, noise=Unoise(n_min=-0.2, n_max=0.2))
    projected_gravity = ObsTerm(func=mdp.projected_gravity, noise=Unoise(n_min=-0.05, n_max=0.05))
    velocity_commands = ObsTerm(func=mdp.generated_commands, params={"command_name": "base_velocity"})
    joint_pos = ObsTerm(
        func=mdp.joint_pos_rel,
        params={"asset_cfg": SceneEntityCfg("robot", preserve_order=True)},
        noise=Unoise(n_min=-0.01, n_max=0.01),
    )
    joint_vel = ObsTerm(
        func=mdp.joint_vel_rel,
        params={"asset_cfg": SceneEntityCfg("robot", preserve_order=True)},
        noise=Unoise(n_min=-1.5, n_max=1.5),
    )
    actions = ObsTerm(func=mdp.last_action)
    gait_phase: ObsTerm | None = None  # the gait clock, for tasks that set one (VelocityEnvCfg.gait_period)

    enable_corruption = True  # each term's sensor noise


@configclass
class CriticObsCfg(PolicyObsCfg):
    """The policy terms noise-free, plus privileged state and this env's randomised physics."""

    base_lin_vel = ObsTerm(func=mdp.base_lin_vel)
    base_height = ObsTerm(func=mdp.base_height)
    foot_contacts = ObsTerm(func=mdp.contact_states, params={"sensor_cfg": SceneEntityCfg("contact_forces")})
    friction = ObsTerm(func=mdp.shape_friction)
    base_mass = ObsTerm(func=mdp.body_mass, params={"asset_cfg": SceneEntityCfg("robot")})
    base_com = ObsTerm(func=mdp.body_com, params={"asset_cfg": SceneEntityCfg("robot")})
    gain_scale = ObsTerm(func=mdp.actuator_gain_scale)
    action_delay = ObsTerm(func=mdp.action_delay)
    joint_dynamics = ObsTerm(
        func=mdp.joint_passive_dynamics, params={"asset_cfg": SceneEntityCfg("robot", preserve_order=True)}
    )

    enable_corruption = False  # the policy's terms without their noise


@configclass
class ObservationsCfg:
    policy: PolicyObsCfg = PolicyObsCfg()
    critic: CriticObsCfg = CriticObsCfg()
    velocity_target: ObsGroup | None = None  # set by agent.velocity_estimator=true: VelocityTargetCfg


@configclass
class VelocityTargetCfg(ObsGroup):
    """The base velocity an actor's estimator regresses on (``sim2real.estimator``); no actor or critic input."""

    base_lin_vel = ObsTerm(func=mdp.base_lin_vel)

    enable_corruption = False


@configclass
class EventsCfg:
    """Domain randomisation, on by default; every range is a config field."""

    # startup: per-env physical parameters
    friction = EventTerm(
        func=mdp.randomize_rigid_body_material,
        mode="startup",
        params={
            "asset_cfg": SceneEntityCfg("robot", body_names=".*"),
            "static_friction_range": (0.4, 1.25),
            "dynamic_friction_range": (0.4, 1.25),
            "restitution_range": (0.0, 0.0),
            "num_buckets": 64,
        },
    )
    added_base_mass = EventTerm(
        func=mdp.randomize_rigid_body_mass,
        mode="startup",
        params={"asset_cfg": SceneEntityCfg("robot"), "mass_distribution_params": (-1.0, 3.0), "operation": "add"},
    )
    base_com = EventTerm(
        func=mdp.randomize_rigid_body_com,
        mode="startup",
        params={
            "asset_cfg": SceneEntityCfg("robot"),
            "com_range": {"x": (-0.03, 0.03), "y": (-0.03, 0.03), "z": (-0.02, 0.02)},
        },
    )
    motor_strength = EventTerm(
        func=mdp.randomize_actuator_gains,
        mode="startup",
        params={
            "asset_cfg": SceneEntityCfg("robot", joint_names=".*"),
            "stiffness_distribution_params": (0.8, 1.2),
            "damping_distribution_params": (0.8, 1.2),
            "operation": "scale",
        },
    )
    joint_dynamics = EventTerm(  # ranges from the robot spec's joint groups (apply_robot); None if it gives none
        func=mdp.randomize_joint_passive_dynamics,
        mode="startup",
        params={"asset_cfg": SceneEntityCfg("robot", joint_names=".*", preserve_order=True), "ranges": {}},
    )
    # reset: where and how each episode starts
    reset_base = EventTerm(
        func=mdp.reset_root_state_uniform,
        mode="reset",
        params={
            "pose_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "yaw": (-math.pi, math.pi)},
            "velocity_range": {k: (-0.5, 0.5) for k in ("x", "y", "z", "roll", "pitch", "yaw")},
        },
    )
    reset_joints = EventTerm(
        func=mdp.reset_joints_by_scale, mode="reset", params={"position_range": (0.5, 1.5), "velocity_range": (0, 0)}
    )
    # interval: disturbances
    push_robot = EventTerm(
        func=mdp.push_by_setting_velocity,
        mode="interval",
        interval_range_s=(10.0, 15.0),
        params={"velocity_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5)}},
    )


def _sole_frames(spec: RobotSpec) -> SceneEntityCfg:
    """The bodies whose heights the swing terms read: the spec's foot frames, else its foot bodies, in spec order."""
    return SceneEntityCfg("robot", body_names=list(spec.foot_frames or spec.foot_bodies), preserve_order=True)


@configclass
class RewardsCfg:
    track_lin_vel_xy_exp = RewTerm(
        func=mdp.track_lin_vel_xy_exp, weight=1.5, params={"command_name": "base_velocity", "std": math.sqrt(0.25)}
    )
    track_ang_vel_z_exp = RewTerm(
        func=mdp.track_ang_vel_z_exp, weight=0.75, params={"command_name": "base_velocity", "std": math.sqrt(0.25)}
    )
    # a sharp kernel beside the broad one (off by default): near the command the broad kernel hardly tells 0.12 m/s
    # from 0.2 m/s (exp(-0.08^2/0.25) = 0.97), so a small axis of a combined command goes untracked
    track_lin_vel_xy_fine = RewTerm(
        func=mdp.track_lin_vel_xy_exp, weight=0.0, params={"command_name": "base_velocity", "std": 0.15}
    )
    lin_vel_z_l2 = RewTerm(func=mdp.lin_vel_z_l2, weight=-2.0)
    ang_vel_xy_l2 = RewTerm(func=mdp.ang_vel_xy_l2, weight=-0.05)
    dof_torques_l2 = RewTerm(func=mdp.joint_torques_l2, weight=-2.0e-4)
    dof_acc_l2 = RewTerm(func=mdp.joint_acc_l2, weight=-2.5e-7)
    action_rate_l2 = RewTerm(func=mdp.action_rate_l2, weight=-0.01)
    flat_orientation_l2 = RewTerm(func=mdp.flat_orientation_l2, weight=-2.5)
    dof_pos_limits = RewTerm(func=mdp.joint_pos_limits, weight=-2.0)
    feet_air_time = RewTerm(
        func=mdp.feet_air_time,
        weight=0.25,
        params={"sensor_cfg": SceneEntityCfg("contact_forces"), "command_name": "base_velocity", "threshold": 0.5},
    )
    undesired_contacts = RewTerm(
        func=mdp.undesired_contacts,
        weight=-1.0,
        params={"sensor_cfg": SceneEntityCfg("contact_forces"), "threshold": 1.0},
    )
    # off by default: on rough terrain, a foot pushing against a riser (legged_gym's stumble)
    feet_stumble = RewTerm(func=mdp.feet_stumble, weight=0.0, params={"sensor_cfg": SceneEntityCfg("contact_forces")})
    # off by default: HIMLoco's swing clearance measured from the base (foot frames, standing height and sole from the
    # spec)
    feet_clearance = RewTerm(
        func=mdp.feet_clearance_body,
        weight=0.0,
        params={"asset_cfg": SceneEntityCfg("robot"), "clearance": 0.1, "standing_height": MISSING, "foot_offset": 0.0},
    )
    gait_contact: RewTerm | None = None  # set with the gait clock (VelocityEnvCfg.gait_period)
    stand_still: RewTerm | None = None  # set with the gait clock when gait_stand_still_weight != 0
    feet_swing_height: RewTerm | None = None  # set with the gait clock when gait_swing_height > 0
    feet_phase: RewTerm | None = None  # set with the gait clock when gait_phase_weight != 0


@configclass
class TerminationsCfg:
    time_out = DoneTerm(func=mdp.time_out, time_out=True)
    base_contact = DoneTerm(
        func=mdp.illegal_contact, params={"sensor_cfg": SceneEntityCfg("contact_forces"), "threshold": 1.0}
    )
    # the sim-to-sim check's fall height (the spec's RobotSpec.fall_height): a crouch the check calls a fall ends the
    # episode in training too. Flat ground only: world z is the height above the ground.
    base_too_low = DoneTerm(func=mdp.root_height_below_minimum, params={"minimum_height": MISSING})


@configclass
class VelocityCurriculumCfg:
    gait_relax: CurrTerm | None = None  # set with env.gait_contact_weight_final or env.gait_relax_rewards
    reward_ramp: CurrTerm | None = None  # set with env.reward_ramps


CLOCK_ONLY = (
    "gait_contact_weight_final",
    "gait_relax_rewards",
    "gait_still_when_standing",
    "gait_stand_still_weight",
    "gait_swing_height",
    "gait_phase_weight",
)


def _field_default(cfg: object, name: str) -> object:
    """A config field's default in ``cfg``'s class (a robot cfg's override of the shared one)."""
    field = type(cfg).__dataclass_fields__[name]
    return field.default_factory() if field.default is MISSING else field.default


@configclass
class VelocityEnvCfg(ManagerBasedRLEnvCfg):
    """50 Hz policy over 200 Hz physics: the rate of Unitree's own controllers and of Isaac Lab's stock tasks."""

    robot: str = MISSING
    """Name of a robot in :data:`sim2real.robots.ROBOTS`: the single source of joints, gains and bodies."""
    sim: SimulationCfg = SimulationCfg(physics=newton_cpu(), device="cpu")
    scene: SceneCfg = SceneCfg(num_envs=256, env_spacing=2.5)
    observations: ObservationsCfg = ObservationsCfg()
    actions: ActionsCfg = ActionsCfg()
    commands: CommandsCfg = CommandsCfg()
    rewards: RewardsCfg = RewardsCfg()
    terminations: TerminationsCfg = TerminationsCfg()
    events: EventsCfg = EventsCfg()
    held_joints: tuple[str, ...] = ()
    """Regexes of robot joints the policy does not command: their PD holds the default pose, in training and on the
    robot (exported as ``action.joints``, the commanded rest). They are still observed. Override in robot cfg."""
    held_swing: dict[str, float] = {}
    """Held joint -> amplitude [rad] of a swing on the gait clock, at ``held_swing_speed`` of commanded forward speed
    and in proportion below it (``mdp.HeldJointPositionAction``; exported as ``action.held_swing``): a walker's arms
    swinging against its legs. Needs the clock. Override in robot cfg."""
    held_swing_speed: float = 1.0  # [m/s]
    slew_limited: bool = False
    """Train behind policy_node's target slew limit (the spec's ``target_rate_fraction`` x no-load speed; exported as
    ``domain_randomization.max_target_rate``, which the sim-to-sim check then applies): a policy whose targets jump
    faster than the node lets them through walks differently, or falls, on the robot. Override in robot cfg."""
    gait_period: float = 0.0
    """Gait clock period [s]; 0: none. With one, the policy and critic observe the phase (``gait_phase``) and each
    foot earns ``gait_contact_weight`` per second for a contact state on the schedule ``gait_offsets`` while the
    command asks for motion: an oscillator the deterministic policy can step with, where without one the exploration
    noise does the stepping early in training (``benchmarks/tracking_gap.py``)."""
    gait_offsets: tuple[float, ...] = ()  # phase offset per foot body, in the spec's foot order. Override in robot cfg.
    gait_contact_weight: float = 0.1  # Override in robot cfg.
    gait_contact_weight_final: float | None = None
    """With the clock: ``gait_contact``'s weight once ``gait_relax_step`` policy steps per env have passed
    (iterations x ``agent.num_steps_per_env``; ``mdp.modify_reward_weights``, whose count a resume continues):
    the clock starts the gait, then leaves the pace to the tracking terms. None: constant."""
    gait_relax_step: int = 0
    gait_relax_rewards: dict[str, float] = {}
    """With the clock: reward weights set at ``gait_relax_step`` too (term name -> weight), e.g. a sharp tracking
    kernel switched on once the clock has started the gait."""
    gait_still_when_standing: bool = False
    """With the clock: the phase observation is (0, 0) while the command asks for no motion (``mdp.gait.MOVING``),
    so a standing robot is not driven to step by it. Exported as ``gait_phase``'s ``still_below``."""
    gait_swing_height: float = 0.0
    """With the clock: target height of a swinging foot's sole above the ground [m] (``feet_swing_height``, on the
    spec's ``foot_frames``); 0: no such term. Override in robot cfg."""
    gait_swing_weight: float = -20.0  # per second, per m^2 of swing-height error, summed over swinging feet
    gait_phase_weight: float = 0.0
    """Weight of ``feet_phase`` (per second): each sole's height follows a swing profile up to
    ``gait_swing_height`` once per period, on its offset; 0: no such term. Override in robot cfg."""
    gait_stand_still_weight: float = 0.0
    """Weight of ``stand_still`` (per second, per rad of joint deviation from the default pose) at zero command,
    with the clock on; 0: no such term. Override in robot cfg."""
    reward_ramps: dict[str, float] = {}
    """Reward weights reached by a linear ramp over ``reward_ramp_steps`` from each term's configured weight (term
    name -> final weight; ``mdp.ramp_reward_weights``): a penalty brought in while the policy learns to walk."""
    reward_ramp_steps: tuple[int, int] = (0, 0)  # ramp start and end, policy steps per env (iterations x 24)

    def __post_init__(self):
        self.decimation = 4
        self.episode_length_s = 20.0
        self.sim.dt = 0.005
        self.sim.render_interval = self.decimation
        self.scene.contact_forces.update_period = self.sim.dt
        if self.robot is not MISSING:
            self.apply_robot(ROBOTS[self.robot])

    def finalize(self) -> None:
        """What depends on overridable fields, applied after the overrides (``sim2real.config.load_task``).
        Override in task cfg (and call super)."""
        self._hold_joints()
        self._scale_actions()
        self._limit_target_rate()
        self._check_yaw_rate_terrains()
        self._add_reward_ramp()
        if self.gait_period > 0:
            self._add_gait_clock()
        else:
            from sim2real.config import ConfigError

            # a clock-only setting left at its robot's default is ignored with the clock off (env.gait_period=0 turns
            # the Go2's off); one set away from it would be silently lost
            without = [name for name in CLOCK_ONLY if getattr(self, name) != _field_default(self, name)]
            if without:
                raise ConfigError(f"env.{', env.'.join(without)} need env.gait_period > 0")

    def _check_yaw_rate_terrains(self) -> None:
        """The command's ``yaw_rate_terrains`` name sub-terrains of this scene's generated terrain."""
        names = self.commands.base_velocity.yaw_rate_terrains
        terrain = getattr(self.scene, "terrain", None)
        sub_terrains = list(terrain.terrain_generator.sub_terrains) if terrain and terrain.terrain_generator else []
        if unknown := sorted(set(names) - set(sub_terrains)):
            from sim2real.config import ConfigError

            raise ConfigError(
                f"env.commands.base_velocity.yaw_rate_terrains: no sub-terrain {unknown[0]!r}; "
                f"sub-terrains: {', '.join(sub_terrains) or 'none (no generated terrain)'}"
            )

    def _check_reward_terms(self, field: str) -> None:
        """Every key of the ``field`` dict (term name -> weight) names a reward term of this task."""
        terms = [name for name, term in vars(self.rewards).items() if term is not None]
        if unknown := sorted(set(getattr(self, field)) - set(terms)):
            from sim2real.config import ConfigError

            raise ConfigError(f"env.{field}: no reward term {unknown[0]!r}; terms: {', '.join(terms)}")

    def _add_reward_ramp(self) -> None:
        """One curriculum term ramping the ``reward_ramps`` terms' weights over ``reward_ramp_steps``."""
        if not self.reward_ramps:
            return
        from sim2real.config import ConfigError

        self._check_reward_terms("reward_ramps")
        start, end = self.reward_ramp_steps
        if both := sorted(set(self.reward_ramps) & set(self.gait_relax_rewards)):
            raise ConfigError(f"env.reward_ramps and env.gait_relax_rewards both set {both[0]!r}")
        if not 0 <= start <= end:
            raise ConfigError(f"env.reward_ramp_steps=[{start},{end}]: need 0 <= start <= end (policy steps per env)")
        if self.curriculum is None:
            self.curriculum = VelocityCurriculumCfg()
        self.curriculum.reward_ramp = CurrTerm(
            func=mdp.ramp_reward_weights,
            params={"weights": dict(self.reward_ramps), "start_step": start, "end_step": end},
        )

    def _hold_joints(self) -> None:
        """The action commands every robot joint but the ``held_joints``."""
        from sim2real.config import ConfigError

        if not self.held_joints:
            if self.held_swing:
                raise ConfigError("env.held_swing swings held joints, and env.held_joints holds none")
            return
        joints = ROBOTS[self.robot].joint_names
        held = [j for j in joints if any(re.fullmatch(pattern, j) for pattern in self.held_joints)]
        unmatched = [p for p in self.held_joints if not any(re.fullmatch(p, j) for j in joints)]
        if unmatched or len(held) == len(joints):
            problem = f"{unmatched} match no joint" if unmatched else "hold every joint"
            raise ConfigError(f"env.held_joints {problem} of {self.robot}: {', '.join(joints)}")
        self.actions.joint_pos.joint_names = [j for j in joints if j not in held]
        self.actions.held = mdp.HeldJointPositionActionCfg(asset_name="robot", joint_names=held)
        if not self.held_swing:
            return
        if unheld := sorted(set(self.held_swing) - set(held)):
            raise ConfigError(f"env.held_swing: {unheld[0]!r} is not a held joint (held: {', '.join(held)})")
        if self.gait_period <= 0 or self.held_swing_speed <= 0:
            raise ConfigError("env.held_swing needs env.gait_period > 0 and env.held_swing_speed > 0")
        self.actions.held.swing_amplitude = dict(self.held_swing)
        self.actions.held.swing_period = self.gait_period
        self.actions.held.swing_speed = self.held_swing_speed

    def _scale_actions(self) -> None:
        """Per-joint action scales where the robot's joint groups set their own (``JointGroup.action_scale``)."""
        term = self.actions.joint_pos
        if not isinstance(term.scale, dict):
            term.scale = ROBOTS[self.robot].action_scale(term.joint_names, term.scale)

    def _limit_target_rate(self) -> None:
        """With ``slew_limited``: the action's targets move no faster than policy_node lets them."""
        if not self.slew_limited:
            return
        term = self.actions.joint_pos
        rates = ROBOTS[self.robot].max_target_rates()
        term.max_target_rate = {j: r for j, r in rates.items() if any(re.fullmatch(p, j) for p in term.joint_names)}

    def _add_gait_clock(self) -> None:
        """The phase observation and the contact-schedule reward; ``gait_period`` > 0. Override in robot cfg (and
        call super) to add more gait terms."""
        from sim2real.config import ConfigError  # a user's override: a one-line error

        feet = list(ROBOTS[self.robot].foot_bodies)
        if len(self.gait_offsets) != len(feet):
            raise ConfigError(f"env.gait_offsets has {len(self.gait_offsets)} values for the {len(feet)} feet {feet}")
        params = {"period": self.gait_period}
        if self.gait_still_when_standing:
            params["still_below"] = mdp.gait.MOVING
        # one term object per group: Isaac Lab writes a group's history_length into its terms
        self.observations.policy.gait_phase = ObsTerm(func=mdp.gait_phase, params=params)
        self.observations.critic.gait_phase = ObsTerm(func=mdp.gait_phase, params=dict(params))
        self.rewards.gait_contact = RewTerm(
            func=mdp.gait_contact,
            weight=self.gait_contact_weight,
            params={
                "sensor_cfg": SceneEntityCfg("contact_forces", body_names=feet, preserve_order=True),  # offsets' order
                "command_name": "base_velocity",
                "period": self.gait_period,
                "offsets": list(self.gait_offsets),
            },
        )
        self._add_gait_relax()
        if self.gait_swing_height > 0:
            self._add_swing_height(feet)
        if self.gait_phase_weight:
            self._add_feet_phase()
        if self.gait_stand_still_weight:
            self.rewards.stand_still = RewTerm(
                func=mdp.stand_still,
                weight=self.gait_stand_still_weight,
                params={"command_name": "base_velocity", "asset_cfg": SceneEntityCfg("robot", joint_names=".*")},
            )

    def _add_gait_relax(self) -> None:
        """One curriculum term switching, at ``gait_relax_step``, the clock's contact weight to its final value and
        the ``gait_relax_rewards`` terms to theirs."""
        self._check_reward_terms("gait_relax_rewards")
        weights = dict(self.gait_relax_rewards)
        if self.gait_contact_weight_final is not None:
            weights["gait_contact"] = self.gait_contact_weight_final
        if weights:
            if self.curriculum is None:
                self.curriculum = VelocityCurriculumCfg()
            self.curriculum.gait_relax = CurrTerm(
                func=mdp.modify_reward_weights, params={"weights": weights, "num_steps": self.gait_relax_step}
            )

    def _add_swing_height(self, feet: list[str]) -> None:
        """Swinging feet pulled to ``gait_swing_height``, as in unitree_rl_gym and MuJoCo Playground."""
        spec = ROBOTS[self.robot]
        self.rewards.feet_swing_height = RewTerm(
            func=mdp.feet_swing_height,
            weight=self.gait_swing_weight,
            params={
                "sensor_cfg": SceneEntityCfg("contact_forces", body_names=feet, preserve_order=True),
                "asset_cfg": _sole_frames(spec),
                "command_name": "base_velocity",
                "target_height": self.gait_swing_height,
                "foot_offset": spec.sole_offset,
            },
        )

    def _add_feet_phase(self) -> None:
        """Soles following the clock's swing profile (MuJoCo Playground's and holosoma's ``feet_phase``)."""
        if self.gait_swing_height <= 0:
            from sim2real.config import ConfigError

            raise ConfigError("env.gait_phase_weight needs env.gait_swing_height > 0: the height of its swing profile")
        spec = ROBOTS[self.robot]
        self.rewards.feet_phase = RewTerm(
            func=mdp.feet_phase,
            weight=self.gait_phase_weight,
            params={
                "asset_cfg": _sole_frames(spec),
                "command_name": "base_velocity",
                "period": self.gait_period,
                "offsets": list(self.gait_offsets),
                "swing_height": self.gait_swing_height,
                "foot_offset": spec.sole_offset,
            },
        )

    def apply_robot(self, spec: RobotSpec) -> None:
        """Point every body- and joint-naming term at ``spec``; called once from ``__post_init__``."""
        self.scene.robot = articulation_cfg(spec)
        base, feet = spec.base_body, list(spec.foot_bodies)
        self.observations.critic.foot_contacts.params["sensor_cfg"].body_names = feet
        self.observations.critic.base_mass.params["asset_cfg"].body_names = base
        self.observations.critic.base_com.params["asset_cfg"].body_names = base
        self.events.added_base_mass.params["asset_cfg"].body_names = base
        self.events.base_com.params["asset_cfg"].body_names = base
        self._point_feet_terms(feet)
        if passive := spec.passive_ranges():
            self.events.joint_dynamics.params["asset_cfg"].joint_names = list(spec.joint_names)
            self.events.joint_dynamics.params["ranges"] = passive
            if spec.implicit_damping_joints():  # their Kd is joint damping too: added on top of the passive sample
                groups = [spec.group_of(j) for j in spec.joint_names]
                kd = [g.damping if g.implicit_damping else 0.0 for g in groups]
                self.events.joint_dynamics.params["controller_damping"] = kd
        else:  # nothing randomised: nothing privileged to observe
            self.events.joint_dynamics = self.observations.critic.joint_dynamics = None
        undesired = [b for b in spec.undesired_contact_bodies if b != base]
        if undesired:
            self.rewards.undesired_contacts.params["sensor_cfg"].body_names = undesired
        else:  # nothing to penalise (an empty body list would select every body)
            self.rewards.undesired_contacts = None
        # after _point_feet_terms, which would point it at the contact bodies (the Go2's calves: its knees)
        self.rewards.feet_clearance.params.update(
            asset_cfg=_sole_frames(spec),
            standing_height=spec.standing_height,
            foot_offset=spec.sole_offset,
        )
        self.terminations.base_contact.params["sensor_cfg"].body_names = [base, *spec.fall_contact_bodies]
        if self.terminations.base_too_low is not None:
            self.terminations.base_too_low.params["minimum_height"] = spec.fall_height
        for term in (self.actions.joint_pos,):
            term.joint_names = list(spec.joint_names)
        for group in (self.observations.policy, self.observations.critic):
            for name in ("joint_pos", "joint_vel", "joint_dynamics"):
                if (term := getattr(group, name, None)) is not None:
                    term.params["asset_cfg"].joint_names = list(spec.joint_names)

    def _point_feet_terms(self, feet: list[str]) -> None:
        """Every reward term with a contact-sensor or body selection named ``feet_*`` acts on the spec's feet."""
        for name in dir(self.rewards):
            term = getattr(self.rewards, name)
            if name.startswith("feet_") and isinstance(term, RewTerm):
                for key in ("sensor_cfg", "asset_cfg"):
                    if key in term.params:
                        term.params[key].body_names = feet
