"""Run a trained checkpoint in its own task and measure what matters: does it stay up, does it track commands."""

from __future__ import annotations

import json
from pathlib import Path

from sim2real.config import load_task
from sim2real.runlog import read_run_info, recorded_overrides, resolve_checkpoint
from sim2real.train import check_device, load_checkpoint, make_env, make_runner, seed_everything, simulation


def play(run_path: str, overrides: list[str], num_envs: int = 16, episodes: int = 1) -> dict:
    """Roll out ``episodes`` full episodes per env with the deterministic policy; returns and prints a report."""

    run_dir, checkpoint = resolve_checkpoint(run_path)
    info = read_run_info(run_dir)
    run = load_task(
        info["task"],
        [
            *recorded_overrides(info, ("device", "physics", "cone", "seed")),
            f"env.scene.num_envs={num_envs}",
            "env.events.push_robot=null",
            *overrides,
        ],
    )
    check_device(run.settings["device"])
    seed_everything(run.env.seed)
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, log_dir=None)
        load_checkpoint(runner, checkpoint, actor_only=True)
        policy = runner.get_inference_policy(device=run.settings["device"])
        trace = _rollout(env, policy, steps=episodes * int(env.max_episode_length))
        env.close()
    report = _summarise(trace, control_dt=run.env.sim.dt * run.env.decimation)
    report.update(checkpoint=str(checkpoint), task=info["task"], num_envs=num_envs)
    plot = run_dir / f"play_{checkpoint.stem}.png"
    _plot(trace, run.env.sim.dt * run.env.decimation, plot)
    report["plot"] = str(plot)
    print(json.dumps(report, indent=2))
    return report


def _rollout(env, policy, steps: int) -> dict:
    import torch

    robot = env.unwrapped.scene["robot"]
    command = env.unwrapped.command_manager
    obs = env.get_observations()
    cmds, vels, falls, alive = [], [], [], torch.ones(env.num_envs, dtype=torch.bool)
    with torch.inference_mode():
        for _ in range(steps):
            obs, _, dones, extras = env.step(policy(obs))
            timeouts = extras.get("time_outs", torch.zeros_like(dones)).bool()
            fell = dones.bool() & ~timeouts
            falls.append(fell.clone())
            cmds.append(command.get_command("base_velocity")[:, :3].clone())
            vel = torch.cat([robot.data.root_lin_vel_b.torch[:, :2], robot.data.root_ang_vel_b.torch[:, 2:3]], dim=1)
            vels.append(vel.clone())
            alive &= ~fell
    return {"cmd": torch.stack(cmds), "vel": torch.stack(vels), "fell": torch.stack(falls)}


def _summarise(trace: dict, control_dt: float) -> dict:
    import torch

    fell = trace["fell"]  # (T, N)
    ever_fell = fell.any(dim=0)
    first_fall = torch.where(
        ever_fell, fell.float().argmax(dim=0), torch.full_like(ever_fell, fell.shape[0], dtype=torch.long)
    )
    err = (trace["cmd"] - trace["vel"]).abs()  # (T, N, 3)
    lin = err[..., :2].norm(dim=-1)
    return {
        "survival_rate": float(1 - ever_fell.float().mean()),
        "mean_survival_time_s": float(first_fall.float().mean() * control_dt),
        "falls": int(fell.sum()),
        "lin_vel_xy_error_mean": float(lin.mean()),
        "yaw_rate_error_mean": float(err[..., 2].mean()),
    }


def _plot(trace: dict, control_dt: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [i * control_dt for i in range(trace["cmd"].shape[0])]
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    for ax, i, label in zip(axes, range(3), ("lin vel x [m/s]", "lin vel y [m/s]", "yaw rate [rad/s]"), strict=True):
        ax.plot(t, trace["cmd"][:, 0, i].cpu(), label="command")
        ax.plot(t, trace["vel"][:, 0, i].cpu(), label="measured")
        ax.set_ylabel(label)
    axes[0].legend()
    axes[-1].set_xlabel("time [s] (env 0)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
