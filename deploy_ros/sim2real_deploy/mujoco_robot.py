"""A policy's robot in native MuJoCo, from its MJCF: the simulated robot of sim-to-sim and ``mujoco_bridge``.

Joints are bound to the MJCF by name; torques come from the metadata's actuator model (:mod:`actuators`) at the
physics rate, so both consumers simulate the motor training used. What a robot measures is read as a
:class:`~sim2real_deploy.observations.RobotState`. The MJCF contract is checked, not assumed: every policy joint
exists; each gets one torque motor at scene build (the MJCF's own, or one added in place of none or of a
servo);
a floating-base policy needs exactly one free joint. Needs ``mujoco``; no torch, no ROS.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from sim2real_deploy.actuators import Actuator
from sim2real_deploy.observations import RobotState
from sim2real_deploy.policy_file import JOINT_DYNAMICS_KEYS, PolicyFileError, PolicyMetadata

if TYPE_CHECKING:
    from sim2real_deploy.sim2sim.terrain import TerrainGround


class RobotModelError(PolicyFileError):
    """The MJCF does not fit the policy (missing joint, no free joint, two motors on one joint, ...)."""


def find_mjcf(relative: str | Path, override: str | Path | None = None) -> Path:
    """The metadata's ``robot.mjcf`` (relative to the project root), searched from the working directory and from
    this package upwards; ``override`` wins when given."""
    if override:
        path = Path(override)
        if not path.is_file():
            raise RobotModelError(f"robot MJCF {path} not found")
        return path
    for base in (Path.cwd(), *Path.cwd().parents, *Path(__file__).resolve().parents):
        if (base / relative).is_file():
            return base / relative
    raise RobotModelError(f"robot MJCF '{relative}' not found from {Path.cwd()} or this package: pass its path")


def motors_on(model: mujoco.MjModel, joint: int) -> list[int]:
    """Actuators driving ``joint`` directly (joint transmission)."""
    return [
        a
        for a in range(model.nu)
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT and model.actuator_trnid[a, 0] == joint
    ]


def _is_torque_motor(model: mujoco.MjModel, a: int) -> bool:
    """ctrl is the joint torque times the gear: fixed unit gain, no bias, no activation dynamics."""
    return (
        model.actuator_gaintype[a] == mujoco.mjtGain.mjGAIN_FIXED
        and model.actuator_gainprm[a, 0] == 1.0
        and model.actuator_biastype[a] == 0
        and model.actuator_dyntype[a] == 0
    )


def _fit_motors(spec: mujoco.MjSpec, joint_names: Sequence[str]) -> None:
    """Give every policy joint one torque motor: keep the MJCF's own, replace a servo (position/velocity
    actuator) by one, add one where the MJCF has none (gear 1, no ctrl limit)."""
    model, actuators = spec.compile(), list(spec.actuators)  # model actuator a is actuators[a]
    names = [a.name for a in actuators]
    for joint in joint_names:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if jid < 0:
            raise RobotModelError(f"policy joint {joint!r} is not in the MJCF")
        on_joint = motors_on(model, jid)
        if len(on_joint) == 1 and _is_torque_motor(model, on_joint[0]):
            continue
        for a in on_joint:
            spec.delete(actuators[a])
        spec.add_actuator(name=f"sim2real_motor_{joint}", target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    _remap_keyframe_ctrl(spec, names)


def _remap_keyframe_ctrl(spec: mujoco.MjSpec, old_names: list[str]) -> None:
    """Keyframe ctrl follows its actuators by name after motors were replaced (new motors start at 0)."""
    new_names = [a.name for a in spec.actuators]
    if new_names == old_names or not all(old_names):
        return
    for key in spec.keys:
        if len(key.ctrl) == len(old_names):
            by_name = dict(zip(old_names, key.ctrl, strict=True))
            key.ctrl = [by_name.get(name, 0.0) for name in new_names]


def build_scene(
    mjcf: str | Path,
    physics_dt: float,
    joint_names: Sequence[str],
    floor: bool = True,
    extend: Callable[[mujoco.MjSpec], None] | None = None,
) -> mujoco.MjModel:
    """The robot MJCF (its own contact options kept) plus a floor and a light, with one torque motor per joint of
    ``joint_names`` (see :func:`_fit_motors`); ``extend(spec)`` adds to the scene (a task's objects)."""
    spec = mujoco.MjSpec.from_file(str(mjcf))
    spec.option.timestep = physics_dt
    _fit_motors(spec, joint_names)
    if extend is not None:
        extend(spec)
    if floor:
        spec.add_texture(
            name="sim2sim_grid",
            type=mujoco.mjtTexture.mjTEXTURE_2D,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
            rgb1=[0.2, 0.3, 0.4],
            rgb2=[0.1, 0.2, 0.3],
            width=300,
            height=300,
        )
        material = spec.add_material(name="sim2sim_grid", texrepeat=[5, 5], texuniform=True)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "sim2sim_grid"
        spec.worldbody.add_geom(
            name="sim2sim_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], material="sim2sim_grid"
        )
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    return spec.compile()


# passive joint properties, by the metadata's names (training.domain_randomization.joint_dynamics) -> MuJoCo's
DOF_FIELDS = dict(zip(JOINT_DYNAMICS_KEYS, ("dof_damping", "dof_frictionloss", "dof_armature"), strict=True))


def feet_on_floor_height(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """For the pose in ``data.qpos`` with the base at z = 0: the base height at which the robot's lowest collision
    geom (bounding box) is 5 mm above the floor."""
    mujoco.mj_kinematics(model, data)
    lowest = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] == 0 or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        rot_z = data.geom_xmat[g].reshape(3, 3)[2]
        center, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        lowest = min(lowest, data.geom_xpos[g, 2] + rot_z @ center - np.abs(rot_z) @ half)
    return float(-lowest + 0.005)


class MujocoRobot:
    """MuJoCo model + data with the policy's joints bound by name and its actuator model at the physics rate."""

    def __init__(self, model: mujoco.MjModel, meta: PolicyMetadata, limit_tolerance: float = 0.0):
        self.model, self.data, self.meta = model, mujoco.MjData(model), meta
        self.mjcf_path: Path | None = None  # set by from_metadata
        self.limit_tolerance = limit_tolerance
        self.decimation = decimation(meta.control_dt, model.opt.timestep)
        self._bind_base(meta.floating_base)
        self._bind_joints(meta.joint_names)
        self.actuator = Actuator.from_metadata(meta)
        self.default_pos = meta.joint_array("default_joint_pos")
        self.limits = meta.joint_array("joint_pos_limits")
        self.nominal_friction = model.geom_friction[:, 0].copy()
        self.nominal_joint_dynamics = {key: getattr(model, f)[self.dof_adr].copy() for key, f in DOF_FIELDS.items()}
        self.nominal_base_mass = float(model.body_mass[self.base_body]) if self.base_body is not None else 0.0
        self.implicit_kd = np.where(meta.implicit_damping, meta.joint_array("damping"), 0.0)  # Kd as joint damping
        model.dof_damping[self.dof_adr] += self.implicit_kd  # into this model: one MujocoRobot per model
        self.ground: TerrainGround | None = None  # terrain height under (x, y); None: the floor at z = 0
        self.scan_points = meta.scan_points  # where a perceptive policy samples the ground; None: blind
        self.reset_counters()

    @classmethod
    def from_metadata(
        cls,
        meta: PolicyMetadata,
        mjcf: str | Path | None = None,
        physics_dt: float | None = None,
        extend: Callable[[mujoco.MjSpec], None] | None = None,
        floor: bool = True,
        **kwargs,
    ) -> MujocoRobot:
        """The policy's robot from its MJCF; a grasping policy's finger joints get torque motors too (driven by
        :class:`Gripper`), and ``extend`` adds a task's objects (or, with ``floor=False``, the ground itself)."""
        path = find_mjcf(meta.raw["robot"]["mjcf"], mjcf)
        motored = [*meta.joint_names, *(meta.gripper["joints"] if meta.gripper else ())]
        model = build_scene(path, physics_dt or meta.physics_dt, motored, floor=floor, extend=extend)
        robot = cls(model, meta, **kwargs)
        robot.mjcf_path = path
        return robot

    # ----- binding -----
    def _bind_base(self, floating: bool) -> None:
        free = [j for j in range(self.model.njnt) if self.model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        if floating and len(free) != 1:
            raise RobotModelError(f"a floating-base policy needs one free joint in the MJCF, found {len(free)}")
        if not floating:
            self.base_body = self.base_qpos = self.base_dof = None
            return
        self.base_body = int(self.model.jnt_bodyid[free[0]])
        self.base_qpos = int(self.model.jnt_qposadr[free[0]])
        self.base_dof = int(self.model.jnt_dofadr[free[0]])

    def _bind_joints(self, names: Sequence[str]) -> None:
        """Addresses of each policy joint and of the one motor driving it, matched by joint name."""
        qpos, dof, act, gear = [], [], [], []
        for name in names:
            joint = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, name)
            if joint < 0:
                raise RobotModelError(f"policy joint {name!r} is not in the MJCF")
            motors = motors_on(self.model, joint)
            if len(motors) != 1:
                raise RobotModelError(f"joint {name!r} is driven by {len(motors)} actuators in the MJCF, expected 1")
            qpos.append(self.model.jnt_qposadr[joint])
            dof.append(self.model.jnt_dofadr[joint])
            act.append(motors[0])
            gear.append(self.model.actuator_gear[motors[0], 0])
        self.qpos_adr, self.dof_adr = np.array(qpos), np.array(dof)
        self.act_id, self.gear = np.array(act), np.array(gear)

    # ----- episodes -----
    def standing_height(self) -> float:
        """Base height at which the lowest collision geom just touches z = 0 in the default pose (+5 mm)."""
        self._set_pose(0.0)
        return feet_on_floor_height(self.model, self.data)

    def _set_pose(self, base_height: float) -> None:
        self.data.qpos[:] = self.model.qpos0
        if self.base_qpos is not None:
            self.data.qpos[self.base_qpos : self.base_qpos + 7] = [0, 0, base_height, 1, 0, 0, 0]
        self.data.qpos[self.qpos_adr] = self.default_pos

    def reset(self, base_height: float | None = None, friction: float | None = None, keyframe: str = "") -> None:
        """At rest in the MJCF keyframe ``keyframe`` if given and present, else in the default pose with the base
        level at ``base_height`` (None: feet just touching the floor); per-episode counters cleared."""
        self.model.geom_friction[:, 0] = self.nominal_friction if friction is None else friction
        key = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, keyframe) if keyframe else -1
        if key >= 0:
            mujoco.mj_resetDataKeyframe(self.model, self.data, key)
        else:
            height = self.standing_height() if base_height is None and self.base_qpos is not None else base_height
            mujoco.mj_resetData(self.model, self.data)
            self._set_pose(height or 0.0)
        mujoco.mj_forward(self.model, self.data)
        self.reset_counters()

    def set_dynamics(
        self,
        payload_kg: float = 0.0,
        kp_scale: np.ndarray | float = 1.0,
        kd_scale: np.ndarray | float = 1.0,
        joint_dynamics: dict[str, np.ndarray] | None = None,
    ) -> None:
        """Perturb the physics from nominal: mass added to the base, actuator gains scaled per joint, and absolute
        per-joint passive dynamics (``DOF_FIELDS`` keys; missing ones nominal). No arguments: all nominal. Call
        before :meth:`reset`: recomputing the model's derived constants (``mj_setConst``) resets the pose. A joint's
        Kd simulated as joint damping (``implicit_kd``) is scaled by ``kd_scale`` (a driver's gain error; training keeps
        it nominal) and added to its passive damping."""
        nominal = Actuator.from_metadata(self.meta)
        self.actuator.kp, self.actuator.kd = nominal.kp * kp_scale, nominal.kd * kd_scale
        for key, field in DOF_FIELDS.items():
            getattr(self.model, field)[self.dof_adr] = (joint_dynamics or {}).get(key, self.nominal_joint_dynamics[key])
        self.model.dof_damping[self.dof_adr] += self.implicit_kd * kd_scale
        if self.base_body is not None:
            self.model.body_mass[self.base_body] = self.nominal_base_mass + payload_kg
        mujoco.mj_setConst(self.model, self.data)

    def reset_counters(self) -> None:
        self.max_torque = np.zeros(len(self.act_id))
        self.violations = np.zeros(len(self.act_id), dtype=int)
        self.violation_steps = 0

    # ----- stepping -----
    def physics_step(self, target: np.ndarray | None) -> np.ndarray:
        """One physics step of the actuator model towards ``target`` (policy order; None: no torque). Returns the
        joint torques. Torques go to each joint's own motor divided by its gear; the MJCF motors' ctrlrange equals
        the effort limit, so MuJoCo's clamp never binds after the model's."""
        tau = np.zeros(len(self.act_id)) if target is None else self.actuator(target, self.q, self.qd)
        self.data.ctrl[self.act_id] = tau / self.gear
        mujoco.mj_step(self.model, self.data)
        self.max_torque = np.maximum(self.max_torque, np.abs(tau))
        lo, hi = self.limits[:, 0] - self.limit_tolerance, self.limits[:, 1] + self.limit_tolerance
        outside = (self.q < lo) | (self.q > hi)
        self.violations += outside
        self.violation_steps += bool(outside.any())
        return tau

    def step(self, target: np.ndarray) -> None:
        """One control period: ``decimation`` physics steps towards ``target``."""
        for _ in range(self.decimation):
            self.physics_step(target)

    def hold_base(self, pose: np.ndarray) -> None:
        """Put the base back at ``pose`` (position and w-x-y-z quaternion) at rest: a gantry holding the robot."""
        self.data.qpos[self.base_qpos : self.base_qpos + 7] = pose
        self.data.qvel[self.base_dof : self.base_dof + 6] = 0.0

    def push(self, delta_v: np.ndarray) -> None:
        self.data.qvel[self.base_dof : self.base_dof + 2] += delta_v

    # ----- measurements -----
    @property
    def q(self) -> np.ndarray:
        return self.data.qpos[self.qpos_adr]

    @property
    def qd(self) -> np.ndarray:
        return self.data.qvel[self.dof_adr]

    @property
    def base_quat(self) -> np.ndarray:
        """Base orientation (w, x, y, z), what the IMU's orientation reports."""
        return self.data.qpos[self.base_qpos + 3 : self.base_qpos + 7].copy()

    @property
    def base_gyro(self) -> np.ndarray:
        """Base angular velocity in the base frame (MuJoCo's free-joint angular velocity is body-frame)."""
        return self.data.qvel[self.base_dof + 3 : self.base_dof + 6].copy()

    @property
    def base_rot(self) -> np.ndarray:
        return self.data.xmat[self.base_body].reshape(3, 3)

    @property
    def base_height(self) -> float:
        """Above the ground under the base (``ground``; the floor at z = 0 without one)."""
        x, y, z = self.data.qpos[self.base_qpos : self.base_qpos + 3]
        return float(z) - (self.ground(float(x), float(y)) if self.ground is not None else 0.0)

    def base_accel(self) -> np.ndarray:
        """Proper acceleration of the base in its frame (an accelerometer: +9.81 up at rest)."""
        mujoco.mj_rnePostConstraint(self.model, self.data)
        res = np.zeros(6)
        mujoco.mj_objectAcceleration(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self.base_body, res, 1)
        return res[3:]

    def state(self) -> RobotState:
        """What the robot measures: joint encoders, and for a floating base the IMU's gyro and gravity direction."""
        if self.base_qpos is None:
            return RobotState(self.q.copy(), self.qd.copy())
        # gravity from the rotation matrix, as training's projected_gravity does (the quaternion gives the same)
        state = RobotState(self.q.copy(), self.qd.copy(), self.base_gyro, self.base_rot.T @ np.array([0.0, 0, -1]))
        if self.scan_points is not None:
            state.ground_b = self.ground_below_scan()
        return state

    def ground_below_scan(self) -> np.ndarray:
        """Ground height minus base height at the policy's scan points (x, y in the base's yaw frame): the exact
        height map a perceptive policy reads, as training's ``height_scan_grid`` samples the physics' terrain."""
        x, y, z = self.data.qpos[self.base_qpos : self.base_qpos + 3]
        yaw = self.yaw()
        c, s = np.cos(yaw), np.sin(yaw)
        px, py = self.scan_points.T
        wx, wy = x + c * px - s * py, y + s * px + c * py
        return (self.ground.heights(wx, wy) if self.ground is not None else np.zeros_like(wx)) - z

    def measured_velocity(self) -> np.ndarray:
        """(vx, vy) in the yaw-aligned frame and the yaw rate: what the commands ask for, free of pitch/roll."""
        rot, yaw = self.base_rot, self.yaw()
        vx_w, vy_w = self.data.qvel[self.base_dof : self.base_dof + 2]
        c, s = np.cos(yaw), np.sin(yaw)
        yaw_rate = (rot @ self.base_gyro)[2]
        return np.array([c * vx_w + s * vy_w, -s * vx_w + c * vy_w, yaw_rate])

    def yaw(self) -> float:
        rot = self.base_rot
        return float(np.arctan2(rot[1, 0], rot[0, 0]))

    def tilt(self) -> float:
        return float(np.arccos(np.clip(self.base_rot[2, 2], -1.0, 1.0)))


def decimation(control_dt: float, physics_dt: float) -> int:
    ratio = control_dt / physics_dt
    if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
        raise RobotModelError(f"control_dt {control_dt} is not a multiple of the physics timestep {physics_dt}")
    return round(ratio)


class EndEffectorFrame:
    """A fixed-base arm's end effector (metadata ``robot.ee_body``) in its base body's frame (``robot.base_body``)."""

    def __init__(self, robot: MujocoRobot):
        names = robot.meta.raw["robot"]
        if not (names.get("base_body") and names.get("ee_body")):
            raise ValueError("the policy file names no robot.base_body / robot.ee_body: re-export it")
        self.data = robot.data
        self.base, self.ee = (robot.model.body(names[k]).id for k in ("base_body", "ee_body"))

    def ee_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """Position [m] and orientation (w, x, y, z) of the end effector in the base frame."""
        return self.body_pose(self.ee)

    def body_pose(self, body: int) -> tuple[np.ndarray, np.ndarray]:
        """Position [m] and orientation (w, x, y, z) of any body (an object the arm handles) in the base frame."""
        rot_base = self.data.xmat[self.base].reshape(3, 3)
        pos = rot_base.T @ (self.data.xpos[body] - self.data.xpos[self.base])
        quat, base_inv = np.zeros(4), np.zeros(4)
        mujoco.mju_negQuat(base_inv, self.data.xquat[self.base])
        mujoco.mju_mulQuat(quat, base_inv, self.data.xquat[body])
        return pos, quat
