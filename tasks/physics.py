"""Physics presets. Picking one is a single setting (``physics=...`` on the CLI); tasks never hard-code solver knobs.

- ``native_mujoco_cpu`` (CPU default): the same MuJoCo model stepped by native MuJoCo (C) on all cores
  (``tasks/physics_native.py``, measurements in ``docs/native_physics.md``).
- ``newton_cpu``: MuJoCo-Warp on Warp's CPU device, the fastest setting that still stands the Go2 steadily with its
  feet on the ground (``benchmarks/physics_settings.py``, ``docs/physics_cpu.md``).
- ``newton_gpu`` (GPU default): Isaac Lab's stock locomotion settings, for thousands of envs.

Every preset's friction cone and impratio are then set from the robot's MJCF (``sim2real.config``, setting ``cone``).
"""

from __future__ import annotations

from isaaclab_newton.physics import MJWarpSolverCfg, NewtonCfg, NewtonShapeCfg

# MuJoCo-Warp settings of Isaac Lab's flat Go2 task; presets differ only in how they step them
_SOLVER = dict(njmax=65, nconmax=35, cone="pyramidal", impratio=1.0, integrator="implicitfast")
_SHAPES = dict(margin=0.0, ke=160000.0, kd=1100.0)


def newton_cpu() -> NewtonCfg:
    """Stock solver settings with one substep per 5 ms physics step instead of two: ~3x faster on the CPU, same
    standing height and foot contact. Fewer solver iterations bought nothing (the solve converges early)."""
    return NewtonCfg(
        solver_cfg=MJWarpSolverCfg(**_SOLVER, use_mujoco_contacts=False),
        num_substeps=1,
        default_shape_cfg=NewtonShapeCfg(**_SHAPES),
    )


def newton_gpu() -> NewtonCfg:
    """Isaac Lab's stock locomotion settings (two substeps), cheap on a GPU."""
    return NewtonCfg(
        solver_cfg=MJWarpSolverCfg(**_SOLVER, use_mujoco_contacts=False),
        num_substeps=2,
        default_shape_cfg=NewtonShapeCfg(**_SHAPES),
    )


def native_mujoco_cpu() -> NewtonCfg:
    """``newton_cpu``'s solver settings, stepped by native MuJoCo (C) on all CPU cores with MuJoCo's own collision
    (``tasks/physics_native.py``, ``docs/native_physics.md``). CPU only; MuJoCo-Warp stays the GPU path."""
    from sim2real.tasks.physics_native import NativeMuJoCoSolverCfg

    return NewtonCfg(
        solver_cfg=NativeMuJoCoSolverCfg(**_SOLVER),
        num_substeps=1,
        default_shape_cfg=NewtonShapeCfg(**_SHAPES),
    )


PHYSICS_PRESETS = {
    "newton_cpu": newton_cpu,
    "newton_gpu": newton_gpu,
    "native_mujoco_cpu": native_mujoco_cpu,
}


def default_physics(device: str, env_cfg: object = None) -> str:
    """On the CPU the task's validated preset (``cpu_physics``; native MuJoCo unless the task says otherwise: 2.5-3.6x
    faster training than MuJoCo-Warp there, docs/native_physics.md); MuJoCo-Warp on a GPU."""
    return getattr(env_cfg, "cpu_physics", "native_mujoco_cpu") if device == "cpu" else "newton_gpu"
