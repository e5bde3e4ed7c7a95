"""Sim-to-sim for a fixed-base arm following end-effector pose targets (``commands.interface`` ``ee_pose``).

Each target is sampled in the workspace the policy was trained on (metadata ``commands.workspace``: position and
roll / pitch / yaw ranges, the quaternion built as Isaac Lab's ``UniformPoseCommand`` builds it). The arm starts at
rest in its default pose, the policy runs for ``hold_s`` with the target held, and the errors of ``robot.ee_body``'s
pose in ``robot.base_body``'s frame are averaged over the last ``measure_s``. Passing means the mean position error
and the mean orientation error over all targets are within the limits, and the hand holds still at every target
(a policy in a limit cycle can average close to a target).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim2real_deploy.commands import EE_POSE, POSE_WORKSPACE_KEYS, quat_from_euler_xyz
from sim2real_deploy.mujoco_robot import EndEffectorFrame, MujocoRobot
from sim2real_deploy.observations import ObservationBuilder
from sim2real_deploy.policy_file import OnnxPolicy, PolicyMetadata
from sim2real_deploy.sim2sim.config import Sim2SimError
from sim2real_deploy.sim2sim.episode import SlewLimit, target_steps


@dataclass(frozen=True)
class ReachConfig:
    targets: int = 20
    seed: int = 0
    hold_s: float = 4.0  # each target held this long, from rest in the default pose: the task's 4 s per target
    measure_s: float = 1.0  # errors averaged over the last second of each hold
    max_pos_err: float = 0.02  # [m] mean over targets
    max_rot_err: float = 0.1  # [rad] mean over targets
    max_sway: float = 0.01  # [m] largest extent of the hand's path over the measured window, on any target
    target_rate_fraction: float | None = None
    """Joint targets slew-limited to this x no-load speed, as policy_node does; 0: unlimited; None: the limit the
    policy was trained behind (``training.domain_randomization.max_target_rate``), else unlimited."""
    poses: tuple[tuple[float, ...], ...] = ()  # explicit targets (x, y, z, qw, qx, qy, qz: MuJoCo's quaternion order)
    mjcf: str | None = None
    out_dir: str | None = None


def command_vector(meta: PolicyMetadata, target: np.ndarray) -> np.ndarray:
    """The policy's command input for a target (x, y, z, qw, qx, qy, qz), field by field in its trained order."""
    x, y, z, qw, qx, qy, qz = target
    fields = {"pos_x": x, "pos_y": y, "pos_z": z, "quat_x": qx, "quat_y": qy, "quat_z": qz, "quat_w": qw}
    return np.array([fields[name] for name in meta.command_names])


def sample_targets(meta: PolicyMetadata, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` poses (x, y, z, qw, qx, qy, qz) uniform in the trained workspace."""
    workspace = meta.raw["commands"].get("workspace")
    if not workspace or any(key not in workspace for key in POSE_WORKSPACE_KEYS):
        raise Sim2SimError("the policy file records no pose workspace (commands.workspace): re-export it")
    lo, hi = (np.array([workspace[k][i] for k in POSE_WORKSPACE_KEYS]) for i in (0, 1))
    draws = rng.uniform(lo, hi, size=(n, len(POSE_WORKSPACE_KEYS)))
    return np.array([[*d[:3], *quat_from_euler_xyz(*d[3:])] for d in draws])


def _end_effector(robot: MujocoRobot) -> EndEffectorFrame:
    try:
        return EndEffectorFrame(robot)
    except ValueError as exc:
        raise Sim2SimError(str(exc)) from exc


def rotation_error(q1: np.ndarray, q2: np.ndarray) -> float:
    """Angle [rad] of the rotation between two unit quaternions (w, x, y, z)."""
    return float(2.0 * np.arccos(np.clip(abs(np.dot(q1, q2)), 0.0, 1.0)))


def run_reach(policy_path: str | Path, cfg: ReachConfig | None = None) -> dict[str, Any]:
    """Every target once; the report has per-target errors, the means and the verdict."""
    cfg = cfg or ReachConfig()
    policy = OnnxPolicy(policy_path)
    meta = policy.metadata
    if meta.floating_base or meta.command_interface != EE_POSE.name:
        raise Sim2SimError(f"{policy_path}: the reach check is for fixed-base ee_pose policies")
    if meta.gripper:
        raise Sim2SimError(f"{policy_path}: a grasping (lift) policy: its check is sim2sim.lift.run_lift")
    robot = MujocoRobot.from_metadata(meta, cfg.mjcf)
    targets = np.array(cfg.poses) if cfg.poses else sample_targets(meta, cfg.targets, np.random.default_rng(cfg.seed))
    frames, observe = _end_effector(robot), ObservationBuilder.from_metadata(meta)
    rows = [_hold(policy, robot, frames, observe, target, cfg) for target in targets]
    pos_err = float(np.mean([r["pos_err"] for r in rows]))
    sway = float(np.max([r["sway"] for r in rows]))
    rot_err = float(np.mean([r["rot_err"] for r in rows]))
    failed = []
    if pos_err > cfg.max_pos_err:
        failed.append(f"mean position error {pos_err:.4f} m > {cfg.max_pos_err} m")
    if rot_err > cfg.max_rot_err:
        failed.append(f"mean orientation error {rot_err:.3f} rad > {cfg.max_rot_err} rad")
    if sway > cfg.max_sway:
        failed.append(f"the hand does not hold still: it sways {sway:.4f} m > {cfg.max_sway} m at a target")
    return arm_report(
        policy_path, robot, failed, cfg, mean_pos_err=pos_err, mean_rot_err=rot_err, max_sway=sway, targets=rows
    )


def arm_report(
    policy_path: str | Path, robot: MujocoRobot, failed: list[str], cfg: Any, **results: Any
) -> dict[str, Any]:
    """An arm check's report (the file, its task, the MJCF, the verdict, ``results``, the config), also written to
    ``<cfg.out_dir>/report.json`` when the config names a folder."""
    report = {
        "policy": str(policy_path),
        "task_id": robot.meta.raw["task_id"],
        "mjcf": str(robot.mjcf_path),
        "passed": not failed,
        "failed": failed,
        **results,
        "config": asdict(cfg),
    }
    if cfg.out_dir:
        import json

        out = Path(cfg.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _hold(
    policy: OnnxPolicy,
    robot: MujocoRobot,
    frames: EndEffectorFrame,
    observe: ObservationBuilder,
    target: np.ndarray,
    cfg: ReachConfig,
) -> dict[str, Any]:
    meta = robot.meta
    command = command_vector(meta, target)
    robot.reset()
    last_action = np.zeros(meta.num_actions)
    steps, measured = round(cfg.hold_s / meta.control_dt), round(cfg.measure_s / meta.control_dt)
    slew = SlewLimit(target_steps(meta, cfg.target_rate_fraction), start=robot.q)
    positions, rot_errs = [], []
    for k in range(steps):
        obs = observe(robot.state(), command, last_action, tick=k)
        last_action = meta.clip_action(np.asarray(policy(obs), dtype=np.float64))
        robot.step(slew(meta.targets_from_actions(last_action)))
        if k >= steps - measured:
            pos, quat = frames.ee_pose()
            positions.append(pos)
            rot_errs.append(rotation_error(quat, target[3:]))
    positions = np.array(positions)
    return {
        "target": np.round(target, 4).tolist(),
        "pos_err": float(np.mean(np.linalg.norm(positions - target[:3], axis=1))),
        "rot_err": float(np.mean(rot_errs)),
        "sway": float(np.ptp(positions, axis=0).max()),  # [m] the hand still moving while it should hold
    }
