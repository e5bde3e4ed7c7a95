"""``sim2real export``: turn a training run's checkpoint into a self-describing ONNX policy."""

from __future__ import annotations

import json
from pathlib import Path

from sim2real.config import load_task
from sim2real.robots import ROBOTS
from sim2real.runlog import read_run_info, recorded_overrides, resolve_checkpoint
from sim2real.train import load_checkpoint, make_env, make_runner, simulation


def export_run(run_path: str, out: Path | None = None) -> dict:
    """Export the run's latest (or given) checkpoint; returns the export report (parity errors, paths)."""
    from sim2real.export import actor_from_runner, build_metadata, export_policy

    run_dir, checkpoint = resolve_checkpoint(run_path)
    info = read_run_info(run_dir)
    # one CPU env is enough to rebuild the actor; the metadata comes from the same resolved config
    run = load_task(
        info["task"], [*recorded_overrides(info, ("physics", "seed")), "device=cpu", "env.scene.num_envs=1"]
    )
    metadata = build_metadata(
        task_id=info["task"],
        robot=ROBOTS[run.env.robot],
        observations=policy_terms(run.env),
        commands=command_ranges(run.env),
        action_scale=run.env.actions.joint_pos.scale,
        action_clip=run.agent.clip_actions,
        control_dt=run.env.sim.dt * run.env.decimation,
        physics_dt=run.env.sim.dt,
        run_id=f"{run_dir.name}/{checkpoint.stem}",
        git_rev=info["git_revision"],
        versions=info["versions"],
    )
    with simulation(run):
        env = make_env(run)
        runner = make_runner(env, run, log_dir=None)
        load_checkpoint(runner, checkpoint, actor_only=True)
        out = out or run_dir / "exported" / "policy.onnx"
        report = export_policy(actor_from_runner(runner), metadata, out)
        env.close()
    print(json.dumps({k: v for k, v in report.items() if k != "metadata"}, indent=2, default=str))
    return report


def policy_terms(env_cfg) -> list[dict]:
    """The policy group's observation terms in input order, with their scale and clip."""
    from isaaclab.managers import ObservationTermCfg

    from sim2real.export.obs_terms import expected_term_size

    robot = ROBOTS[env_cfg.robot]
    group = env_cfg.observations.policy
    terms = []
    for name in group.__dataclass_fields__:
        term = getattr(group, name)
        if isinstance(term, ObservationTermCfg):
            size = expected_term_size(name, len(robot.joint_names), 3)
            terms.append(
                {"name": name, "size": size, "scale": 1.0 if term.scale is None else term.scale, "clip": term.clip}
            )
    return terms


def command_ranges(env_cfg) -> dict[str, tuple[float, float]]:
    ranges = env_cfg.commands.base_velocity.ranges
    return {"lin_vel_x": ranges.lin_vel_x, "lin_vel_y": ranges.lin_vel_y, "ang_vel_z": ranges.ang_vel_z}
