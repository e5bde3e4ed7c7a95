"""Training physics vs the sim-to-sim check: the same checkpoint, the same fixed commands, measured in both.

Isaac Lab side: the task's env (training physics: native MuJoCo via Newton, the robot MJCF's cone) with every
randomisation and the policy's sensor noise off, ``--num-envs`` robots, each command held for ``--seconds``;
the mean base velocity (base frame) after the first second. MuJoCo side: the exported file through
``sim2real sim2sim``'s default schedule from the robot MJCF, nominal physics. A policy that tracks in training and
not in the check points at a simulator gap, not at training. The training side is measured twice: with the
deterministic actor the robot runs, and with actions sampled from the training distribution (the noise PPO explores
with; the two passes run back to back, each command starting from where the previous one left the robot, which the
first second of each skips): a policy that tracks only with its noise walks in training and not on the robot.
``--randomized`` keeps the task's domain randomisation on the training side.

    .venv/bin/python benchmarks/tracking_gap.py logs/go2_flat/<run>/model_1500.pt --out docs/tracking_gap.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from exported import exported

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

COMMANDS = {  # the default schedule's moving segments
    "forward_0.5": (0.5, 0.0, 0.0),
    "forward_1.0": (1.0, 0.0, 0.0),
    "backward_0.5": (-0.5, 0.0, 0.0),
    "left_0.4": (0.0, 0.4, 0.0),
    "turn_left_0.8": (0.0, 0.0, 0.8),
    "combined": (0.6, 0.2, 0.4),
}
NO_RANDOMISATION = [  # and the joints' passive dynamics fixed at the MJCF's values (mjcf_joint_dynamics)
    *(f"env.events.{name}=null" for name in ("friction", "added_base_mass", "base_com", "motor_strength")),
    "env.events.push_robot=null",
    "env.observations.policy.enable_corruption=false",
    "env.actions.joint_pos.delay_range=[0,0]",
]


def mjcf_joint_dynamics(robot: str) -> dict[str, list[list[float]]]:
    """The MJCF's own damping, friction and armature per policy joint, as a zero-width randomisation range: the
    check's nominal robot (the MJCF's 0.2 N m joint friction included), not the USD's."""
    from sim2real.robots import ROBOTS
    from sim2real_deploy.mujoco_robot import DOF_FIELDS, build_scene

    spec = ROBOTS[robot]
    model = build_scene(spec.mjcf_path, 0.005, spec.joint_names)
    dofs = [model.jnt_dofadr[model.joint(name).id] for name in spec.joint_names]
    return {key: [[float(getattr(model, f)[d])] * 2 for d in dofs] for key, f in DOF_FIELDS.items()}


def in_training_physics(
    checkpoint: Path, num_envs: int, seconds: float, randomized: bool, keep: tuple[str, ...] = ()
) -> dict[str, dict[str, list[float]]]:
    """Mean (vx, vy, yaw rate) per command, ``{"deterministic": ..., "sampled": ...}``; ``keep`` names the training
    randomisations left on when the rest is off (``NO_RANDOMISATION`` entries, or ``joint_dynamics``)."""
    import torch

    from sim2real.config import load_task
    from sim2real.runlog import read_run_info, recorded_overrides
    from sim2real.train import load_checkpoint, make_env, make_runner, simulation

    info = read_run_info(checkpoint.parent)
    run = load_task(
        info["task"],
        [
            *recorded_overrides(info, ("physics", "cone")),
            *([] if randomized else [o for o in NO_RANDOMISATION if not any(name in o for name in keep)]),
            # every env walks the fixed command: a standing env (rel_standing_envs) has its command zeroed after each
            # step, and averaged in it read the training side low (1 of 16 before 2026-12-03: 15/16 of the speed)
            "env.commands.base_velocity.rel_standing_envs=0.0",
            f"env.scene.num_envs={num_envs}",
        ],
    )
    if run.env.events.joint_dynamics is not None and not randomized and "joint_dynamics" not in keep:
        run.env.events.joint_dynamics.params["ranges"] = mjcf_joint_dynamics(run.env.robot)
    out: dict[str, dict[str, list[float]]] = {"deterministic": {}, "sampled": {}}
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, None)
        load_checkpoint(runner, checkpoint, actor_only=True)
        policy = runner.get_inference_policy()
        term = env.unwrapped.command_manager.get_term("base_velocity")
        robot = env.unwrapped.scene["robot"]
        steps, skip = round(seconds / env.unwrapped.step_dt), round(1.0 / env.unwrapped.step_dt)
        for mode, sampled in (("deterministic", False), ("sampled", True)):
            for name, command in COMMANDS.items():
                obs, measured = env.get_observations(), []
                for k in range(steps):
                    term.vel_command_b[:] = torch.tensor(command)
                    term.time_left[:] = 1e3  # no resampling
                    with torch.no_grad():
                        obs, _, _, _ = env.step(policy(obs, stochastic_output=sampled))
                    if k >= skip:
                        data = robot.data
                        velocity = [data.root_lin_vel_b.torch[:, :2], data.root_ang_vel_b.torch[:, 2:]]
                        measured.append(torch.cat(velocity, 1))
                out[mode][name] = [round(float(v), 3) for v in torch.cat(measured).mean(0)]
        env.close()
    return out


def in_the_check(checkpoint: Path) -> dict[str, list[float]]:
    from sim2real_deploy.sim2sim import run_sim2sim
    from sim2real_deploy.sim2sim.config import AXES

    with exported(checkpoint) as onnx:
        report = run_sim2sim(onnx)
    rows = {row["name"]: row for row in report["segments"]}
    return {name: [round(rows[name]["measured_mean"][a], 3) for a in AXES] for name in COMMANDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--randomized", action="store_true", help="keep the task's domain randomisation in training")
    parser.add_argument(
        "--keep",
        action="append",
        default=[],
        help="with the randomisation off, keep this one on (repeatable): friction, added_base_mass, base_com, "
        "motor_strength, joint_dynamics, push_robot, delay_range (latency), enable_corruption (sensor noise)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    training = in_training_physics(args.checkpoint, args.num_envs, args.seconds, args.randomized, tuple(args.keep))
    check = in_the_check(args.checkpoint)
    header = ("command", "(vx, vy, yaw rate)", "training, deterministic", "training, sampled")
    print(f"{header[0]:<14} {header[1]:<20} {header[2]:<26} {header[3]:<26} sim2sim")
    for name, command in COMMANDS.items():
        det, sampled = training["deterministic"][name], training["sampled"][name]
        print(f"{name:<14} {str(command):<20} {str(det):<26} {str(sampled):<26} {check[name]}")
    if args.out:
        result = {
            "checkpoint": str(args.checkpoint),
            "randomized": args.randomized,
            "kept": args.keep,
            "commands": COMMANDS,
            "training": training,
            "sim2sim": check,
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
