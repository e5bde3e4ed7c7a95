"""The ``sim2real`` command line. Run ``sim2real <command> --help`` for each command's options."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

# torch's OpenMP workers otherwise busy-wait between ops and starve the physics threads on small CPUs (measured:
# 2-3x slower training on 2 cores, docs/native_physics.md). Must be set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

DEFAULT_TASK = "Sim2Real-Velocity-Flat-Go2-v0"

OVERRIDES_HELP = """\
overrides (Hydra syntax, any env or agent field):
  env.scene.num_envs=1024          number of parallel environments
  agent.max_iterations=1500        PPO iterations (each = num_steps_per_env x num_envs env steps)
  device=cuda:0                    env AND learner device (default cpu)
  physics=newton_cpu               physics preset: native_mujoco_cpu (CPU default), newton_cpu,
                                   newton_gpu (GPU default)
  cone=pyramidal                   friction cone: mjcf (default: the robot MJCF's, as sim2sim and the
                                   ROS bridge simulate it), elliptic or pyramidal (cheaper, docs/cone.md)
  agent.minibatch_size=384         fix the minibatch size instead of the count (scales with num_envs)
  agent.symmetry=true              left-right symmetric data augmentation (docs/symmetry.md)
  agent.velocity_estimator=false   an actor without its base-velocity estimate (learned beside PPO,
                                   exported inside the ONNX graph; on by default for the Go2 and Go1)
  agent.algorithm.smoothness_coef=0.05
                                   a Lipschitz (gradient) penalty on the actor in PPO's loss
                                   (sim2real/smoothness.py; default 0, none)
  seed=7  run_name=myrun           seed (set before env creation) and run-folder suffix
  env.events.push_robot=null       disable a term (randomisation, reward, ...)
A wrong key or a value of the wrong type is an error that lists the valid keys.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sim2real",
        description="Train, check and export robot policies: Isaac Lab tasks, rsl-rl PPO, ONNX, native MuJoCo.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    tasks = commands.add_parser("tasks", help="list the registered tasks")
    tasks.set_defaults(func=_tasks)

    train = commands.add_parser(
        "train",
        help="train a policy (CPU by default)",
        epilog=OVERRIDES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train a task with PPO. Writes logs/<experiment>/<time>/: resolved config (params/), run.json "
        "(versions, git revision, command), TensorBoard events, checkpoints model_<it>.pt and train.log.",
    )
    train.add_argument("--task", default=DEFAULT_TASK, help=f"task id (default {DEFAULT_TASK}; see `sim2real tasks`)")
    train.add_argument(
        "--resume",
        metavar="RUN",
        help="continue a run folder (or checkpoint) from its latest "
        "checkpoint: iteration count, weights, optimiser and normaliser state; overrides given with it apply from "
        "there on (a fine-tune), and each checkpoint exports with the config it trained under",
    )
    train.add_argument("--log-root", type=Path, default=Path("logs"), help="where run folders go (default logs/)")
    train.add_argument("overrides", nargs="*", help="Hydra-style key=value overrides (see below)")
    train.set_defaults(func=_train)

    play = commands.add_parser(
        "play",
        help="run a trained checkpoint and report survival and velocity tracking",
        description="Load a checkpoint into its task (few envs, no pushes), run whole episodes with the "
        "deterministic policy and print survival time and velocity-tracking errors; saves a plot.",
        epilog=OVERRIDES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    play.add_argument("run", help="run folder (latest checkpoint) or a model_<it>.pt file")
    play.add_argument("--num-envs", type=int, default=16)
    play.add_argument("--episodes", type=int, default=1, help="episodes per env")
    play.add_argument("overrides", nargs="*")
    play.set_defaults(func=_play)

    export = commands.add_parser(
        "export",
        help="export a checkpoint to a self-describing ONNX file",
        description="Export the deterministic actor with its observation normaliser to one ONNX file with the "
        "metadata a robot needs (docs/policy_schema.md), check ONNX vs PyTorch parity, write a JSON copy.",
    )
    export.add_argument("run", help="run folder (latest checkpoint) or a model_<it>.pt file")
    export.add_argument("--out", type=Path, help="output .onnx path (default <run>/exported/policy.onnx)")
    export.add_argument(
        "--force",
        action="store_true",
        help="export even if today's robot spec or task config differs from what the run recorded "
        "(the recorded values are written)",
    )
    export.set_defaults(func=_export)

    ros_config = commands.add_parser(
        "ros-config",
        help="write a robot's ROS 2 parameter files from its spec",
        description="Write deploy_ros/config/<robot>.yaml (policy_node) and <robot>_sim.yaml (mujoco_bridge) from "
        "the robot spec: the driver's joint order (the MJCF's actuator order) and the node's safety thresholds.",
    )
    ros_config.add_argument("robot", help="robot name (go2, g1, panda, ...)")
    ros_config.add_argument("--out", type=Path, help="folder to write to (default deploy_ros/config)")
    ros_config.set_defaults(func=_ros_config)

    tiles = commands.add_parser(
        "terrain-tiles",
        help="write a rough task's terrain tiles for the sim-to-sim terrain check",
        description="Build every sub-terrain of a rough task's generator at a middle and the hardest difficulty and "
        "write their height grids (the physics' 0.1 m heightfield) to assets/terrain/<robot>_rough.npz, for "
        "`sim2real sim2sim <policy> --terrain <file>`.",
    )
    tiles.add_argument("task", help="a rough task id, e.g. Sim2Real-Velocity-Rough-Go2-v0")
    tiles.add_argument("--out", type=Path, help="file to write (default assets/terrain/<robot>_rough.npz)")
    tiles.add_argument(
        "--spacing",
        type=float,
        help="grid spacing [m] (default: the physics' heightfield, 0.1 m); finer makes a stair riser steeper than "
        "training's 48-degree ramp, closer to a real stair's vertical face (a different file: use --out)",
    )
    tiles.set_defaults(func=_terrain_tiles)

    curves = commands.add_parser(
        "curves",
        help="plot learning curves of one or more runs",
        description="Plot a TensorBoard scalar (default Train/mean_reward) of runs against env steps and wall-clock.",
    )
    curves.add_argument("runs", nargs="+", type=Path, help="run folders (label=folder to name a curve)")
    curves.add_argument("--out", type=Path, default=Path("curves.png"), help="PNG to write (default curves.png)")
    curves.add_argument("--tag", default="Train/mean_reward", help="TensorBoard scalar to plot")
    curves.set_defaults(func=_curves)

    sim2sim = commands.add_parser(
        "sim2sim",
        help="check an exported policy in native MuJoCo",
        add_help=False,
        description="Run an exported ONNX policy in native MuJoCo through a scripted command schedule.",
    )
    sim2sim.add_argument("args", nargs=argparse.REMAINDER, help="see `sim2real sim2sim --help`")
    sim2sim.set_defaults(func=_sim2sim)

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sim2sim"]:  # its own argparse (robot-side module, no torch): hand over every argument
        return _sim2sim(argparse.Namespace(args=argv[1:]))
    # overrides may come before or after options (argparse stops collecting a positional list at an option)
    args, extra = parser.parse_known_args(argv)
    if extra and hasattr(args, "overrides") and not any(e.startswith("-") for e in extra):
        args.overrides += extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from sim2real.config import ConfigError

    try:
        return args.func(args) or 0
    except (ConfigError, FileNotFoundError, ValueError) as exc:  # bad input: say what, exit 2, touch nothing
        print(f"sim2real {args.command}: error: {exc}", file=sys.stderr)
        return 2


def _tasks(args: argparse.Namespace) -> int:
    from sim2real.config import task_ids

    print("\n".join(task_ids()))
    return 0


def _train(args: argparse.Namespace) -> int:
    from sim2real.train import train

    run_dir = train(args.task, args.overrides, log_root=args.log_root, resume=args.resume)
    print(
        f"run folder: {run_dir}\n  tensorboard --logdir {run_dir}\n  sim2real play {run_dir}\n"
        f"  sim2real export {run_dir}"
    )
    return 0


def _play(args: argparse.Namespace) -> int:
    from sim2real.play import play

    report = play(args.run, args.overrides, num_envs=args.num_envs, episodes=args.episodes)
    return 0 if report["survival_rate"] > 0 else 1


def _export(args: argparse.Namespace) -> int:
    from sim2real.export.onnx_export import ParityError
    from sim2real.export_run import export_run

    try:
        export_run(args.run, args.out, force=args.force)
    except ParityError as exc:  # not the user's input: a failed self-check, no file written
        print(f"sim2real export: failed: {exc}", file=sys.stderr)
        return 1
    return 0


def _terrain_tiles(args: argparse.Namespace) -> int:
    from sim2real.terrain_tiles import write_tiles

    if args.spacing is not None and not (args.spacing > 0.0 and args.out):
        raise ValueError("--spacing must be > 0 and needs --out: the check's own file keeps the physics' grid")
    print(write_tiles(args.task, args.out, args.spacing))
    return 0


def _ros_config(args: argparse.Namespace) -> int:
    from sim2real.robots import ROBOTS
    from sim2real.ros_config import CONFIG_DIR, write_config_files

    spec = ROBOTS.get(args.robot)
    if spec is None:
        print(f"error: no robot {args.robot!r} (known: {', '.join(sorted(ROBOTS))})", file=sys.stderr)
        return 2
    for path in write_config_files(spec, args.out or CONFIG_DIR):
        print(path)
    return 0


def _curves(args: argparse.Namespace) -> int:
    from sim2real.curves import plot_runs

    runs = {}
    for item in map(str, args.runs):
        label, _, folder = item.rpartition("=")
        runs[label or Path(folder).name] = Path(folder)
    print(plot_runs(runs, args.out, args.tag))
    return 0


def _sim2sim(args: argparse.Namespace) -> int:
    from sim2real_deploy.sim2sim.cli import main as sim2sim_main

    return sim2sim_main(args.args)


if __name__ == "__main__":
    sys.exit(main())
