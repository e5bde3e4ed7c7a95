"""Run folders: what a run records so that it can be reproduced, resumed and audited."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import platform
import subprocess
from pathlib import Path

import yaml

from sim2real import REPO_ROOT

PACKAGES = (
    "sim2real",
    "isaaclab",
    "rsl-rl-lib",
    "torch",
    "warp-lang",
    "newton",
    "mujoco",
    "mujoco-warp",
    "onnx",
    "onnxruntime",
    "hydra-core",
    "numpy",
)


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_revision(repo: Path = REPO_ROOT) -> str:
    """HEAD's hash, with ``-dirty`` when tracked files differ from it; ``unknown`` outside a git checkout."""
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def new_run_dir(log_root: Path, experiment: str, run_name: str = "") -> Path:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    run_dir = Path(log_root) / experiment / (f"{stamp}_{run_name}" if run_name else stamp)
    run_dir.mkdir(parents=True, exist_ok=False)
    return run_dir


def replayed_overrides(overrides: list[str], settings: dict) -> list[str]:
    """The overrides a resume or export replays: all but the settings (device, seed, ...), which each invocation
    chooses and run.json keeps under "settings"."""
    return [o for o in overrides if o.split("=", 1)[0] not in settings]


def write_run_info(
    run_dir: Path, task: str, settings: dict, overrides: list[str], env_cfg: dict, agent_cfg: dict, argv: list[str]
) -> None:
    """Resolved config, versions, git revision (and diff) and the command line, written before training starts."""
    (run_dir / "params").mkdir(exist_ok=True)
    with open(run_dir / "params" / "env.yaml", "w") as f:
        yaml.safe_dump(env_cfg, f, sort_keys=False)
    with open(run_dir / "params" / "agent.yaml", "w") as f:
        yaml.safe_dump(agent_cfg, f, sort_keys=False)
    info = {
        "task": task,
        "settings": settings,
        "overrides": replayed_overrides(overrides, settings),
        "command": argv,
        "git_revision": git_revision(),
        "versions": package_versions(),
        "python": platform.python_version(),
        "machine": machine_description(),
        "started_at": datetime.datetime.now().isoformat(timespec="seconds"),
    }
    with open(run_dir / "run.json", "w") as f:
        json.dump(info, f, indent=2)
    diff = subprocess.run(["git", "diff", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True)
    if diff.returncode == 0 and diff.stdout:
        (run_dir / "git.diff").write_text(diff.stdout)


def record_resume(run_dir: Path, checkpoint: Path, overrides: list[str], argv: list[str]) -> None:
    """Log a resume in run.json. Its overrides join the run's own, so a later resume or export replays them."""
    info = read_run_info(run_dir)
    info["overrides"] = [*info.get("overrides", []), *replayed_overrides(overrides, info["settings"])]
    info.setdefault("resumes", []).append(
        {
            "checkpoint": checkpoint.name,
            "overrides": overrides,
            "command": argv,
            "git_revision": git_revision(),
            "at": datetime.datetime.now().isoformat(timespec="seconds"),
        }
    )
    path = Path(run_dir) / "run.json"
    path.with_suffix(".json.tmp").write_text(json.dumps(info, indent=2))
    path.with_suffix(".json.tmp").replace(path)  # atomic: a crash never leaves a half-written run.json


def read_run_info(run_dir: Path) -> dict:
    path = Path(run_dir) / "run.json"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir} is not a sim2real run folder (no run.json)")
    return json.loads(path.read_text())


def recorded_overrides(info: dict, settings: tuple[str, ...] | None = None, iteration: int | None = None) -> list[str]:
    """The overrides that rebuild a run's config: its top-level settings (all, or only ``settings``), then its own;
    with ``iteration``, only those its checkpoint at that iteration trained with (not a later resume's)."""
    recorded = _current_settings(info["settings"])
    chosen = [f"{k}={v}" for k, v in recorded.items() if v not in (None, "") and (not settings or k in settings)]
    own = info.get("overrides", [])
    for resume in reversed(info.get("resumes", []) if iteration is not None else []):
        if checkpoint_iteration(resume["checkpoint"]) < iteration:
            break
        own = own[: len(own) - len(replayed_overrides(resume["overrides"], info["settings"]))]  # appended last
    return [*chosen, *own]


def _current_settings(settings: dict) -> dict:
    """A run's settings in today's terms: runs from before the ``cone`` setting trained with the pyramidal cone,
    except under the removed ``native_mujoco_cpu_elliptic`` preset (the Go2 MJCF's elliptic cone, impratio 100)."""
    settings = dict(settings)
    if settings.get("physics") == "native_mujoco_cpu_elliptic":
        settings.update(physics="native_mujoco_cpu", cone="mjcf")
    settings.setdefault("cone", "pyramidal")
    return settings


def machine_description() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def checkpoint_iteration(checkpoint: str | Path) -> int:
    """The iteration of a checkpoint file ``model_<iteration>.pt``."""
    return int(Path(checkpoint).stem.split("_")[1])


def checkpoints(run_dir: Path) -> list[Path]:
    """Checkpoints of a run, oldest first (``model_<iteration>.pt``)."""
    return sorted(Path(run_dir).glob("model_*.pt"), key=checkpoint_iteration)


def resolve_checkpoint(path: str | Path) -> tuple[Path, Path]:
    """(run dir, checkpoint) from a run folder (its latest checkpoint) or a checkpoint file."""
    path = Path(path)
    if path.is_file():
        return path.parent, path
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such run folder or checkpoint")
    found = checkpoints(path)
    if not found:
        raise FileNotFoundError(f"{path}: run folder has no checkpoints (model_<iteration>.pt)")
    return path, found[-1]
