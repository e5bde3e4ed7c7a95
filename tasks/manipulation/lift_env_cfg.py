"""Lift a cube to a sampled target position with a fixed-base arm and a parallel gripper (Isaac Lab's lift MDP).

Built on the reach task (:class:`ReachEnvCfg`): the same arm from the robot spec, delayed joint-position action, arm
randomisation (PD gains, joint friction, armature, latency) and asymmetric critic. Lift adds a table (the ground
plane, the arm's base stands on it), a procedural cube, a binary open/close gripper action on the spec's
``gripper_joints``, the object observations and Isaac Lab's lift rewards (imported, not copied). Arms subclass
:class:`LiftEnvCfg` and set ``robot``; the spec must set ``ee_body``, ``gripper_joints``, ``finger_bodies`` and
``grasp_offset``. Observation layout: ``docs/tasks.md``.

Differences from Isaac Lab's Franka lift: the cube is spawned procedurally (no Nucleus USD) in several sizes, its
mass and friction are randomised, the critic sees the object's velocity, the finger-object contact forces and the
randomised parameters, and the arm action has the reach task's latency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import MISSING

import isaaclab.sim as sim_utils
from isaaclab.actuators import IdealPDActuatorCfg
from isaaclab.assets import AssetBaseCfg, RigidObjectCfg
from isaaclab.managers import EventTermCfg as EventTerm
from isaaclab.managers import ObservationTermCfg as ObsTerm
from isaaclab.managers import RewardTermCfg as RewTerm
from isaaclab.managers import SceneEntityCfg
from isaaclab.managers import TerminationTermCfg as DoneTerm
from isaaclab.sensors import ContactSensorCfg
from isaaclab.sim.spawners.materials import RigidBodyMaterialBaseCfg
from isaaclab.utils import configclass
from isaaclab.utils.noise import UniformNoiseCfg as Unoise

from sim2real import ASSETS_DIR
from sim2real.robots import JointGroup, RobotSpec
from sim2real.tasks.manipulation import mdp
from sim2real.tasks.manipulation.reach_env_cfg import (
    EE_BODY,
    GRIPPER,
    ActionsCfg,
    CriticObsCfg,
    EventsCfg,
    PolicyObsCfg,
    ReachEnvCfg,
    SceneCfg,
    _arm,
    raise_penalty,
    term_params,
)

GROUND_USD = str(ASSETS_DIR / "ground" / "ground_plane.usda")
COMMAND = "object_pose"
CUBE_SIZES = (0.06, 0.055, 0.05, 0.045, 0.04)
"""Cube edge lengths [m], one per env group; the Panda hand opens to 0.08 m. Largest first: with native MuJoCo,
collision bounding radii (``geom_rbound``) come from world 0, so world 0 must hold the largest cube."""
LIFTED_HEIGHT = 0.05
"""Cube centre height [m] that counts as lifted: 2-3 cm above its resting height (0.02-0.03 m)."""
OBJECT = SceneEntityCfg("object")
FINGERS = SceneEntityCfg("finger_contact")  # the fingers' contact forces with the cube


def cube_spawner(sizes: Sequence[float] = CUBE_SIZES, mass: float = 0.1, friction: float = 1.0):
    """One procedural cube prototype per edge length; each env gets one of them.

    Size randomisation by heterogeneous cloning, not ``randomize_rigid_body_scale``: that event scales each env's
    USD prim before the physics is built, but kit-less Newton replicates the prototypes itself and the stage has
    fewer ``Object`` prims than envs: with ``replicate_physics=False`` the event fails with an IndexError (tried). The
    prototypes are assigned to contiguous env groups (Isaac Lab's sequential clone strategy), so every size trains
    in equal share.
    """
    return sim_utils.MultiAssetSpawnerCfg(
        assets_cfg=[
            sim_utils.CuboidCfg(
                size=(size, size, size),
                rigid_props=sim_utils.UsdPhysicsRigidBodyCfg(),
                collision_props=sim_utils.UsdPhysicsCollisionCfg(),
                mass_props=sim_utils.MassCfg(mass=mass),
                physics_material=RigidBodyMaterialBaseCfg(static_friction=friction, dynamic_friction=friction),
                visual_material=sim_utils.PreviewSurfaceCfg(diffuse_color=(0.8, 0.2, 0.1)),
            )
            for size in sizes
        ],
    )


@configclass
class LiftSceneCfg(SceneCfg):
    """The arm on a table (the ground plane) with a cube in front of it and finger-cube contact sensing."""

    ground = AssetBaseCfg(
        prim_path="/World/ground",
        spawn=sim_utils.GroundPlaneCfg(
            usd_path=GROUND_USD,
            physics_material=RigidBodyMaterialBaseCfg(static_friction=1.0, dynamic_friction=1.0),
        ),
    )
    object = RigidObjectCfg(
        prim_path="{ENV_REGEX_NS}/Object",
        spawn=cube_spawner(),
        # just above the largest cube's resting height: smaller cubes drop <1 cm and settle
        init_state=RigidObjectCfg.InitialStateCfg(pos=(0.5, 0.0, max(CUBE_SIZES) / 2 + 0.002)),
    )
    finger_contact = ContactSensorCfg(
        prim_path=MISSING,  # the spec's finger bodies
        filter_prim_paths_expr=["{ENV_REGEX_NS}/Object"],  # forces between each finger and the cube only
    )


@configclass
class LiftCommandsCfg:
    object_pose = mdp.UniformPoseCommandCfg(
        asset_name="robot",
        body_name=MISSING,  # the spec's ee_body (only for the command's own error metrics)
        resampling_time_range=(5.0, 5.0),
        debug_vis=False,
        ranges=mdp.UniformPoseCommandCfg.Ranges(  # Isaac Lab's Franka lift targets, base frame
            pos_x=(0.4, 0.6), pos_y=(-0.25, 0.25), pos_z=(0.25, 0.5), roll=(0.0, 0.0), pitch=(0.0, 0.0), yaw=(0.0, 0.0)
        ),
    )


@configclass
class LiftActionsCfg(ActionsCfg):
    """The reach arm action plus one open/close gripper action (< 0 closes) at the gripper's speed."""

    gripper = mdp.GripperActionCfg(
        asset_name="robot", joint_names=MISSING, open_command_expr=MISSING, close_command_expr=MISSING, speed=MISSING
    )


@configclass
class LiftPolicyObsCfg(PolicyObsCfg):
    """The reach terms (target = the cube's goal) plus gripper opening and the cube position, as a camera or
    motion-capture pipeline estimates it (noise ±5 mm), in the base frame and from the grasp point."""

    pose_command = ObsTerm(func=mdp.generated_commands, params={"command_name": COMMAND})
    ee_pose_error = None  # the target is the cube's, not the hand's
    gripper_pos = ObsTerm(
        func=mdp.joint_pos_rel,
        params={"asset_cfg": SceneEntityCfg("robot", joint_names=GRIPPER, preserve_order=True)},
        noise=Unoise(n_min=-0.001, n_max=0.001),
    )
    object_position = ObsTerm(func=mdp.object_position_in_robot_root_frame, noise=Unoise(n_min=-0.005, n_max=0.005))
    # where the cube is from the fingers' grasp point, by forward kinematics: without it the actor must learn the
    # hand's position from joint angles to a centimetre, and it closed the hand 2-4 cm off the cube (docs/tasks.md)
    object_to_grasp_point = ObsTerm(
        func=mdp.object_to_grasp_point_b,
        params={"asset_cfg": _arm(body_names=EE_BODY), "grasp_offset": MISSING},
        noise=Unoise(n_min=-0.005, n_max=0.005),
    )


@configclass
class LiftCriticObsCfg(LiftPolicyObsCfg):
    """The policy terms noise-free, plus the cube's state and contacts and this env's randomised physics."""

    object_lin_vel = ObsTerm(func=mdp.root_lin_vel_w, params={"asset_cfg": OBJECT})
    object_ang_vel = ObsTerm(func=mdp.root_ang_vel_w, params={"asset_cfg": OBJECT})
    finger_contact = ObsTerm(func=mdp.contact_force_norm, params={"sensor_cfg": FINGERS})
    object_mass = ObsTerm(func=mdp.body_mass, params={"asset_cfg": OBJECT})
    object_friction = ObsTerm(func=mdp.shape_friction, params={"asset_cfg": OBJECT})
    object_size = ObsTerm(func=mdp.box_size, params={"asset_cfg": OBJECT})
    gain_scale = CriticObsCfg().gain_scale
    joint_friction = CriticObsCfg().joint_friction
    joint_armature = CriticObsCfg().joint_armature
    action_delay = CriticObsCfg().action_delay

    enable_corruption = False  # the policy's terms without their noise


@configclass
class LiftObservationsCfg:
    policy: LiftPolicyObsCfg = LiftPolicyObsCfg()
    critic: LiftCriticObsCfg = LiftCriticObsCfg()


@configclass
class LiftEventsCfg(EventsCfg):
    """The reach randomisation (arm gains, joint friction, armature, start pose) plus the cube's mass and friction;
    its size varies per env by spawning (:func:`cube_spawner`)."""

    hold_fingers = None  # the gripper action drives the fingers
    object_mass = EventTerm(
        func=mdp.randomize_rigid_body_mass,
        mode="startup",
        params={"asset_cfg": OBJECT, "mass_distribution_params": (0.05, 0.25), "operation": "abs"},
    )
    object_friction = EventTerm(
        func=mdp.randomize_rigid_body_material,
        mode="startup",
        params={
            "asset_cfg": OBJECT,
            "static_friction_range": (0.5, 1.2),
            "dynamic_friction_range": (0.5, 1.2),
            "restitution_range": (0.0, 0.0),
            "num_buckets": 64,
        },
    )
    reset_gripper = EventTerm(  # open: an episode may end with the hand closed
        func=mdp.reset_joints_by_offset,
        mode="reset",
        params={
            "asset_cfg": SceneEntityCfg("robot", joint_names=GRIPPER),
            "position_range": (0.0, 0.0),
            "velocity_range": (0.0, 0.0),
        },
    )
    reset_object = EventTerm(
        func=mdp.reset_root_state_uniform,
        mode="reset",
        params={"asset_cfg": OBJECT, "pose_range": {"x": (-0.1, 0.1), "y": (-0.25, 0.25)}, "velocity_range": {}},
    )


@configclass
class LiftRewardsCfg:
    """Isaac Lab's Franka lift rewards and weights (reach the cube, lift it, bring it to the target), with lifting and
    goal tracking paid only while both fingers press on the cube: ungated, a first training run learned to strike the
    cube so that it jumps above the lifted height (``docs/tasks.md``)."""

    reaching_object = RewTerm(
        func=mdp.object_ee_distance,
        weight=1.0,
        params={"std": 0.1, "asset_cfg": _arm(body_names=EE_BODY), "grasp_offset": MISSING},
    )
    # both fingers on the cube pays on its own: the lifting terms pay nothing until a grasp, and without this term
    # the one command's 256-env run reached the cube and never grasped it in 1500 iterations (docs/tasks.md)
    grasping_object = RewTerm(func=mdp.object_in_grasp, weight=2.0, params={"sensor_cfg": FINGERS})
    lifting_object = RewTerm(
        func=mdp.object_is_lifted_in_grasp, weight=15.0, params={"minimal_height": LIFTED_HEIGHT, "sensor_cfg": FINGERS}
    )
    object_goal_tracking = RewTerm(
        func=mdp.object_goal_distance_in_grasp,
        weight=16.0,
        params={
            "std": 0.3,
            "minimal_height": LIFTED_HEIGHT,
            "command_name": COMMAND,
            "sensor_cfg": FINGERS,
            "success_threshold": 0.05,
        },
    )
    object_goal_tracking_fine_grained = RewTerm(
        func=mdp.object_goal_distance_in_grasp,
        weight=5.0,
        params={"std": 0.05, "minimal_height": LIFTED_HEIGHT, "command_name": COMMAND, "sensor_cfg": FINGERS},
    )
    action_rate = RewTerm(func=mdp.action_rate_l2, weight=-1.0e-4)
    joint_vel = RewTerm(func=mdp.joint_vel_l2, weight=-1.0e-4, params={"asset_cfg": _arm()})


@configclass
class LiftTerminationsCfg:
    time_out = DoneTerm(func=mdp.time_out, time_out=True)
    object_dropping = DoneTerm(  # a cube through the table: a physics failure, not an outcome
        func=mdp.root_height_below_minimum, params={"minimum_height": -0.05, "asset_cfg": OBJECT}
    )


@configclass
class LiftCurriculumCfg:
    """Isaac Lab's lift schedule: smoothness penalties grow once the lift is learnt (env steps)."""

    action_rate = raise_penalty("action_rate", -0.1, 10000)
    joint_vel = raise_penalty("joint_vel", -0.1, 10000)


@configclass
class LiftEnvCfg(ReachEnvCfg):
    """50 Hz policy over 200 Hz physics (as reach), 5 s episodes with one target each (Isaac Lab's lift)."""

    scene: LiftSceneCfg = LiftSceneCfg(num_envs=256, env_spacing=2.5)
    observations: LiftObservationsCfg = LiftObservationsCfg()
    actions: LiftActionsCfg = LiftActionsCfg()
    commands: LiftCommandsCfg = LiftCommandsCfg()
    rewards: LiftRewardsCfg = LiftRewardsCfg()
    terminations: LiftTerminationsCfg = LiftTerminationsCfg()
    events: LiftEventsCfg = LiftEventsCfg()
    curriculum: LiftCurriculumCfg = LiftCurriculumCfg()
    cpu_physics: str = "native_mujoco_cpu"
    """Native MuJoCo on the CPU: both presets grasp and hold alike (``tests/test_lift.py``), native steps 4.3x faster
    (64 envs, random actions, 2 busy cores: 6,450 env-steps/s against 1,490 for ``newton_cpu``)."""

    def __post_init__(self):
        super().__post_init__()
        self.episode_length_s = 5.0
        self.scene.finger_contact.update_period = self.sim.dt

    def finalize(self) -> None:
        """Room for a grasp's contacts in whichever physics preset was chosen (``load_task`` calls this after setting
        it): a cube between the fingers makes 40+ contacts and 110+ constraint rows per env (measured), beyond the
        presets' locomotion-sized 35 / 65. MuJoCo-Warp drops what does not fit; native MuJoCo still simulates it but
        stops reporting it to the contact sensor."""
        solver = self.sim.physics.solver_cfg
        solver.nconmax = max(solver.nconmax or 0, 96)
        solver.njmax = max(solver.njmax or 0, 384)

    def apply_robot(self, spec: RobotSpec) -> None:
        """The reach wiring, plus the gripper joints, finger bodies and grasp point of ``spec``."""
        if not (spec.gripper_joints and spec.finger_bodies):
            raise ValueError(f"robot {spec.name!r} has no gripper_joints / finger_bodies: it cannot run the lift task")
        super().apply_robot(spec)
        gripper = self.actions.gripper
        gripper.joint_names = list(spec.gripper_joints)
        gripper.open_command_expr = {j: spec.default_pos(j) for j in spec.gripper_joints}
        gripper.close_command_expr = {j: spec.gripper_closed for j in spec.gripper_joints}
        fingers = spec.group_of(spec.gripper_joints[0])
        gripper.speed = fingers.velocity_limit
        self._gripper_pd(fingers)
        self.scene.finger_contact.prim_path = "{ENV_REGEX_NS}/Robot/.*/(" + "|".join(spec.finger_bodies) + ")"
        for params in term_params(self):
            if "grasp_offset" in params:
                params["grasp_offset"] = tuple(spec.grasp_offset)

    def _gripper_pd(self, fingers: JointGroup) -> None:
        """Plain PD on the fingers in place of their DC-motor model; :class:`~mdp.GripperAction` limits the speed."""
        actuators = self.scene.robot.actuators
        (name,) = [k for k, a in actuators.items() if a.joint_names_expr == [fingers.pattern]]
        actuators[name] = IdealPDActuatorCfg(
            joint_names_expr=[fingers.pattern],
            stiffness=fingers.stiffness,
            damping=fingers.damping,
            actuator_effort_limit=fingers.effort_limit,
        )
