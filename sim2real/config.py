"""Task lookup and Hydra-syntax overrides (``env.scene.num_envs=1024 agent.max_iterations=50 device=cpu``).

Overrides are parsed with Hydra's own grammar and applied to the task's config classes in place. Unlike a
plain dotlist merge, every key must already exist and every value must fit the field's type: a typo gets an
error that lists the valid keys at that level and the closest match, instead of being silently ignored.
"""

from __future__ import annotations

import difflib
import importlib
import os
from dataclasses import dataclass
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser

# Top-level settings, not part of the env or agent configs. ``device`` drives the env AND the learner.
SETTINGS_DEFAULTS: dict[str, Any] = {"device": "cpu", "seed": 42, "physics": None, "cone": "mjcf", "run_name": ""}
CONES = ("mjcf", "elliptic", "pyramidal")  # ``cone``: the robot MJCF's friction cone and impratio, or one forced


class ConfigError(ValueError):
    """A wrong task id or override. The message names the problem and the valid choices."""


@dataclass
class RunConfig:
    task: str
    env: Any  # the task's ManagerBasedRLEnvCfg
    agent: Any  # the task's RslRlOnPolicyRunnerCfg
    settings: dict[str, Any]


def world() -> tuple[int, int, int]:
    """(world size, global rank, local rank) from torchrun's environment; (1, 0, 0) when not distributed."""
    return int(os.getenv("WORLD_SIZE", "1")), int(os.getenv("RANK", "0")), int(os.getenv("LOCAL_RANK", "0"))


def task_ids() -> list[str]:
    from sim2real.tasks import TASKS

    return sorted(TASKS)


def load_task(task: str, overrides: list[str] | tuple[str, ...] = ()) -> RunConfig:
    """Instantiate the task's env and agent configs, apply ``overrides``, and make device and physics consistent."""
    from sim2real.tasks import TASKS
    from sim2real.tasks.physics import PHYSICS_PRESETS, default_physics

    if task not in TASKS:
        close = difflib.get_close_matches(task, TASKS, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"unknown task {task!r}.{hint} Valid tasks: {', '.join(sorted(TASKS))}")
    env_cfg = _instantiate(TASKS[task]["env_cfg_entry_point"])
    agent_cfg = _instantiate(TASKS[task]["rsl_rl_cfg_entry_point"])
    settings = dict(SETTINGS_DEFAULTS)
    apply_overrides({"env": env_cfg, "agent": agent_cfg, **{k: settings for k in settings}}, settings, overrides)

    device = settings["device"]
    if device != "cpu" and not str(device).startswith("cuda"):
        raise ConfigError(f"device must be 'cpu' or 'cuda[:N]', got {device!r}")
    physics = settings["physics"] or default_physics(device, env_cfg)
    if physics not in PHYSICS_PRESETS:
        raise ConfigError(f"unknown physics preset {physics!r}. Valid presets: {', '.join(PHYSICS_PRESETS)}")
    settings["physics"] = physics
    env_cfg.sim.physics = PHYSICS_PRESETS[physics]()
    if settings["cone"] not in CONES:
        raise ConfigError(f"cone must be one of {', '.join(CONES)}, got {settings['cone']!r}")
    _match_robot_friction(env_cfg, settings["cone"])
    if callable(finalize := getattr(env_cfg, "finalize", None)):
        finalize()  # what a task derives from overridable fields and the preset (rough: the policy's height scan)
    size, rank, local_rank = world()
    if size > 1 and device.startswith("cuda"):
        device = f"cuda:{local_rank}"  # torchrun: one GPU per local rank
    env_cfg.sim.device = agent_cfg.device = device
    env_cfg.seed = agent_cfg.seed = settings["seed"] + rank  # each rank explores differently
    if settings["run_name"]:
        agent_cfg.run_name = settings["run_name"]
    _resolve_minibatches(agent_cfg, env_cfg.scene.num_envs)
    _resolve_symmetry(agent_cfg, env_cfg)
    _resolve_estimator(agent_cfg, env_cfg)
    _check_anneals(agent_cfg)
    return RunConfig(task, env_cfg, agent_cfg, settings)


def _match_robot_friction(env_cfg: Any, cone: str) -> None:
    """Every preset simulates the robot's contacts with its MJCF's friction cone and impratio (``cone=mjcf``), unless
    ``cone`` forces one (with the preset's impratio): the cheaper pyramidal cone for a speed comparison."""
    from sim2real.robots import ROBOTS
    from sim2real.robots.isaaclab import mjcf_friction_model

    solver, robot = env_cfg.sim.physics.solver_cfg, getattr(env_cfg, "robot", None)
    if cone != "mjcf":
        solver.cone = cone
    elif isinstance(robot, str) and robot in ROBOTS:
        for key, value in mjcf_friction_model(ROBOTS[robot]).items():
            setattr(solver, key, value)


def _resolve_minibatches(agent_cfg: Any, num_envs: int) -> None:
    """Fixed minibatch SIZE: derive the minibatch count from the batch (num_envs x num_steps_per_env)."""
    size = getattr(agent_cfg, "minibatch_size", None)
    if size is None:
        return
    batch = num_envs * agent_cfg.num_steps_per_env
    if not 0 < size <= batch:
        raise ConfigError(f"agent.minibatch_size={size} must be in 1..{batch} (num_envs x num_steps_per_env)")
    agent_cfg.algorithm.num_mini_batches = batch // size


def _resolve_symmetry(agent_cfg: Any, env_cfg: Any) -> None:
    """``agent.symmetry``: rsl-rl's symmetric data augmentation with the task's left-right mirror."""
    if not getattr(agent_cfg, "symmetry", False):
        return
    from isaaclab.managers import ObservationTermCfg as ObsTerm
    from isaaclab_rl.rsl_rl import RslRlSymmetryCfg

    from sim2real.robots import ROBOTS
    from sim2real.tasks.mdp.symmetry import MIRRORED_TERMS

    robot = getattr(env_cfg, "robot", None)
    if robot not in ROBOTS or ROBOTS[robot].mirror is None:
        raise ConfigError(f"agent.symmetry=true needs a robot spec with a mirror; {robot!r} has none")
    for group in ("policy", "critic"):
        terms = getattr(env_cfg.observations, group, None)
        names = [k for k, v in vars(terms).items() if isinstance(v, ObsTerm)] if terms is not None else []
        if unknown := [n for n in names if n not in MIRRORED_TERMS]:
            raise ConfigError(f"agent.symmetry=true: no mirror rule for the {group} term(s) {', '.join(unknown)}")
    agent_cfg.algorithm.symmetry_cfg = RslRlSymmetryCfg(
        use_data_augmentation=True, data_augmentation_func="sim2real.tasks.mdp.symmetry:mirror_left_right"
    )


def _resolve_estimator(agent_cfg: Any, env_cfg: Any) -> None:
    """``agent.velocity_estimator``: the actor estimates its base velocity (``sim2real.estimator``), regressed on the
    task's ``velocity_target`` observation group."""
    if not getattr(agent_cfg, "velocity_estimator", False):
        return
    from sim2real.estimator import TARGET_GROUP
    from sim2real.tasks.locomotion.velocity_env_cfg import VelocityTargetCfg

    if not hasattr(env_cfg.observations, TARGET_GROUP):
        raise ConfigError("agent.velocity_estimator=true needs a locomotion task (a floating base to estimate)")
    setattr(env_cfg.observations, TARGET_GROUP, VelocityTargetCfg())
    agent_cfg.actor.class_name = "sim2real.estimator:VelocityEstimatorModel"


def _check_anneals(agent_cfg: Any) -> None:
    algorithm = agent_cfg.algorithm
    for name in ("entropy_anneal", "action_std_anneal"):
        span = getattr(algorithm, name, (0, 0))
        if not (len(span) == 2 and all(isinstance(i, int) for i in span) and 0 <= span[0] <= span[1]):
            raise ConfigError(f"agent.algorithm.{name}={list(span)} must be [start,end] with 0 <= start <= end")
    final = getattr(algorithm, "action_std_max_final", None)
    if final is not None and not final > 0:
        raise ConfigError(f"agent.algorithm.action_std_max_final={final} must be > 0 (or null: no cap)")


def apply_overrides(roots: dict[str, Any], settings: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> None:
    """Apply Hydra-syntax ``key=value`` overrides; ``roots`` maps the first key segment to the object it edits."""
    try:
        parsed = OverridesParser.create().parse_overrides(list(overrides))
    except Exception as exc:  # hydra raises OverrideParseException with a readable message
        raise ConfigError(f"cannot parse overrides {list(overrides)}: {exc}") from exc
    for override in parsed:
        key, value = override.key_or_group, override.value()
        head, *path = key.split(".")
        if head not in roots:
            raise ConfigError(_unknown(key, head, sorted(roots)))
        if head in settings and not path:
            settings[head] = _coerce(key, settings[head], value)
            continue
        if not path:
            raise ConfigError(f"override {key!r} must name a field, e.g. {head}.<field>=<value>")
        _set_path(roots[head], head, path, value)


def _set_path(obj: Any, prefix: str, path: list[str], value: Any) -> None:
    for i, name in enumerate(path):
        keys = _keys(obj)
        if name not in keys:
            raise ConfigError(_unknown(".".join([prefix, *path[: i + 1]]), name, keys))
        if i == len(path) - 1:
            full = ".".join([prefix, *path])
            current = obj[name] if isinstance(obj, dict) else getattr(obj, name)
            new = _coerce(full, current, value)
            if isinstance(obj, dict):
                obj[name] = new
            else:
                setattr(obj, name, new)
            return
        obj = obj[name] if isinstance(obj, dict) else getattr(obj, name)
        if obj is None:
            raise ConfigError(f"{'.'.join([prefix, *path[: i + 1]])} is disabled (None): nothing to override below it")


def _keys(obj: Any) -> list[str]:
    if isinstance(obj, dict):
        return sorted(map(str, obj))
    if hasattr(obj, "__dataclass_fields__"):
        return sorted(obj.__dataclass_fields__)
    return sorted(k for k in vars(obj) if not k.startswith("_"))


def _coerce(key: str, current: Any, value: Any) -> Any:
    """Convert ``value`` to the type of ``current``; ``null`` disables optional terms."""
    if value is None or current is None:
        return value
    if isinstance(current, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(current, int) and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif isinstance(current, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    elif isinstance(current, str) and isinstance(value, (str, int, float)):
        return str(value)
    elif isinstance(current, (tuple, list)) and isinstance(value, (list, tuple)):
        return type(current)(value)
    elif isinstance(current, dict) and isinstance(value, dict):
        return value
    elif not isinstance(current, (bool, int, float, str, tuple, list, dict)):
        raise ConfigError(f"{key} is a config section ({type(current).__name__}); override its fields instead")
    raise ConfigError(f"{key} expects {type(current).__name__} (currently {current!r}), got {value!r}")


def _unknown(full_key: str, name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"unknown config key {full_key!r}.{hint} Valid keys here: {', '.join(valid)}"


def _instantiate(entry_point: str) -> Any:
    module, _, name = entry_point.partition(":")
    return getattr(importlib.import_module(module), name)()


def to_plain(obj: Any) -> Any:
    """A YAML/JSON-friendly copy of a config (callables and classes become 'module:name' strings)."""
    if hasattr(obj, "to_dict"):
        obj = obj.to_dict()
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if callable(obj) and hasattr(obj, "__qualname__"):
        return f"{obj.__module__}:{obj.__qualname__}"
    return repr(obj)
