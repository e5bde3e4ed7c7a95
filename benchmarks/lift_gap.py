"""Training physics vs the lift check: the same lift checkpoint, judged by the check's rule in both.

Isaac Lab side: the lift task's env (training physics, its randomisation on: cube size, mass and friction are part of
the task), ``--num-envs`` envs, one 5 s episode each, run twice: with the deterministic actor (what the robot runs)
and with actions sampled from the training distribution (what PPO explores with, and what
``Metrics/success_rate`` counts). A trial succeeds as in ``sim2real sim2sim``'s lift check: the cube's centre within
5 cm of the target for 1 s without a break. Also reported: the share of envs whose fingers both held the cube at some
step, and the mean highest lift. MuJoCo side: the exported file through the lift check (20 trials from the Panda
MJCF). A policy that succeeds in training and not in the check points at a simulator gap; one that succeeds only
sampled points at the policy.

    .venv/bin/python benchmarks/lift_gap.py logs/panda_lift/<run>/model_1499.pt --out docs/lift_gap.json
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from exported import exported

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def in_training_physics(checkpoint: Path, num_envs: int) -> dict[str, dict[str, float]]:
    """Success rate, grasp rate and mean highest lift [m] per mode, ``{"deterministic": ..., "sampled": ...}``."""
    import torch
    from isaaclab.utils.math import combine_frame_transforms

    from sim2real.config import load_task
    from sim2real.runlog import read_run_info, recorded_overrides
    from sim2real.tasks.manipulation import mdp
    from sim2real.train import load_checkpoint, make_env, make_runner, simulation
    from sim2real_deploy.sim2sim.lift import LiftConfig

    rule = LiftConfig()  # the lift check's success rule: goal_tol for hold_s
    info = read_run_info(checkpoint.parent)
    run = load_task(info["task"], [*recorded_overrides(info, ("physics", "cone")), f"env.scene.num_envs={num_envs}"])
    out = {}
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, None)
        load_checkpoint(runner, checkpoint, actor_only=True)
        policy = runner.get_inference_policy()
        task = env.unwrapped
        robot, cube = task.scene["robot"], task.scene["object"]
        fingers = task.reward_manager.get_term_cfg("lifting_object").params["sensor_cfg"]
        steps, needed = int(task.max_episode_length), round(rule.hold_s / task.step_dt)
        for mode, sampled in (("deterministic", False), ("sampled", True)):
            env.reset()
            obs = env.get_observations()
            start_z = cube.data.root_pos_w.torch[:, 2].clone()
            run_len = torch.zeros(num_envs)
            success = torch.zeros(num_envs, dtype=torch.bool)
            grasped = torch.zeros(num_envs, dtype=torch.bool)
            lift = torch.zeros(num_envs)
            for _ in range(steps - 1):  # the last step times out and resets
                with torch.no_grad():
                    obs, _, _, _ = env.step(policy(obs, stochastic_output=sampled))
                target = task.command_manager.get_command("object_pose")[:, :3]
                target_w, _ = combine_frame_transforms(
                    robot.data.root_pos_w.torch, robot.data.root_quat_w.torch, target
                )
                near = (cube.data.root_pos_w.torch - target_w).norm(dim=-1) <= rule.goal_tol
                run_len = (run_len + 1) * near
                success |= run_len >= needed
                grasped |= mdp.object_in_grasp(task, fingers).bool()
                lift = torch.maximum(lift, cube.data.root_pos_w.torch[:, 2] - start_z)
            out[mode] = {
                "success_rate": round(float(success.float().mean()), 3),
                "grasped_rate": round(float(grasped.float().mean()), 3),
                "mean_max_lift_m": round(float(lift.mean()), 4),
            }
        env.close()
    return out


def in_the_check(checkpoint: Path) -> dict[str, float]:
    from sim2real_deploy.sim2sim.lift import run_lift

    with exported(checkpoint) as onnx:
        report = run_lift(onnx)
    lifts = [t.get("max_lift_m", 0.0) for t in report["trials"] if not t["success"]]
    return {
        "success_rate": report["success_rate"],
        "failed_trials_mean_max_lift_m": round(sum(lifts) / max(len(lifts), 1), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = {"checkpoint": str(args.checkpoint), "num_envs": args.num_envs}
    result["training"] = in_training_physics(args.checkpoint, args.num_envs)
    result["sim2sim"] = in_the_check(args.checkpoint)
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
