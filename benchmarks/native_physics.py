"""Go2 flat on the CPU: bare native MuJoCo vs Isaac Lab env.step with ``newton_cpu`` and ``native_mujoco_cpu``.

For each env count it reports env-steps/s (one env-step = 4 physics steps of 5 ms, random actions):

(a) ``bare``: native MuJoCo alone, the Go2 MJCF (``assets/robots/go2/go2.xml``) on a plane, its motors turned into
    PD position servos (Kp 25, Kd 0.5, effort limits of the MJCF), the same solver options as the presets,
    stepped 4 physics steps per call by ``mujoco.rollout.Rollout(nthread=<cores>)``; no Isaac Lab, no resets.
    This is the physics part of a bare "native MuJoCo + PPO" loop: the upper bound.
(b) Isaac Lab ``env.step`` of Sim2Real-Velocity-Flat-Go2-v0 with ``physics=newton_cpu`` (MuJoCo-Warp, CPU device).
(c) the same with ``physics=native_mujoco_cpu`` (``tasks/physics_native.py``).

Ratios (c)/(a) and (c)/(b) follow. The Isaac Lab rows also give the share of env.step spent inside the solver
(``solver_share``) and, for (c), inside the native MuJoCo stepping itself (``native_step_share``): a bare loop that
stepped the very same models from the very same states would spend that time too, so it is the ratio of (c) to
such a loop. (a) steps the MJCF from calmer states (no resets, no random initial velocities), hence more steps/s.
Each Isaac Lab measurement runs in its own process (one simulation per process).

    /tmp/venv312/bin/python benchmarks/native_physics.py --num-envs 256 1024 --steps 20
    /tmp/venv312/bin/python benchmarks/native_physics.py --num-envs 256 --omp-wait-policy ''   # torch's default
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "Sim2Real-Velocity-Flat-Go2-v0"
DECIMATION, DT, ACTION_SCALE = 4, 0.005, 0.25


def default_joint_pos(name: str, robot: str = "go2") -> float:
    """A robot spec's standing/home pose (``sim2real/robots/``), by joint name."""
    from sim2real.robots import ROBOTS

    return ROBOTS[robot].default_pos(name)


def bare_model(robot: str = "go2"):
    """A robot's MJCF (on a plane if it floats), motors on its policy joints -> the spec's PD position servos, solver
    options of the ``newton_cpu`` preset. Returns the model and the joint each actuator drives (None: not a joint)."""
    import mujoco

    from sim2real.robots import ROBOTS

    spec_robot = ROBOTS[robot]
    spec = mujoco.MjSpec.from_file(str(spec_robot.mjcf_path))
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05])
    spec.option.timestep = DT
    spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL
    spec.option.impratio = 1.0
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.iterations, spec.option.ls_iterations, spec.option.tolerance = 100, 50, 1e-6
    for act in spec.actuators:  # the spec's PD gains and effort limits, by joint name (a gripper tendon keeps its own)
        if act.trntype != mujoco.mjtTrn.mjTRN_JOINT or act.target not in spec_robot.joint_names:
            continue
        group = spec_robot.group_of(act.target)
        act.set_to_position(kp=group.stiffness, kv=group.damping)
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-group.effort_limit, group.effort_limit]
    model = spec.compile()
    joints = [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.actuator_trnid[i, 0])
        if model.actuator_trntype[i] == mujoco.mjtTrn.mjTRN_JOINT
        else None
        for i in range(model.nu)
    ]
    return model, joints


def measure_bare(num_envs: int, steps: int, nthread: int, robot: str = "go2") -> dict:
    import mujoco
    import numpy as np
    from mujoco import rollout

    from sim2real.robots import ROBOTS

    model, actuated_joints = bare_model(robot)
    data = [mujoco.MjData(model) for _ in range(nthread)]
    models = [model] * num_envs
    d = mujoco.MjData(model)
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            d.qpos[adr + 2] = ROBOTS[robot].init_base_height or 0.33
        elif name := mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j):
            d.qpos[adr] = default_joint_pos(name, robot)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    mujoco.mj_forward(model, d)
    nstate = mujoco.mj_stateSize(model, spec)
    state0 = np.empty(nstate)
    mujoco.mj_getState(model, d, state0, spec)
    states = np.tile(state0, (num_envs, 1))
    rng = np.random.default_rng(0)
    default = np.array([default_joint_pos(name, robot) if name else 0.0 for name in actuated_joints])
    noise = ACTION_SCALE * np.array([name is not None for name in actuated_joints], dtype=float)
    out = np.empty((num_envs, DECIMATION, nstate))
    sensordata = np.empty((num_envs, DECIMATION, model.nsensordata))
    with rollout.Rollout(nthread=nthread) as runner:

        def env_step():
            ctrl = default + noise * rng.uniform(-1, 1, (num_envs, 1, model.nu))
            runner.rollout(
                models,
                data,
                states,
                np.repeat(ctrl, DECIMATION, axis=1),
                nstep=DECIMATION,
                state=out,
                sensordata=sensordata,
                skip_checks=True,
            )
            states[:] = out[:, -1]

        for _ in range(5):
            env_step()
        start = time.perf_counter()
        for _ in range(steps):
            env_step()
        elapsed = time.perf_counter() - start
    rate = steps * num_envs / elapsed
    return {
        "env_steps_per_s": round(rate),
        "physics_steps_per_s": round(rate * DECIMATION),
    } | ({"base_height_mean": round(float(states[:, 3].mean()), 3)} if model.jnt_type[0] == 0 else {})
    # state = [time, qpos...]: a floating base's height is qpos[2]


def measure_isaac(num_envs: int, steps: int, physics: str) -> dict:
    import torch

    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import go2_env
    from isaaclab_newton.physics import NewtonManager

    with go2_env(f"physics={physics}", num_envs=num_envs) as env:
        env.reset()
        solver = NewtonManager._solver
        inner = solver.step
        spent = [0.0]

        def timed_step(*args, **kwargs):
            t = time.perf_counter()
            inner(*args, **kwargs)
            spent[0] += time.perf_counter() - t

        solver.step = timed_step
        native = getattr(solver, "native", None)
        native_spent = [0.0]
        if native is not None:
            native_inner = native.step

            def timed_native():
                t = time.perf_counter()
                native_inner()
                native_spent[0] += time.perf_counter() - t

            native.step = timed_native
        gen = torch.Generator().manual_seed(0)
        for _ in range(5):  # warm-up: first resets, lazy allocations
            env.step(torch.rand(num_envs, env.num_actions, generator=gen) * 2 - 1)
        spent[0] = native_spent[0] = 0.0
        start = time.perf_counter()
        for _ in range(steps):
            env.step(torch.rand(num_envs, env.num_actions, generator=gen) * 2 - 1)
        elapsed = time.perf_counter() - start
        nthread = getattr(getattr(solver, "native", None), "nthread", 1)
    result = {
        "env_steps_per_s": round(steps * num_envs / elapsed),
        "solver_share": round(spent[0] / elapsed, 3),
        "solver_threads": nthread,
    }
    if native is not None:
        # share of env.step inside native mj_step (+ state copies): what a bare loop stepping the very same
        # models and states would also spend; 1 - this is the Isaac Lab + Newton overhead around it
        result["native_step_share"] = round(native_spent[0] / elapsed, 3)
    return result


def _child(kind: str, num_envs: int, steps: int, torch_threads: int, omp_wait_policy: str) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--num-envs",
        str(num_envs),
        "--steps",
        str(steps),
        "--torch-threads",
        str(torch_threads),
    ]
    env = dict(os.environ)
    if omp_wait_policy:
        env["OMP_WAIT_POLICY"] = omp_wait_policy
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines else {"error": proc.stderr[-1500:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--steps", type=int, default=20, help="timed env-steps per measurement (after 5 warm-up)")
    parser.add_argument("--nthread", type=int, default=os.cpu_count() or 1, help="threads for the bare rollout")
    parser.add_argument("--skip", nargs="*", default=[], choices=["bare", "newton_cpu", "native_mujoco_cpu"])
    parser.add_argument("--torch-threads", type=int, default=os.cpu_count() or 1, help="torch threads in the children")
    parser.add_argument(
        "--omp-wait-policy",
        default="PASSIVE",
        help="OMP_WAIT_POLICY for the children ('' leaves it unset: torch's idle OpenMP workers then "
        "spin and steal the cores the native stepping threads need)",
    )
    parser.add_argument("--out", default=None, help="write results as JSON here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        import torch

        torch.set_num_threads(args.torch_threads)
        if args.child == "bare":
            result = measure_bare(args.num_envs[0], args.steps, args.nthread)
        else:
            result = measure_isaac(args.num_envs[0], args.steps, args.child)
        print("RESULT " + json.dumps(result), flush=True)
        return
    cpu = (
        next(
            (ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")),
            platform.processor(),
        )
        if os.path.exists("/proc/cpuinfo")
        else platform.processor()
    )
    report = {
        "machine": f"{cpu}, {os.cpu_count()} cores",
        "load_average_at_start": os.getloadavg(),
        "steps": args.steps,
        "torch_threads": args.torch_threads,
        "omp_wait_policy": args.omp_wait_policy,
        "results": {},
    }
    print(
        f"# {report['machine']}; load average at start {report['load_average_at_start']}; torch threads "
        f"{args.torch_threads}, OMP_WAIT_POLICY={args.omp_wait_policy or '(unset)'}",
        flush=True,
    )
    for n in args.num_envs:
        row = {}
        for kind in ("bare", "newton_cpu", "native_mujoco_cpu"):
            if kind in args.skip:
                continue
            row[kind] = _child(kind, n, args.steps, args.torch_threads, args.omp_wait_policy)
            print(f"{n:5d} envs  {kind:18s} {row[kind]}", flush=True)
        rate = {k: v.get("env_steps_per_s") for k, v in row.items()}
        if rate.get("native_mujoco_cpu") and rate.get("bare"):
            row["native_over_bare"] = round(rate["native_mujoco_cpu"] / rate["bare"], 3)
        if rate.get("native_mujoco_cpu") and rate.get("newton_cpu"):
            row["native_over_newton_cpu"] = round(rate["native_mujoco_cpu"] / rate["newton_cpu"], 2)
        print(
            f"{n:5d} envs  ratios: native/bare {row.get('native_over_bare')}, "
            f"native/newton_cpu {row.get('native_over_newton_cpu')}",
            flush=True,
        )
        report["results"][n] = row
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
