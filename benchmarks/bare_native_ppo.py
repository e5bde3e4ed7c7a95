"""The reference for the native CPU path: a bare loop of batched native MuJoCo + rsl-rl PPO, no Isaac Lab.

The Go2 MJCF (motors as the spec's PD servos) stepped by ``mujoco.rollout.Rollout(nthread=<cores>)``, 4 physics
steps per env-step, a 45-value policy observation computed in numpy, a velocity-tracking reward, resets of fallen
robots, and rsl-rl's PPO with the same networks and settings as the Go2 task. Then the same measurement for the
Isaac Lab task on both CPU physics paths (``newton_cpu``: MuJoCo-Warp on Warp's CPU device; ``native_mujoco_cpu``:
native MuJoCo on all cores), each in its own process, and the ratios to the bare loop (target: native >= 0.8).

    .venv/bin/python benchmarks/bare_native_ppo.py --num-envs 256 1024 --iterations 5 --out docs/bare_native_ppo.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the sim2real CLI does: torch threads must not spin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from native_physics import DECIMATION, bare_model, default_joint_pos  # noqa: E402

from sim2real_deploy.observations import projected_gravity  # noqa: E402


class BareGo2Env:
    """Just enough of rsl-rl's VecEnv for PPO: batched native MuJoCo with resets, no Isaac Lab."""

    def __init__(self, num_envs: int, nthread: int, device: str = "cpu"):
        import mujoco
        import numpy as np
        import torch
        from mujoco import rollout

        self.np, self.torch, self.device = np, torch, device
        self.model, joints = bare_model()
        self.num_envs, self.num_actions, self.max_episode_length = num_envs, self.model.nu, 1000
        self.cfg = {}
        self.default = np.array([default_joint_pos(j) for j in joints])
        self.data = [mujoco.MjData(self.model) for _ in range(nthread)]
        self.runner = rollout.Rollout(nthread=nthread)
        d = mujoco.MjData(self.model)
        d.qpos[2] = 0.33
        d.qpos[7:] = self.default
        mujoco.mj_forward(self.model, d)
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        state0 = np.empty(mujoco.mj_stateSize(self.model, self.spec))
        mujoco.mj_getState(self.model, d, state0, self.spec)
        self.state0, self.states = state0, np.tile(state0, (num_envs, 1))
        self.out = np.empty((num_envs, DECIMATION, state0.size))
        self.command = np.random.default_rng(0).uniform(-1, 1, (num_envs, 3))
        self.last_action = np.zeros((num_envs, self.num_actions))
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long)

    def _obs(self):
        np = self.np
        nq = self.model.nq
        qpos, qvel = self.states[:, 1 : 1 + nq], self.states[:, 1 + nq : 1 + nq + self.model.nv]
        gravity = projected_gravity(qpos[:, 3:7].T).T  # the robot side's own formula, on every env at once
        obs = np.concatenate(
            [qvel[:, 3:6], gravity, self.command, qpos[:, 7:] - self.default, qvel[:, 6:], self.last_action], axis=1
        )
        tensor = self.torch.as_tensor(obs, dtype=self.torch.float32)
        from tensordict import TensorDict

        return TensorDict({"policy": tensor, "critic": tensor}, batch_size=[self.num_envs])

    def get_observations(self):
        return self._obs()

    def step(self, actions):
        np, torch = self.np, self.torch
        act = actions.cpu().numpy().astype(np.float64)
        ctrl = np.repeat((self.default + 0.25 * act)[:, None], DECIMATION, axis=1)
        self.runner.rollout(
            [self.model] * self.num_envs,
            self.data,
            self.states,
            ctrl,
            nstep=DECIMATION,
            state=self.out,
            skip_checks=True,
        )
        self.states[:] = self.out[:, -1]
        self.last_action = act
        nq = self.model.nq
        vel = self.states[:, 1 + nq : 3 + nq]
        reward = np.exp(-np.sum((vel - self.command[:, :2]) ** 2, axis=1) / 0.25)
        self.episode_length_buf += 1
        fell = self.states[:, 3] < 0.15
        timeout = (self.episode_length_buf >= self.max_episode_length).numpy()
        done = fell | timeout
        if done.any():  # reset only the finished envs' rows
            self.states[done] = self.state0
            self.episode_length_buf[torch.as_tensor(done)] = 0
        extras = {"time_outs": torch.as_tensor(timeout)}
        return self._obs(), torch.as_tensor(reward, dtype=torch.float32), torch.as_tensor(done), extras


def bare_runner(num_envs: int):
    """The bare env and an rsl-rl runner with the Go2 task's networks and PPO settings (plain rsl-rl PPO)."""
    import importlib.metadata

    from isaaclab_rl.rsl_rl.utils import handle_deprecated_rsl_rl_cfg
    from rsl_rl.runners import OnPolicyRunner

    from sim2real.config import load_task

    agent = load_task("Sim2Real-Velocity-Flat-Go2-v0", [f"env.scene.num_envs={num_envs}"]).agent
    agent.algorithm.class_name = "PPO"  # plain rsl-rl PPO
    cfg = handle_deprecated_rsl_rl_cfg(agent, importlib.metadata.version("rsl-rl-lib")).to_dict()
    cfg["obs_groups"] = {"actor": ["policy"], "critic": ["critic"]}
    env = BareGo2Env(num_envs, nthread=os.cpu_count() or 1)
    return env, OnPolicyRunner(env, cfg, log_dir=None, device="cpu")


def measure_bare(num_envs: int, iterations: int) -> float:
    env, runner = bare_runner(num_envs)
    runner.learn(1)
    start = time.perf_counter()
    runner.learn(iterations)
    return iterations * runner.cfg["num_steps_per_env"] * num_envs / (time.perf_counter() - start)


PATHS = ("newton_cpu", "native_mujoco_cpu")


def measure_task(num_envs: int, iterations: int, physics: str) -> float | None:
    """Training env-steps/s of the Isaac Lab Go2 task, measured by ``throughput.py`` in its own process."""
    from throughput import run_child

    args = ["--child", str(num_envs), "--steps", "20", "--iterations", str(iterations), f"physics={physics}"]
    result = run_child(args)
    return result["training_env_steps_per_s"] if result else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--iterations", type=int, default=5, help="timed PPO iterations per measurement")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    from sim2real.runlog import machine_description

    rows = []
    for n in args.num_envs:
        row = {"num_envs": n, "bare_native_ppo": round(measure_bare(n, args.iterations))}
        row |= {physics: measure_task(n, args.iterations, physics) for physics in PATHS}
        row |= {
            f"{physics}_vs_bare": round(row[physics] / row["bare_native_ppo"], 2) for physics in PATHS if row[physics]
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    machine = machine_description()
    print(f"\ntraining env-steps/s, Go2 flat, {args.iterations} PPO iterations each, on {machine}")
    print("| envs | bare native + PPO | newton_cpu | native_mujoco_cpu | newton_cpu / bare | native / bare |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        cells = [r["num_envs"], r["bare_native_ppo"], *(r[p] for p in PATHS), *(r.get(f"{p}_vs_bare") for p in PATHS)]
        print("| " + " | ".join(f"{c:,}" if isinstance(c, int) else str(c) for c in cells) + " |")
    if args.out:
        args.out.write_text(json.dumps({"machine": machine, "iterations": args.iterations, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
