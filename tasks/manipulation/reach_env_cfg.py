"""End-effector pose tracking (reach) for a fixed-base arm, built from Isaac Lab's reach MDP terms.

Arms subclass :class:`ReachEnvCfg` and set ``robot`` (a :class:`~sim2real.robots.RobotSpec` with ``ee_body``);
joints and the end-effector body come from the spec in ``__post_init__``. Every ``pos_*`` / orientation range of the
command is in the robot's base frame. Observation layout: ``docs/tasks.md``.

Differences from Isaac Lab's reach: no success termination (the target is resampled every 4 s and the policy must
hold it, which is what a deployed arm does), an asymmetric critic, and domain randomisation on by default.
"""

from __future__ import annotations

import math
from dataclasses import MISSING

from isaaclab.assets import ArticulationCfg
from isaaclab.envs import ManagerBasedRLEnvCfg
from isaaclab.managers import CurriculumTermCfg as CurrTerm
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationGroupCfg as ObsGroup
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.scene import InteractiveSceneCfg
from isaaclab.sim import SimulationCfg
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg as Unoise

from sim2real.robots import ROBOTS, RobotSpec
from sim2real.robots.isaaclab import articulation_cfg
from sim2real.tasks.manipulation import mdp
from sim2real.tasks.physics import newton_cpu

COMMAND = "ee_pose"
EE_BODY = "{ee_body}"
"""Body-name placeholder in a term's robot ``SceneEntityCfg``: replaced by the spec's ``ee_body``."""
GRIPPER = "{gripper_joints}"
"""Joint-name placeholder in a term's robot ``SceneEntityCfg``: replaced by the spec's ``gripper_joints``."""


def _arm(**kwargs) -> SceneEntityCfg:
    """The arm's policy joints (``joint_names`` left None, filled in from the robot spec); ``body_names=EE_BODY``
    selects the end-effector body."""
    return SceneEntityCfg("robot", preserve_order=True, **kwargs)


@configclass
class SceneCfg(InteractiveSceneCfg):
    """The arm alone: fixed base, no table. Targets stay >= 0.15 m above the base, and skipping contacts with a
    table keeps the CPU physics cheap; a table belongs to the manipulation (lift) task."""

    robot: ArticulationCfg = MISSING  # set from the robot spec


@configclass
class CommandsCfg:
    ee_pose = mdp.UniformPoseCommandCfg(
        asset_name="robot",
        body_name=MISSING,  # the spec's ee_body
        resampling_time_range=(4.0, 4.0),
        debug_vis=False,
        ranges=mdp.UniformPoseCommandCfg.Ranges(  # Isaac Lab's Franka reach workspace, hand pointing down
            pos_x=(0.35, 0.65),
            pos_y=(-0.2, 0.2),
            pos_z=(0.15, 0.5),
            roll=(0.0, 0.0),
            pitch=(math.pi, math.pi),
            # half a turn of hand yaw about joint7's mid-range (Isaac Lab: a full turn): a parallel gripper grasps
            # alike every half turn, and beyond it joint7 (+-2.9 rad) stops the wrist (docs/tasks.md)
            yaw=(-1.25 * math.pi, -0.25 * math.pi),
        ),
    )


@configclass
class ActionsCfg:
    """Joint position targets around the default pose; a 0-1 step latency as a ROS control loop adds."""

    joint_pos = mdp.DelayedJointPositionActionCfg(
        asset_name="robot",
        joint_names=MISSING,
        scale=0.5,
        use_default_offset=True,
        preserve_order=True,
        delay_range=(0, 1),
    )


@configclass
class PolicyObsCfg(ObsGroup):
    """Joint encoders, the target pose and the hand's error to it in the base frame, and the last action, with noise."""

    joint_pos = ObsTerm(func=mdp.joint_pos_rel, params={"asset_cfg": _arm()}, noise=Unoise(n_min=-0.01, n_max=0.01))
    joint_vel = ObsTerm(func=mdp.joint_vel_rel, params={"asset_cfg": _arm()}, noise=Unoise(n_min=-0.05, n_max=0.05))
    pose_command = ObsTerm(func=mdp.generated_commands, params={"command_name": COMMAND})
    ee_pose_error = ObsTerm(  # where the hand is, by forward kinematics: the actor need not learn it to a centimetre
        func=mdp.ee_pose_error_b,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY)},
        noise=Unoise(n_min=-0.005, n_max=0.005),
    )
    actions = ObsTerm(func=mdp.last_action)

    enable_corruption = True  # each term's sensor noise


@configclass
class CriticObsCfg(PolicyObsCfg):
    """The policy terms noise-free, plus this env's randomised physics."""

    gain_scale = ObsTerm(func=mdp.actuator_gain_scale)
    joint_friction = ObsTerm(func=mdp.joint_friction, params={"asset_cfg": _arm()})
    joint_armature = ObsTerm(func=mdp.joint_armature, params={"asset_cfg": _arm()})
    action_delay = ObsTerm(func=mdp.action_delay)

    enable_corruption = False  # the policy's terms without their noise


@configclass
class ObservationsCfg:
    policy: PolicyObsCfg = PolicyObsCfg()
    critic: CriticObsCfg = CriticObsCfg()


@configclass
class EventsCfg:
    """Domain randomisation, on by default; every range is a config field."""

    motor_strength = EventTerm(
        func=mdp.randomize_actuator_gains,
        mode="startup",
        params={
            "asset_cfg": _arm(),
            "stiffness_distribution_params": (0.8, 1.2),
            "damping_distribution_params": (0.8, 1.2),
            "operation": "scale",
        },
    )
    joint_friction = EventTerm(  # the MJCF has none; real harmonic drives have a few tenths of a N m
        func=mdp.randomize_joint_parameters,
        mode="startup",
        params={"asset_cfg": _arm(), "friction_distribution_params": (0.0, 0.3), "operation": "add"},
    )
    joint_armature = EventTerm(
        func=mdp.randomize_joint_parameters,
        mode="startup",
        params={"asset_cfg": _arm(), "armature_distribution_params": (0.8, 1.2), "operation": "scale"},
    )
    hold_fingers = EventTerm(func=mdp.hold_unactuated_joints, mode="reset")
    reset_joints = EventTerm(
        func=mdp.reset_joints_by_offset,
        mode="reset",
        params={"asset_cfg": _arm(), "position_range": (-0.2, 0.2), "velocity_range": (0.0, 0.0)},
    )


@configclass
class RewardsCfg:
    """Isaac Lab's reach rewards (coarse L2 position and orientation errors, a fine tanh position kernel), and
    sharper position and orientation kernels that the curriculum switches on."""

    ee_position_error = RewTerm(
        func=mdp.position_command_error,
        weight=-0.2,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY)},
    )
    ee_position_fine = RewTerm(
        func=mdp.position_command_error_tanh,
        weight=0.1,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY), "std": 0.1},
    )
    ee_orientation_error = RewTerm(
        func=mdp.orientation_command_error,
        weight=-0.1,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY)},
    )
    ee_position_sharp = RewTerm(  # switched on by the curriculum, once the hand finds its targets
        func=mdp.position_command_error_tanh,
        weight=0.0,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY), "std": 0.05},
    )
    ee_orientation_fine = RewTerm(  # switched on by the curriculum, once the hand finds its targets
        func=mdp.orientation_command_error_tanh,
        weight=0.0,
        params={"command_name": COMMAND, "asset_cfg": _arm(body_names=EE_BODY), "std": 0.2},
    )
    action_rate = RewTerm(func=mdp.action_rate_l2, weight=-1.0e-4)
    joint_vel = RewTerm(func=mdp.joint_vel_l2, weight=-1.0e-4, params={"asset_cfg": _arm()})


@configclass
class TerminationsCfg:
    time_out = DoneTerm(func=mdp.time_out, time_out=True)


def raise_penalty(term_name: str, weight: float, num_steps: int) -> CurrTerm:
    """Set reward term ``term_name`` to ``weight`` after ``num_steps`` env steps (Isaac Lab's schedule term)."""
    return CurrTerm(
        func=mdp.modify_reward_weight, params={"term_name": term_name, "weight": weight, "num_steps": num_steps}
    )


@configclass
class CurriculumCfg:
    """Smoothness penalties grow once tracking is learnt (Isaac Lab's reach schedule, in env steps). After 1000
    iterations (24 steps each) sharp kernels pay for the last centimetres and the hand's turn: on from the start,
    they keep the hand from finding its targets (docs/tasks.md)."""

    action_rate = raise_penalty("action_rate", -0.005, 4500)
    joint_vel = raise_penalty("joint_vel", -0.001, 4500)
    ee_position_fine = raise_penalty("ee_position_fine", 0.0, 24_000)
    ee_position_sharp = raise_penalty("ee_position_sharp", 0.2, 24_000)
    ee_orientation_fine = raise_penalty("ee_orientation_fine", 0.1, 24_000)


@configclass
class ReachEnvCfg(ManagerBasedRLEnvCfg):
    """50 Hz policy over 200 Hz physics, 12 s episodes of three 4 s targets."""

    robot: str = MISSING
    """Name of an arm in :data:`sim2real.robots.ROBOTS` (its spec must set ``ee_body``)."""
    sim: SimulationCfg = SimulationCfg(physics=newton_cpu(), device="cpu")
    scene: SceneCfg = SceneCfg(num_envs=256, env_spacing=2.5)
    observations: ObservationsCfg = ObservationsCfg()
    actions: ActionsCfg = ActionsCfg()
    commands: CommandsCfg = CommandsCfg()
    rewards: RewardsCfg = RewardsCfg()
    terminations: TerminationsCfg = TerminationsCfg()
    events: EventsCfg = EventsCfg()
    curriculum: CurriculumCfg = CurriculumCfg()

    def __post_init__(self):
        self.decimation = 4
        self.episode_length_s = 12.0
        self.sim.dt = 0.005
        self.sim.render_interval = self.decimation
        if self.robot is not MISSING:
            self.apply_robot(ROBOTS[self.robot])

    def apply_robot(self, spec: RobotSpec) -> None:
        """Point every joint- and body-naming term at ``spec``; called once from ``__post_init__``."""
        if not spec.ee_body:
            raise ValueError(f"robot {spec.name!r} has no ee_body: it cannot run the reach task")
        self.scene.robot = articulation_cfg(spec)
        for command in vars(self.commands).values():  # pose commands report the end effector's tracking error
            command.body_name = spec.ee_body
        self.actions.joint_pos.joint_names = list(spec.joint_names)
        self.actions.joint_pos.scale = spec.action_scale(spec.joint_names, self.actions.joint_pos.scale)
        self.actions.joint_pos.max_target_rate = spec.max_target_rates()  # learn behind policy_node's slew limit
        for cfg in _robot_entity_cfgs(self):
            if cfg.joint_names is None:
                cfg.joint_names = list(spec.joint_names)
            elif cfg.joint_names == GRIPPER:
                cfg.joint_names = list(spec.gripper_joints)
            if cfg.body_names == EE_BODY:
                cfg.body_names = [spec.ee_body]


def term_params(env: ManagerBasedRLEnvCfg) -> list[dict]:
    """Parameters of every observation, event and reward term."""
    groups = (env.observations.policy, env.observations.critic, env.events, env.rewards)
    terms = [t for group in groups for t in vars(group).values() if hasattr(t, "params")]
    return [t.params for t in terms]


def _robot_entity_cfgs(env: ManagerBasedRLEnvCfg) -> list[SceneEntityCfg]:
    """The robot ``SceneEntityCfg`` of every term (other scene entities, e.g. a lift task's object, are skipped)."""
    cfgs = [v for params in term_params(env) for v in params.values() if isinstance(v, SceneEntityCfg)]
    return [cfg for cfg in cfgs if cfg.name == "robot"]
