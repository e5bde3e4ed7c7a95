"""Sim-to-sim for a fixed-base arm lifting a cube to a target (a grasping ``ee_pose`` policy: ``action.gripper``).

Each trial puts a cube on the table (the floor the arm's base stands on) at a random spot in front of the arm, with
a random edge length, mass and friction, and samples a target in the trained workspace (``commands.workspace``).
The arm starts at rest in its default pose, hand open. The policy reads the cube's position from the simulation (the
stand-in for perception) and drives the arm, its joint targets slew-limited as policy_node does (the limit the
policy was trained behind, as in the reach check), and, through its last output, the hand: the fingers move towards open
or closed at ``action.gripper.speed`` under the PD training simulated (``action.gripper.stiffness`` ...). A trial
succeeds once the cube's centre has stayed within ``goal_tol`` of the target for ``hold_s`` without a break, within
``episode_s`` (one target per training episode). Passing means a success rate of at least ``min_success``.

The cube and its start area mirror the lift task (``tasks/manipulation/lift_env_cfg.py``: ``CUBE_SIZES``,
``reset_object``; a training-side test keeps them equal); mass and friction ranges come from the file's
``training.domain_randomization`` when it records them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from sim2real_deploy.commands import EE_POSE
from sim2real_deploy.mujoco_robot import EndEffectorFrame, MujocoRobot
from sim2real_deploy.observations import ObservationBuilder, RobotState
from sim2real_deploy.policy_file import OnnxPolicy, PolicyMetadata
from sim2real_deploy.sim2sim.config import Sim2SimError
from sim2real_deploy.sim2sim.episode import SlewLimit, target_steps
from sim2real_deploy.sim2sim.reach import arm_report, command_vector, sample_targets

CUBE = "sim2real_cube"


@dataclass(frozen=True)
class LiftConfig:
    trials: int = 20
    seed: int = 0
    episode_s: float = 5.0  # the lift task's target resampling time: one target per training episode
    hold_s: float = 1.0  # [s] the cube within goal_tol of the target this long, without a break
    goal_tol: float = 0.05  # [m] cube centre to target
    min_success: float = 0.8
    cube_size: tuple[float, float] = (0.04, 0.06)  # [m] edge; the task trains 0.04-0.06
    cube_mass: tuple[float, float] = (0.05, 0.25)  # [kg]; replaced by the recorded training range
    cube_friction: tuple[float, float] = (0.5, 1.2)  # replaced by the recorded training range
    cube_start: tuple[float, float] = (0.5, 0.0)  # [m] base frame, the task's object init position
    cube_start_range: tuple[tuple[float, float], tuple[float, float]] = ((-0.1, 0.1), (-0.25, 0.25))  # x, y
    targets: tuple[tuple[float, ...], ...] = ()  # explicit targets (x, y, z, qw, qx, qy, qz), one per trial
    target_rate_fraction: float | None = None  # the arm's slew limit, as ReachConfig's (None: the trained one)
    mjcf: str | None = None
    out_dir: str | None = None


def _trained_range(meta: PolicyMetadata, event: str, key: str, default: tuple[float, float]) -> tuple[float, float]:
    events = meta.domain_randomization.get("events", {})
    value = events.get(event, {}).get("params", {}).get(key)
    return (float(value[0]), float(value[1])) if value else default


class Gripper:
    """The hand's finger joints under the PD training simulated, their target moving at ``speed`` towards the
    commanded open or closed position (Isaac Lab's binary gripper action with a speed limit)."""

    def __init__(self, robot: MujocoRobot):
        gripper = robot.meta.gripper
        missing = [k for k in ("stiffness", "damping", "effort_limit") if k not in gripper]
        if missing:
            raise Sim2SimError(f"the policy file's action.gripper lacks {missing}: re-export it")
        model = robot.model
        joints = [model.joint(name).id for name in gripper["joints"]]
        self.qpos = np.array([model.jnt_qposadr[j] for j in joints])
        self.dof = np.array([model.jnt_dofadr[j] for j in joints])
        self.act = np.array([_joint_motor(model, j) for j in joints])
        self.open, self.speed = np.array(gripper["open"]), float(gripper["speed"])
        self.kp, self.kd, self.limit = (float(gripper[k]) for k in ("stiffness", "damping", "effort_limit"))
        self.robot, self.target, self.goal = robot, self.open.copy(), self.open.copy()

    def reset(self) -> None:
        self.robot.data.qpos[self.qpos] = self.open
        self.target, self.goal = self.open.copy(), self.open.copy()

    def command(self, goal: np.ndarray) -> None:
        self.goal = goal

    def apply(self, dt: float) -> None:
        """Move the target one physics step towards the goal and set the finger torques for the next step."""
        step = self.speed * dt
        self.target = self.target + np.clip(self.goal - self.target, -step, step)
        data = self.robot.data
        tau = self.kp * (self.target - data.qpos[self.qpos]) - self.kd * data.qvel[self.dof]
        data.ctrl[self.act] = np.clip(tau, -self.limit, self.limit) / self.robot.model.actuator_gear[self.act, 0]

    @property
    def position(self) -> np.ndarray:
        return self.robot.data.qpos[self.qpos].copy()


def _joint_motor(model: mujoco.MjModel, joint: int) -> int:
    motors = [a for a in range(model.nu) if model.actuator_trntype[a] == 0 and model.actuator_trnid[a, 0] == joint]
    if len(motors) != 1:
        raise Sim2SimError(f"finger joint {model.joint(joint).name!r} has {len(motors)} joint motors, expected 1")
    return motors[0]


def add_cube(spec: mujoco.MjSpec) -> None:
    """A free cube (resized per trial) and no actuator but the joint motors on the fingers: an MJCF's own hand
    actuator (the Panda's tendon servo) would fight the simulated PD."""
    for actuator in list(spec.actuators):
        if actuator.trntype == mujoco.mjtTrn.mjTRN_TENDON:
            spec.delete(actuator)
    for key in list(spec.keys):  # keyframe ctrl no longer fits the actuators
        spec.delete(key)
    body = spec.worldbody.add_body(name=CUBE, pos=[0.5, 0.0, 0.03])
    body.add_freejoint()
    body.add_geom(name=CUBE, type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.03] * 3, mass=0.1, rgba=[0.8, 0.2, 0.1, 1])


def run_lift(policy_path: str | Path, cfg: LiftConfig | None = None) -> dict[str, Any]:
    """Every trial once; the report has each trial's outcome, the success rate and the verdict."""
    cfg = cfg or LiftConfig()
    policy = OnnxPolicy(policy_path)
    meta = policy.metadata
    if meta.floating_base or meta.command_interface != EE_POSE.name or not meta.gripper:
        raise Sim2SimError(f"{policy_path}: the lift check is for fixed-base ee_pose policies with a gripper")
    robot = MujocoRobot.from_metadata(meta, cfg.mjcf, extend=add_cube)
    gripper, observe = Gripper(robot), ObservationBuilder.from_metadata(meta)
    rng = np.random.default_rng(cfg.seed)
    targets = np.array(cfg.targets) if cfg.targets else sample_targets(meta, cfg.trials, rng)
    mass, friction = _cube_ranges(meta, cfg)
    rows = [
        _trial(policy, robot, gripper, observe, target, _sample_cube(cfg, mass, friction, rng), cfg)
        for target in targets
    ]
    success = float(np.mean([r["success"] for r in rows]))
    failed = [] if success >= cfg.min_success else [f"success rate {success:.2f} < {cfg.min_success}"]
    cube_ranges = {"size": list(cfg.cube_size), "mass": list(mass), "friction": list(friction)}
    return arm_report(policy_path, robot, failed, cfg, success_rate=success, cube_ranges=cube_ranges, trials=rows)


def nominal_cube(meta: PolicyMetadata, cfg: LiftConfig | None = None) -> dict[str, float]:
    """The middle of every trial range, at the start spot's centre (the ROS bridge's cube)."""
    cfg = cfg or LiftConfig()
    mass, friction = _cube_ranges(meta, cfg)
    x, y = cfg.cube_start
    return {
        "size": float(np.mean(cfg.cube_size)),
        "mass": float(np.mean(mass)),
        "friction": float(np.mean(friction)),
        "x": x,
        "y": y,
    }


def _cube_ranges(meta: PolicyMetadata, cfg: LiftConfig) -> tuple[tuple[float, float], tuple[float, float]]:
    """Cube mass and friction ranges: the ones recorded in the file's training randomisation, else the config's."""
    mass = _trained_range(meta, "object_mass", "mass_distribution_params", cfg.cube_mass)
    friction = _trained_range(meta, "object_friction", "static_friction_range", cfg.cube_friction)
    return mass, friction


def reset_with_cube(robot: MujocoRobot, gripper: Gripper, cube: dict[str, float], keyframe: str = "") -> None:
    """Arm at rest (``keyframe`` if the model keeps it), hand open, ``cube`` on the table at its start spot."""
    _resize_cube(robot, cube)
    robot.reset(keyframe=keyframe)
    gripper.reset()
    _put_cube(robot, cube)


def _sample_cube(cfg: LiftConfig, mass: tuple, friction: tuple, rng: np.random.Generator) -> dict[str, float]:
    (xlo, xhi), (ylo, yhi) = cfg.cube_start_range
    return {
        "size": float(rng.uniform(*cfg.cube_size)),
        "mass": float(rng.uniform(*mass)),
        "friction": float(rng.uniform(*friction)),
        "x": cfg.cube_start[0] + float(rng.uniform(xlo, xhi)),
        "y": cfg.cube_start[1] + float(rng.uniform(ylo, yhi)),
    }


def _resize_cube(robot: MujocoRobot, cube: dict[str, float]) -> None:
    """This trial's cube; before the reset (recomputing the model's derived constants resets the pose)."""
    model, data = robot.model, robot.data
    geom, body = model.geom(CUBE).id, model.body(CUBE).id
    half = cube["size"] / 2
    model.geom_size[geom] = half
    model.geom_rbound[geom] = half * np.sqrt(3)
    model.body_mass[body] = cube["mass"]
    model.body_inertia[body] = cube["mass"] * cube["size"] ** 2 / 6
    mujoco.mj_setConst(model, data)


def _put_cube(robot: MujocoRobot, cube: dict[str, float]) -> None:
    """At rest on the table at its start spot (the arm's base frame is the world's: a fixed base at the origin), with
    its friction (after the robot's reset, which restores every geom's nominal friction)."""
    model, data = robot.model, robot.data
    model.geom_friction[model.geom(CUBE).id, 0] = cube["friction"]
    adr = model.jnt_qposadr[model.body_jntadr[model.body(CUBE).id]]
    data.qpos[adr : adr + 7] = [cube["x"], cube["y"], cube["size"] / 2, 1, 0, 0, 0]
    data.qvel[model.jnt_dofadr[model.body_jntadr[model.body(CUBE).id]] :][:6] = 0
    mujoco.mj_forward(model, data)


def _cube_in_base(robot: MujocoRobot) -> np.ndarray:
    """The cube's position in the arm's base frame: what perception would report."""
    return EndEffectorFrame(robot).body_pose(robot.model.body(CUBE).id)[0]


def _trial(
    policy: OnnxPolicy,
    robot: MujocoRobot,
    gripper: Gripper,
    observe: ObservationBuilder,
    target: np.ndarray,
    cube: dict[str, float],
    cfg: LiftConfig,
) -> dict[str, Any]:
    meta, dt = robot.meta, robot.model.opt.timestep
    reset_with_cube(robot, gripper, cube)
    command, last_action = command_vector(meta, target), np.zeros(meta.num_actions)
    steps, needed = round(cfg.episode_s / meta.control_dt), round(cfg.hold_s / meta.control_dt)
    held, best, lifted = 0, np.inf, 0.0
    slew = SlewLimit(target_steps(meta, cfg.target_rate_fraction), start=robot.q)
    for k in range(steps):
        cube_pos = _cube_in_base(robot)
        state = RobotState(robot.q.copy(), robot.qd.copy(), gripper_pos=gripper.position, object_pos_b=cube_pos)
        last_action = meta.clip_action(np.asarray(policy(observe(state, command, last_action, tick=k)), np.float64))
        gripper.command(meta.gripper_targets(last_action))
        arm_target = slew(meta.targets_from_actions(last_action))
        for _ in range(robot.decimation):
            gripper.apply(dt)
            robot.physics_step(arm_target)
        distance = float(np.linalg.norm(_cube_in_base(robot) - target[:3]))
        best, lifted = min(best, distance), max(lifted, float(cube_pos[2]) - cube["size"] / 2)
        held = held + 1 if distance <= cfg.goal_tol else 0
        if held >= needed:
            return {**_rounded(cube, target), "success": True, "time_s": round((k + 1) * meta.control_dt, 2)}
    return {**_rounded(cube, target), "success": False, "closest_m": round(best, 4), "max_lift_m": round(lifted, 4)}


def _rounded(cube: dict[str, float], target: np.ndarray) -> dict[str, Any]:
    return {"cube": {k: round(v, 4) for k, v in cube.items()}, "target": np.round(target, 4).tolist()}
