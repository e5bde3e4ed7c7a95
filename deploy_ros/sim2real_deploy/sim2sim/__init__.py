"""Sim-to-sim check: run an exported policy file in native MuJoCo, as the robot would run it.

Reads only what a robot has: the ONNX file, its embedded metadata and the robot's MJCF. The robot is simulated by
:class:`~sim2real_deploy.mujoco_robot.MujocoRobot` (joints bound by name, the training actuator model at the
physics rate) and the policy input is built by the same observation code as the ROS node's. A scripted command
schedule drives the policy and the report says whether it survived and tracked the commands. Joint-order,
action-scale or observation bugs in the export or the metadata show up here instead of on hardware.

Parts: ``config`` (schedule, perturbations, criteria), ``episode`` (one run of the schedule), ``verdict``
(metrics and pass/fail), ``report`` (plot, video, JSON, summary), ``run`` (all episodes), ``cli``. No torch or
Isaac Lab (tested): numpy, mujoco, onnxruntime, and matplotlib for the plot.
"""

from sim2real_deploy.gl_backend import default_headless_gl

default_headless_gl()  # before anything imports mujoco: --video must render on a headless CPU machine

from sim2real_deploy.sim2sim.config import (  # noqa: E402
    DEFAULT_SCHEDULE,
    RANDOMIZED,
    RANDOMIZED_CONFIG,
    FallRule,
    Randomization,
    Segment,
    Sim2SimConfig,
    Sim2SimError,
    Thresholds,
    terrain_config,
)
from sim2real_deploy.sim2sim.run import run_sim2sim, run_terrain  # noqa: E402

__all__ = [
    "DEFAULT_SCHEDULE",
    "FallRule",
    "RANDOMIZED",
    "RANDOMIZED_CONFIG",
    "Randomization",
    "Segment",
    "Sim2SimConfig",
    "Sim2SimError",
    "Thresholds",
    "run_sim2sim",
    "run_terrain",
    "terrain_config",
]
