"""Profile Go2 stepping on the CPU under different Newton/MuJoCo-Warp settings, and check each stays physical.

Each setting runs in its own process (one Isaac Lab simulation per process). For every setting it reports
env-steps/s standing (zero actions) and with random actions, and the physical checks used to reject settings:
base height and its spread after 3 s of standing, the lowest foot-sphere bottom (penetration), and falls.

    .venv/bin/python benchmarks/physics_settings.py --num-envs 64 --out docs/physics_cpu.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

# name -> overrides applied to the newton_cpu preset (solver fields, num_substeps, physics dt)
SETTINGS: dict[str, dict] = {
    "isaaclab_stock (2 substeps, 100/50 iters)": {"num_substeps": 2, "iterations": 100, "ls_iterations": 50},
    "1 substep, 100/50 iters": {"num_substeps": 1, "iterations": 100, "ls_iterations": 50},
    "1 substep, 20/10 iters": {"num_substeps": 1, "iterations": 20, "ls_iterations": 10},
    "1 substep, 5/5 iters": {"num_substeps": 1, "iterations": 5, "ls_iterations": 5},
    "1 substep, elliptic cone impratio 100": {
        "num_substeps": 1,
        "iterations": 20,
        "ls_iterations": 10,
        "cone": "elliptic",
        "impratio": 100.0,
    },
    "dt 0.01 (100 Hz physics), 20/10 iters": {"num_substeps": 1, "iterations": 20, "ls_iterations": 10, "dt": 0.01},
}
FOOT_RADIUS = 0.022  # Go2 MJCF foot sphere


def measure(overrides: dict, num_envs: int, seconds: float) -> dict:
    import gymnasium as gym
    import torch
    from isaaclab.app.sim_launcher import launch_simulation

    import sim2real.tasks  # noqa: F401
    from sim2real.robots.go2.env_cfg import Go2FlatEnvCfg

    cfg = Go2FlatEnvCfg()
    cfg.scene.num_envs = num_envs
    cfg.seed = 0
    cfg.events.push_robot = None
    cfg.events.reset_base.params["velocity_range"] = {}
    cfg.events.reset_joints.params["position_range"] = (1.0, 1.0)
    physics = cfg.sim.physics
    physics.num_substeps = overrides.get("num_substeps", physics.num_substeps)
    for key in ("iterations", "ls_iterations", "cone", "impratio"):
        if key in overrides:
            setattr(physics.solver_cfg, key, overrides[key])
    if "dt" in overrides:
        cfg.sim.dt = overrides["dt"]
        cfg.decimation = round(0.02 / cfg.sim.dt)
        cfg.scene.contact_forces.update_period = cfg.sim.dt
    with launch_simulation(cfg, {"device": "cpu", "visualizer": "none"}):
        env = gym.make("Sim2Real-Velocity-Flat-Go2-v0", cfg=cfg)
        env.reset(seed=0)
        robot = env.unwrapped.scene["robot"]
        feet = [robot.body_names.index(n) for n in robot.body_names if n.endswith("_foot")]
        zeros = torch.zeros(num_envs, 12)
        steps = int(seconds / 0.02)
        heights, foot_min, falls = [], float("inf"), 0
        start = time.perf_counter()
        for i in range(steps):
            _, _, terminated, _, _ = env.step(zeros)
            falls += int(terminated.sum())
            if i >= steps - 50:
                heights.append(robot.data.root_pos_w.torch[:, 2].clone())
                foot_min = min(foot_min, float(robot.data.body_pos_w.torch[:, feet, 2].min()) - FOOT_RADIUS)
        stand_rate = steps * num_envs / (time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(50):
            env.step(torch.rand(num_envs, 12) * 2 - 1)
        random_rate = 50 * num_envs / (time.perf_counter() - start)
        env.close()
    h = torch.stack(heights)
    return {
        "stand_env_steps_per_s": round(stand_rate),
        "random_env_steps_per_s": round(random_rate),
        "base_height_mean": round(float(h.mean()), 4),
        "base_height_std_over_time": round(float(h.std(dim=0).mean()), 5),
        "lowest_foot_bottom_m": round(foot_min, 4),
        "falls_while_standing": falls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=4.0, help="standing time per setting (sim seconds)")
    parser.add_argument("--out", default=None, help="write results as JSON here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print("RESULT " + json.dumps(measure(SETTINGS[args.child], args.num_envs, args.seconds)))
        return
    results = {}
    for name in SETTINGS:
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                name,
                "--num-envs",
                str(args.num_envs),
                "--seconds",
                str(args.seconds),
            ],
            capture_output=True,
            text=True,
        )
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        results[name] = json.loads(lines[-1][7:]) if lines else {"error": proc.stderr[-800:]}
        print(f"{name:45s} {results[name]}", flush=True)
    from sim2real.runlog import machine_description

    report = {"machine": machine_description(), "num_envs": args.num_envs, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
