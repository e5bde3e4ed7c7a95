"""``sim2real export``: turn a training run's checkpoint into a self-describing ONNX policy.

The metadata is the policy interface the run recorded when it started (``policy_interface.json``: robot spec,
gains, limits, observation terms, commands, asset hash), not today's code: a spec edited after training would
otherwise relabel an old policy. If today's code would describe the run differently, export refuses and names
the difference; ``--force`` exports with the recorded interface anyway.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim2real.config import load_task
from sim2real.runlog import checkpoint_iteration, read_run_info, recorded_overrides, resolve_checkpoint
from sim2real.train import load_checkpoint, make_env, make_runner, simulation

INTERFACE_FILE = "policy_interface.json"
RANDOMIZATION_FILE = "domain_randomization.json"


class ExportError(ValueError):
    """The run cannot be exported as asked (its recorded interface differs from today's, or is missing)."""


def record(run_dir: Path, name: str, content: Any, resumed_from: int | None = None) -> None:
    """Write the run's record ``name`` (JSON). A resume from checkpoint ``resumed_from`` whose overrides change it
    keeps the record so far as ``<stem>.to_<resumed_from>.json``, which the checkpoints up to there export with."""
    path, text = run_dir / name, json.dumps(content, indent=2) + "\n"
    if resumed_from is not None and path.is_file() and path.read_text() != text:
        path.replace(path.with_name(f"{path.stem}.to_{resumed_from}.json"))
    path.write_text(text)


def recorded(run_dir: Path, name: str, iteration: int) -> Path:
    """The record ``name`` that the checkpoint at ``iteration`` trained under (see :func:`record`)."""
    stem = Path(name).stem
    kept = sorted((int(p.name[len(stem) + 4 : -5]), p) for p in run_dir.glob(f"{stem}.to_*.json"))
    return next((path for last, path in kept if iteration <= last), run_dir / name)


def record_interface(
    run_dir: Path, task_id: str, env_cfg: Any, clip_actions: float | None, resumed_from: int | None = None
) -> None:
    """Write the run's policy interface next to its config (when training starts, and on a resume: :func:`record`)."""
    from sim2real.export.task_interface import task_interface

    try:
        interface = task_interface(task_id, env_cfg, clip_actions)
    except ValueError as exc:  # a task the exporter does not cover yet: training goes on, export will say why
        print(f"note: {task_id} policies are not exportable yet ({exc})")
        return
    record(run_dir, INTERFACE_FILE, interface, resumed_from)


def record_randomization(run_dir: Path, env_cfg: Any, physics: str, resumed_from: int | None = None) -> None:
    """Write what the run randomises (when training starts, and on a resume, whose overrides may change it for the
    checkpoints to come; exported into the policy's metadata)."""
    from sim2real.export.randomization import domain_randomization

    record(run_dir, RANDOMIZATION_FILE, domain_randomization(env_cfg, physics), resumed_from)


def run_randomization(run_dir: Path, iteration: int) -> dict[str, Any] | None:
    """The randomisation the run's checkpoint at ``iteration`` trained with; None for runs from before it was
    recorded (today's config would claim ranges, such as joint dynamics, the run never had)."""
    path = recorded(run_dir, RANDOMIZATION_FILE, iteration)
    return json.loads(path.read_text()) if path.is_file() else None


def run_interface(run_dir: Path, iteration: int, current: dict[str, Any], force: bool = False) -> dict[str, Any]:
    """The interface to export for the checkpoint at ``iteration``: the recorded one, after checking it against
    ``current`` (today's code)."""
    path = recorded(run_dir, INTERFACE_FILE, iteration)
    if not path.is_file():
        if not force:
            raise ExportError(
                f"{run_dir} has no {INTERFACE_FILE} (trained before runs recorded it); --force exports with "
                "today's robot spec and task config"
            )
        return current
    recorded_interface = json.loads(path.read_text())
    differences = differing_fields(recorded_interface, current)
    if differences and not force:
        raise ExportError(
            f"{run_dir} trained with a different robot/task than today's code: {'; '.join(differences)} "
            "(--force exports with the values the run trained with)"
        )
    return with_additions(recorded_interface, current)


# Facts about the robot the exporter learned to write after some runs were recorded: a run without them gets
# today's values. Anything else a run did not record (a training setting) is a difference.
ADDED_FACTS = {"robot.fall", "robot.base_body", "robot.scene", "robot.foot_bodies", "robot.ee_body", "commands.frame"}


def differing_fields(recorded: Any, current: Any, prefix: str = "") -> list[str]:
    """Readable 'field: recorded -> today' lines for every leaf that differs (an :data:`ADDED_FACTS` field the run
    predates is not a difference)."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        keys = sorted(set(recorded) | {k for k in current if f"{prefix}{k}" not in ADDED_FACTS})
        return [
            line for key in keys for line in differing_fields(recorded.get(key), current.get(key), f"{prefix}{key}.")
        ]
    if recorded != current:
        return [f"{prefix.rstrip('.')}: {_short(recorded)} -> {_short(current)}"]
    return []


def with_additions(recorded: Any, current: Any, prefix: str = "") -> Any:
    """``recorded`` plus today's values of the :data:`ADDED_FACTS` it predates."""
    if not (isinstance(recorded, dict) and isinstance(current, dict)):
        return recorded
    merged = {key: with_additions(value, current.get(key), f"{prefix}{key}.") for key, value in recorded.items()}
    added = {k: v for k, v in current.items() if k not in recorded and f"{prefix}{k}" in ADDED_FACTS}
    return merged | added


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def export_run(run_path: str, out: Path | None = None, force: bool = False) -> dict:
    """Export the run's latest (or given) checkpoint; returns the export report (parity errors, paths)."""
    from sim2real.export.metadata import stamp
    from sim2real.export.onnx_export import actor_from_runner, export_policy
    from sim2real.export.task_interface import task_interface

    run_dir, checkpoint = resolve_checkpoint(run_path)
    info, iteration = read_run_info(run_dir), checkpoint_iteration(checkpoint)
    # one CPU env is enough to rebuild the actor, as the checkpoint trained (a later resume's overrides aside)
    overrides = recorded_overrides(info, ("physics", "cone", "seed"), iteration)
    run = load_task(info["task"], [*overrides, "device=cpu", "env.scene.num_envs=1"])
    interface = run_interface(run_dir, iteration, task_interface(info["task"], run.env, run.agent.clip_actions), force)
    randomization = run_randomization(run_dir, iteration)
    metadata = stamp(
        interface, f"{run_dir.name}/{checkpoint.stem}", info["git_revision"], info["versions"], randomization
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
