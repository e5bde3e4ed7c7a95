"""Mode state machine and safety clamps of the policy node, without ROS.

The rclpy node (``policy_node.py``) is a thin shell around :class:`PolicyController`: it feeds it messages
as plain arrays with a monotonic receive time and publishes what :meth:`PolicyController.step` returns.
Keeping this file free of rclpy makes every safety rule unit-testable with a fake clock.

Modes: WAITING -> STANDING -> RUNNING, and DAMPING from anywhere; see ``docs/deploy_ros.md``. A grasping arm policy
(``action.gripper``) also commands the hand (:attr:`PolicyController.gripper_target`) and reads the object's position
from perception (:meth:`PolicyController.set_object_position`); a perceptive legged policy reads the ground around it
(:meth:`PolicyController.set_ground_heights`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from sim2real_deploy.commands import (
    BASE_VELOCITY,
    EE_POSE,
    CommandInterface,
    canonical_quat,
    interface,
    workspace_center_quat,
)
from sim2real_deploy.observations import (
    OBJECT_TERMS,
    ObservationBuilder,
    RobotState,
    projected_gravity,
    tilt_angle,
)
from sim2real_deploy.policy_file import PolicyFileError, PolicyMetadata

# what a bad operator command is called in faults, by command interface (the node's topic names)
_COMMAND_FAULT = {
    BASE_VELOCITY.name: "cmd_vel has NaN/inf",
    EE_POSE.name: "target_pose has NaN/inf or a non-unit quaternion",
}


ARM_HOLD_MARGIN = 0.1  # [rad] an arm in DAMPING holds its last target only this close to the measured pose


class Mode(StrEnum):
    WAITING = "WAITING"  # no (valid) state yet: publish nothing
    STANDING = "STANDING"  # soft start to the default pose, then hold it
    RUNNING = "RUNNING"  # policy in control
    DAMPING = "DAMPING"  # safe hold after a fault; only reset() leaves it


@dataclass
class ControllerConfig:
    stand_time: float = 2.0  # [s] soft start from the measured to the default pose
    state_timeout: float = 0.1  # [s] joint_states / imu older than this is a fault (watchdog)
    cmd_timeout: float = 0.5  # [s] a velocity command older than this counts as zero; <= 0 disables (pose: holds)
    max_tilt: float = 0.7  # [rad] angle between base z and world z beyond which the robot is falling (floating base)
    max_target_rate: float = 0.0  # [rad/s] target slew limit; <= 0: target_rate_fraction x the motors' no-load speed
    target_rate_fraction: float = 0.5  # smallest the Go2 policy passed randomised with (benchmarks/slew_limit.py)
    damping_rate: float = 1.0  # [rad/s] slew of the target from the last command to the hold pose in DAMPING
    joint_limit_margin: float = 0.0  # [rad] shrink the policy's joint limits by this much on each side
    reading_margin: float = 0.1  # [rad] a joint reading this far outside its limits is a fault (a glitch)
    output_joint_names: list[str] = field(default_factory=list)  # target order; empty = policy order
    object_timeout: float = 0.5  # [s] an object position older than this is a fault while RUNNING (perception rate)
    height_map_timeout: float = 0.2  # [s] ground heights older than this are a fault while RUNNING (a mapping rate)


@dataclass
class Perceived:
    """An input from perception that only the policy reads (so only RUNNING needs it): the latest value, its receive
    time, and why it cannot drive the policy now."""

    topic: str
    size: int
    timeout: float
    value: np.ndarray | None = None
    time: float = -math.inf

    def fault(self, now: float) -> str | None:
        if self.value is None:
            return f"no {self.topic} yet"
        if now - self.time > self.timeout:
            return f"{self.topic} stale ({now - self.time:.3f} s > {self.timeout} s)"
        if self.value.shape != (self.size,):
            return f"{self.topic} has {self.value.size} values, the policy reads {self.size}"
        if not np.all(np.isfinite(self.value)):
            return f"{self.topic} has NaN/inf"
        return None


@dataclass
class Transition:
    time: float
    source: Mode
    target: Mode
    reason: str


class PolicyController:
    """Turns the latest measurements and operator requests into joint position targets, one call per tick."""

    def __init__(
        self,
        metadata: PolicyMetadata,
        policy: Callable[[np.ndarray], np.ndarray],
        config: ControllerConfig | None = None,
        log: Callable[[str], None] = print,
    ):
        self.meta, self.policy, self.config, self.log = metadata, policy, config or ControllerConfig(), log
        self._check_supported(metadata)
        self.build_observation = ObservationBuilder.from_metadata(metadata)
        self.interface = interface(metadata.command_interface)
        self.command_index = self.interface.index(metadata.command_names)
        self.has_imu = metadata.floating_base  # a fixed-base arm has no IMU: nothing to read, nothing can tip
        self.joint_names = metadata.joint_names
        gripper = metadata.gripper
        self.finger_names: list[str] = list(gripper["joints"]) if gripper else []
        self.perceived = self._perceived_inputs(metadata)
        self.default_pos = metadata.joint_array("default_joint_pos")
        limits = metadata.joint_array("joint_pos_limits")
        self.pos_lo = limits[:, 0] + self.config.joint_limit_margin
        self.pos_hi = limits[:, 1] - self.config.joint_limit_margin
        self.limits = limits
        rate, fraction = self.config.max_target_rate, self.config.target_rate_fraction
        self.max_rate = (
            np.full(metadata.num_joints, rate) if rate > 0 else fraction * metadata.joint_array("velocity_limit")
        )
        self._check_config()
        self.output_index = self._output_index(self.config.output_joint_names)
        self.mode = Mode.WAITING
        self.reason = "no state yet"
        self.transitions: list[Transition] = []
        # Latest measurements (policy order) and their receive times; None until received.
        self.q: np.ndarray | None = None
        self.dq: np.ndarray | None = None
        self.joint_fault: str | None = None
        self.joint_time = -math.inf
        self.gyro: np.ndarray | None = None
        self.gravity: np.ndarray | None = None
        self.imu_fault: str | None = None
        self.imu_time = -math.inf
        self.finger_q: np.ndarray | None = None  # gripper.joints order
        # the operator's command in interface field order; a setpoint interface has none until the first one
        self.cmd_raw: np.ndarray | None = None if self.interface.setpoint else np.zeros(len(self.interface.fields))
        self.cmd_time = -math.inf
        workspace = metadata.raw["commands"].get("workspace")
        self.quat_reference = workspace_center_quat(workspace) if workspace else np.array([0.0, 0.0, 0.0, 1.0])
        self.safe_pos: np.ndarray | None = None  # last complete, finite measured pose: the DAMPING hold pose
        self.last_target: np.ndarray | None = None  # policy order, last returned by step()
        self.last_action = np.zeros(metadata.num_actions)
        self.gripper_target: np.ndarray | None = None  # finger targets (gripper.joints order) of the last step()
        self.policy_ticks = 0  # control ticks since RUNNING began (the gait clock term counts them)
        self.hold_pos: np.ndarray | None = None
        self.stand_from: np.ndarray | None = None
        self.stand_start = 0.0
        self.estop_request: str | None = None
        self.latched: str | None = None  # first bad sample since the last tick: a fault even if a good one follows
        self.last_tick: float | None = None  # time of the previous step() (own stalls are not the driver's)
        self.last_obs: np.ndarray | None = None

    # ----- configuration checks -----
    @staticmethod
    def _check_supported(meta: PolicyMetadata) -> None:
        """Refuse a policy this node cannot serve (terms and sizes were checked when the file was read)."""
        arm = not meta.floating_base and meta.command_interface == EE_POSE.name
        if not (meta.legged_velocity or arm):
            raise PolicyFileError(
                f"the ROS node serves floating-base '{BASE_VELOCITY.name}' and fixed-base '{EE_POSE.name}' policies; "
                f"this one is {meta.raw['robot']['base']}-base '{meta.command_interface}'"
            )
        if meta.gripper and not arm:
            raise PolicyFileError("a gripper is served on fixed-base 'ee_pose' arms only")
        if "gripper_pos" in {t["name"] for t in meta.observations} and not meta.gripper:
            raise PolicyFileError("observation term 'gripper_pos' needs the policy's action.gripper (its joints)")

    def _check_config(self) -> None:
        """Refuse settings under which the clamps would not clamp (a negative rate makes np.clip's bounds cross)."""
        c = self.config
        rates = {
            "target_rate_fraction": c.target_rate_fraction,
            "damping_rate": c.damping_rate,
            "object_timeout": c.object_timeout,
            "height_map_timeout": c.height_map_timeout,
        }
        bad = [k for k, v in rates.items() if not (math.isfinite(v) and v > 0)]
        if not (math.isfinite(c.max_target_rate) and c.max_target_rate >= 0):
            bad.append("max_target_rate")
        if not (c.joint_limit_margin >= 0 and np.all(self.pos_lo < self.pos_hi)):
            bad.append("joint_limit_margin")
        if bad:
            raise PolicyFileError(f"controller parameter(s) {bad} out of range (see docs/deploy_ros.md)")

    def _output_index(self, names: Sequence[str]) -> np.ndarray:
        """Index into policy order for each output joint (the forward controller's joint order)."""
        if not names:
            return np.arange(self.meta.num_joints)
        missing = sorted(set(self.joint_names) - set(names))
        unknown = sorted(set(names) - set(self.joint_names))
        if missing or unknown or len(names) != len(self.joint_names):
            raise PolicyFileError(
                f"output_joint_names must list the policy's joints once each (missing {missing}, unknown {unknown})"
            )
        return np.array([self.joint_names.index(name) for name in names])

    # ----- inputs -----
    def set_joint_state(self, names: Sequence[str], pos: Sequence[float], vel: Sequence[float], now: float) -> None:
        """Map a JointState by name (any order, extra joints ignored); record why it is unusable, if it is."""
        self.joint_time = now
        self.joint_fault = self._joint_state_fault(names, pos, vel)
        if self.joint_fault is not None:
            self._latch(self.joint_fault)
            return
        index = {name: i for i, name in enumerate(names)}
        order = [index[name] for name in self.joint_names]
        self.q, self.dq = np.asarray(pos, dtype=np.float64)[order], np.asarray(vel, dtype=np.float64)[order]
        self.safe_pos = np.clip(self.q, self.pos_lo, self.pos_hi)
        if self.finger_names:
            self.finger_q = np.asarray(pos, dtype=np.float64)[[index[name] for name in self.finger_names]]

    def _joint_state_fault(self, names: Sequence[str], pos: Sequence[float], vel: Sequence[float]) -> str | None:
        """Why this JointState cannot be used, or None."""
        needed = self.joint_names + self.finger_names
        duplicates = sorted({n for n in names if list(names).count(n) > 1} & set(needed))
        if duplicates:
            return f"joint_states lists joint(s) {duplicates} more than once"
        index = {name: i for i, name in enumerate(names)}
        missing = [name for name in needed if name not in index]
        if missing:
            return f"joint_states lacks joint(s) {missing}"
        if len(pos) != len(names) or len(vel) != len(names):
            return f"joint_states has {len(names)} names, {len(pos)} positions, {len(vel)} velocities"
        every = [index[name] for name in needed]
        if not (np.all(np.isfinite(np.asarray(pos)[every])) and np.all(np.isfinite(np.asarray(vel)[every]))):
            return "joint_states has NaN/inf"
        q = np.asarray(pos, dtype=np.float64)[[index[name] for name in self.joint_names]]
        margin = self.config.reading_margin
        outside = np.flatnonzero((q < self.limits[:, 0] - margin) | (q > self.limits[:, 1] + margin))
        if outside.size:
            i = int(outside[0])
            lo, hi = self.limits[i]
            return f"joint_states: {self.joint_names[i]} reads {q[i]:.3f} rad, outside its limits [{lo:.3f}, {hi:.3f}]"
        return None

    def _latch(self, reason: str) -> None:
        if self.latched is None:
            self.latched = reason

    def set_imu(self, quat_xyzw: Sequence[float], gyro: Sequence[float], now: float) -> None:
        """Record the base angular velocity and the gravity direction in the base frame."""
        quat, omega = np.asarray(quat_xyzw, dtype=np.float64), np.asarray(gyro, dtype=np.float64)
        self.imu_time = now
        if not (np.all(np.isfinite(quat)) and np.all(np.isfinite(omega))):
            self.imu_fault = "imu has NaN/inf"
            self._latch(self.imu_fault)
            return
        norm = float(np.linalg.norm(quat))
        if abs(norm - 1.0) > 0.1:  # e.g. a driver that leaves orientation all zero
            self.imu_fault = f"imu orientation is not a unit quaternion (norm {norm:.3f})"
            self._latch(self.imu_fault)
            return
        x, y, z, w = quat / norm
        self.gyro, self.gravity, self.imu_fault = omega, projected_gravity(np.array([w, x, y, z])), None

    def _perceived_inputs(self, meta: PolicyMetadata) -> dict[str, Perceived]:
        """The perception inputs the policy's terms read, by topic."""
        names, points = {t["name"] for t in meta.observations}, meta.scan_points
        inputs = {}
        if names & OBJECT_TERMS:
            inputs["object_pose"] = Perceived("object_pose", 3, self.config.object_timeout)
        if points is not None:
            inputs["ground_heights"] = Perceived("ground_heights", len(points), self.config.height_map_timeout)
        return inputs

    def set_object_position(self, position: Sequence[float], now: float) -> None:
        """The object's position in the base frame, from perception (grasping policies)."""
        self._perceive("object_pose", position, now)

    def set_ground_heights(self, heights: Sequence[float], now: float) -> None:
        """Ground height minus base height [m] at the policy's scan points (``PolicyMetadata.scan_points``, in the
        base's yaw frame), in their order: a height map sampled by perception (perceptive legged policies)."""
        self._perceive("ground_heights", heights, now)

    def _perceive(self, topic: str, value: Sequence[float], now: float) -> None:
        if (perceived := self.perceived.get(topic)) is None:
            return  # the policy does not read it
        perceived.value, perceived.time = np.asarray(value, dtype=np.float64).reshape(-1), now
        if self.mode == Mode.RUNNING and (fault := perceived.fault(now)) is not None:  # only the policy reads it
            self._latch(fault)

    def _perception_fault(self, now: float) -> str | None:
        """Why perception cannot drive the policy now (an input missing, stale, misshapen or non-finite), or None."""
        return next((fault for p in self.perceived.values() if (fault := p.fault(now)) is not None), None)

    def _perceived_value(self, topic: str) -> np.ndarray | None:
        return self.perceived[topic].value if topic in self.perceived else None

    def set_command(self, vx: float, vy: float, wz: float, now: float) -> None:
        """A velocity command (base_velocity policies)."""
        self._set_command(BASE_VELOCITY, np.array([vx, vy, wz], dtype=np.float64), now)

    def set_pose_target(self, position: Sequence[float], quat_xyzw: Sequence[float], now: float) -> None:
        """An end-effector pose target in the base frame (ee_pose policies). A non-unit quaternion is refused like
        a non-finite value: a fault."""
        target = np.array([*position, *quat_xyzw], dtype=np.float64)
        norm = float(np.linalg.norm(target[3:])) if np.all(np.isfinite(target)) else math.nan
        if abs(norm - 1.0) <= 0.1:
            target[3:] = canonical_quat(target[3:], self.quat_reference)
        else:
            target[:] = math.nan  # e.g. an all-zero orientation: no rotation is meant by it
        self._set_command(EE_POSE, target, now)

    def _set_command(self, kind: CommandInterface, values: np.ndarray, now: float) -> None:
        if kind is not self.interface:
            raise PolicyFileError(f"this policy takes '{self.interface.name}' commands, not '{kind.name}'")
        self.cmd_raw, self.cmd_time = values, now
        if not np.all(np.isfinite(values)):
            self._latch(_COMMAND_FAULT[kind.name])

    def _command_fresh(self, now: float) -> bool:
        timeout = self.config.cmd_timeout
        return self.interface.setpoint or timeout <= 0 or now - self.cmd_time <= timeout

    def command(self, now: float) -> np.ndarray | None:
        """The command in the policy's command order, clamped to the trained ranges. A velocity is zero once stale
        (or while non-finite, which is a fault); a pose target holds until the next, and is None before the first."""
        if self.cmd_raw is None:
            return None
        fresh, finite = self._command_fresh(now), np.all(np.isfinite(self.cmd_raw))
        if fresh and finite:
            raw = self.cmd_raw
        elif self.interface.setpoint:
            return None
        else:
            raw = np.zeros(len(self.interface.fields))
        ranges = self.meta.command_ranges
        return np.clip(raw[self.command_index], ranges[:, 0], ranges[:, 1])

    # ----- operator requests -----
    def enable(self, now: float) -> tuple[bool, str]:
        """STANDING (soft start finished) -> RUNNING; refused otherwise."""
        if self.mode != Mode.STANDING:
            return False, f"enable refused: mode is {self.mode.value} (needs STANDING)"
        left = self.stand_start + self.config.stand_time - now
        if left > 0:
            return False, f"enable refused: soft start not finished ({left:.2f} s left)"
        if self.command(now) is None:
            return False, "enable refused: no valid target pose yet (the policy needs one to run)"
        if (missing := self._perception_fault(now)) is not None:
            return False, f"enable refused: {missing} (the policy reads it from perception)"
        self.last_action = np.zeros(self.meta.num_actions)
        self.policy_ticks = 0  # a gait clock starts at phase 0, as a training episode after a reset does
        self._transition(Mode.RUNNING, "enable requested", now)
        return True, "RUNNING"

    def estop(self, reason: str = "e-stop requested") -> tuple[bool, str]:
        """Request DAMPING from any mode; applied on the next step()."""
        self.estop_request = reason
        return True, f"DAMPING ({reason})"

    def reset(self, now: float) -> tuple[bool, str]:
        """DAMPING -> WAITING: the soft start then begins again from the measured pose."""
        if self.mode != Mode.DAMPING:
            return False, f"reset refused: mode is {self.mode.value} (only DAMPING needs a reset)"
        self.estop_request = self.latched = None
        self.last_target = None
        if self.interface.setpoint:  # a target from before the fault is no order to move after it: wait for a new one
            self.cmd_raw = None
        self._transition(Mode.WAITING, "reset requested", now)
        return True, "WAITING"

    # ----- the control tick -----
    def step(self, now: float) -> np.ndarray | None:
        """One control period: update the mode, return targets in output order, or None to publish nothing."""
        fault = self._fault(now)
        waiting_for = self._input_fault(now) if self.mode == Mode.WAITING else None
        self.latched, self.last_tick = None, now
        if fault is not None and self.mode != Mode.DAMPING:
            self._enter_damping(fault, now)
        if self.mode == Mode.WAITING and waiting_for is None:  # valid, fresh, upright: start commanding
            self.stand_from, self.stand_start = self.q.copy(), now
            self._transition(Mode.STANDING, "state received", now)
        if self.mode == Mode.WAITING:
            self.reason = waiting_for  # tell the operator what is missing
            return None
        if self.mode == Mode.DAMPING:
            desired = self._damping_target()
        elif self.mode == Mode.STANDING:  # the hand keeps what it was last told: only the policy opens it
            desired = self._stand_target(now)
        else:
            desired = self._policy_target(now)
            if desired is None:  # the policy's output was invalid: now DAMPING
                desired = self._damping_target()
        if desired is None:  # DAMPING of a robot this node never commanded: publish nothing
            return None
        target = self._clamp(desired)
        if not np.all(np.isfinite(target)):  # last guard: never publish a non-finite target
            self._enter_damping("non-finite target", now)
            return None
        self.last_target = target
        return target[self.output_index]

    def _fault(self, now: float) -> str | None:
        """The first reason to be in DAMPING, or None. Only e-stop applies while WAITING."""
        if self.estop_request is not None:
            reason, self.estop_request = self.estop_request, None
            return reason
        if self.mode not in (Mode.STANDING, Mode.RUNNING):
            return None
        timeout = self.config.state_timeout
        if self.last_tick is not None and now - self.last_tick > timeout:  # before blaming the driver's data
            return f"policy_node stalled ({now - self.last_tick:.3f} s between control ticks > {timeout} s)"
        return self._input_fault(now)

    def _input_fault(self, now: float) -> str | None:
        """What is wrong with the inputs now, or None: the faults of STANDING/RUNNING and what WAITING waits out."""
        if self.latched is not None:
            return self.latched
        if self.joint_time == -math.inf:
            return "no joint_states yet"
        if self.has_imu and self.imu_time == -math.inf:
            return "no imu yet"
        timeout = self.config.state_timeout
        if now - self.joint_time > timeout:
            return f"joint_states stale ({now - self.joint_time:.3f} s > {timeout} s)"
        if self.has_imu and now - self.imu_time > timeout:
            return f"imu stale ({now - self.imu_time:.3f} s > {timeout} s)"
        if self.joint_fault or (self.has_imu and self.imu_fault):
            return self.joint_fault or self.imu_fault
        if self.q is None or (self.has_imu and self.gravity is None):
            return "no valid joint_states or imu yet"
        if self.cmd_raw is not None and self._command_fresh(now) and not np.all(np.isfinite(self.cmd_raw)):
            return _COMMAND_FAULT[self.interface.name]
        if self.mode == Mode.RUNNING and (missing := self._perception_fault(now)) is not None:
            return missing  # only the policy reads it: standing needs no perception
        if not self.has_imu:
            return None
        tilt = tilt_angle(self.gravity)
        if tilt > self.config.max_tilt:
            return f"tilt {tilt:.2f} rad > {self.config.max_tilt} rad"
        return None

    def _enter_damping(self, reason: str, now: float) -> None:
        # Hold a pose only for a robot this node was commanding: an e-stop while WAITING must not start commanding
        # one. A legged robot holds the last measured pose that was finite and complete (see docs: position-only
        # "damping"; after a stumble the last target may be far from it). A fixed-base arm holds its last target while
        # that is within ARM_HOLD_MARGIN of the measured pose: under PD it sits in equilibrium there, where the measured
        # pose would let it sag by its gravity error; further away (blocked, or not tracking) it holds what it measures.
        commanding = self.mode in (Mode.STANDING, Mode.RUNNING) and self.last_target is not None
        hold = self.safe_pos
        if not self.has_imu and hold is not None and commanding:
            if np.abs(self.last_target - self.safe_pos).max() <= ARM_HOLD_MARGIN:
                hold = self.last_target
        self.hold_pos = hold.copy() if commanding and hold is not None else None
        self._transition(Mode.DAMPING, reason, now)

    def _damping_target(self) -> np.ndarray | None:
        """From the last target towards the hold pose at ``damping_rate``: DAMPING never steps the targets."""
        if self.hold_pos is None:
            return None
        step = self.config.damping_rate * self.meta.control_dt
        return np.clip(self.hold_pos, self.last_target - step, self.last_target + step)

    def _stand_target(self, now: float) -> np.ndarray:
        alpha = 1.0 if self.config.stand_time <= 0 else min(1.0, (now - self.stand_start) / self.config.stand_time)
        return (1.0 - alpha) * self.stand_from + alpha * self.default_pos

    def _policy_target(self, now: float) -> np.ndarray | None:
        command = self.command(now)
        if command is None:  # defensive: a setpoint is checked by the fault check and by enable(); never run without
            self._enter_damping("no valid target pose", now)
            return None
        tick = self.policy_ticks  # the clock tick this action is for (observation() counts it)
        obs = self.observation(now, command)
        action = np.asarray(self.policy(obs.astype(np.float32)), dtype=np.float64).reshape(-1)
        if action.shape != (self.meta.num_actions,) or not np.all(np.isfinite(action)):
            self._enter_damping(
                f"policy output invalid (shape {action.shape}, finite {np.all(np.isfinite(action))})", now
            )
            return None
        self.last_action = self.meta.clip_action(action)  # what training's `actions` term saw
        if self.finger_names:
            self.gripper_target = self.meta.gripper_targets(action)
        return self.meta.targets_from_actions(action, command, tick)

    def observation(self, now: float, command: np.ndarray) -> np.ndarray:
        """The policy input from the latest measurements (the shared robot-side observation builder)."""
        state = RobotState(
            self.q,
            self.dq,
            base_ang_vel=self.gyro,
            gravity_b=self.gravity,
            gripper_pos=self.finger_q,
            object_pos_b=self._perceived_value("object_pose"),
            ground_b=self._perceived_value("ground_heights"),
        )
        self.last_obs = self.build_observation(state, command, self.last_action, tick=self.policy_ticks)
        self.policy_ticks += 1
        return self.last_obs

    def _clamp(self, desired: np.ndarray) -> np.ndarray:
        """Joint-limit clamp and slew-rate limit relative to the previous target (or the measured pose)."""
        desired = np.clip(desired, self.pos_lo, self.pos_hi)
        previous = self.last_target if self.last_target is not None else self.safe_pos
        if previous is not None:
            step = self.max_rate * self.meta.control_dt
            desired = np.clip(desired, previous - step, previous + step)
        return np.clip(desired, self.pos_lo, self.pos_hi)

    def _transition(self, target: Mode, reason: str, now: float) -> None:
        self.transitions.append(Transition(now, self.mode, target, reason))
        self.log(f"mode {self.mode.value} -> {target.value}: {reason}")
        self.mode, self.reason = target, reason
