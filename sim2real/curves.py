"""Learning curves from run folders' TensorBoard logs: reward against iterations, env steps and wall-clock."""

from __future__ import annotations

from pathlib import Path


def read_scalars(run_dir: Path, tag: str, since: float | None = None) -> tuple[list[int], list[float], list[float]]:
    """(iteration, wall time [s], value) of one TensorBoard scalar of a run; time counts from the first point, or
    from the Unix time ``since`` when given (a run's start, to include start-up)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    events.Reload()
    if tag not in events.Tags()["scalars"]:
        raise ValueError(f"{run_dir}: no '{tag}' in its TensorBoard logs (tags: {events.Tags()['scalars']})")
    points = events.Scalars(tag)
    start = points[0].wall_time if since is None else since
    return [p.step for p in points], [p.wall_time - start for p in points], [p.value for p in points]


def plot_runs(runs: dict[str, Path], out: Path, tag: str = "Train/mean_reward") -> Path:
    """One figure: ``tag`` against env steps (left) and wall-clock minutes (right), a line per labelled run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_steps, by_time) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for label, run_dir in runs.items():
        iterations, seconds, values = read_scalars(run_dir, tag)
        batch = _batch_size(run_dir)
        by_steps.plot([(i + 1) * batch / 1e6 for i in iterations], values, label=label)
        by_time.plot([s / 60 for s in seconds], values, label=label)
    by_steps.set_xlabel("env steps [millions]")
    by_time.set_xlabel("wall-clock [minutes]")
    by_steps.set_ylabel(tag)
    by_steps.legend()
    for ax in (by_steps, by_time):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _batch_size(run_dir: Path) -> int:
    """Env steps per iteration from the run's resolved config."""
    import yaml

    env = yaml.safe_load((run_dir / "params" / "env.yaml").read_text())
    agent = yaml.safe_load((run_dir / "params" / "agent.yaml").read_text())
    return env["scene"]["num_envs"] * agent["num_steps_per_env"]
