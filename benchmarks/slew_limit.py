"""How fast a policy's own joint targets move, and which slew limit it survives: the basis of policy_node's default.

Runs the policy through sim-to-sim's default schedule in native MuJoCo (no ROS, no Isaac Lab) and reports
1. the rate of its joint targets per joint group (median, p99, p99.9, max) over one default and two randomised
   episodes, next to the motors' no-load speed;
2. for each slew limit given as a fraction of the no-load speed (the node's ``target_rate_fraction``), whether the
   default and the randomised check (3 episodes) still pass with the targets slew-limited as the node does.

    .venv/bin/python benchmarks/slew_limit.py assets/policies/go2_flat/policy.onnx --fractions 1.0 0.5 0.33 0.25
"""

from __future__ import annotations

import argparse
import re

import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy
from sim2real_deploy.sim2sim import RANDOMIZED, Randomization, Sim2SimConfig
from sim2real_deploy.sim2sim.episode import run_episode, sample_perturbations
from sim2real_deploy.sim2sim.verdict import evaluate, segment_metrics


class SlewLimitedRobot:
    """A MujocoRobot whose control-step targets move at most ``max_step`` per tick, as policy_node clamps them."""

    def __init__(self, robot: MujocoRobot, max_step: np.ndarray | None):
        self.robot, self.max_step, self.previous, self.targets = robot, max_step, None, []

    def __getattr__(self, name):
        return getattr(self.robot, name)

    def reset(self, *args, **kwargs) -> None:
        self.previous = None
        self.robot.reset(*args, **kwargs)

    def step(self, target: np.ndarray) -> None:
        if self.max_step is not None and self.previous is not None:
            target = np.clip(target, self.previous - self.max_step, self.previous + self.max_step)
        self.previous = target
        self.targets.append(target)
        self.robot.step(target)


def episodes(policy: OnnxPolicy, robot: SlewLimitedRobot, rand: Randomization, count: int, cfg: Sim2SimConfig):
    out = []
    for i in range(count):
        perturb = sample_perturbations(rand, np.random.default_rng([cfg.seed, i]), 20.0)
        episode = run_episode(policy, robot, cfg, perturb, robot.standing_height())
        episode["segments"] = segment_metrics(episode["trace"], cfg.schedule, cfg.transition_s)
        out.append(episode)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.5, 0.33, 0.25])
    args = parser.parse_args()
    policy = OnnxPolicy(args.policy)
    meta, cfg = policy.metadata, Sim2SimConfig()
    vmax, dt = meta.joint_array("velocity_limit"), meta.control_dt

    free = SlewLimitedRobot(MujocoRobot.from_metadata(meta), None)
    episodes(policy, free, Randomization(), 1, cfg)
    episodes(policy, free, RANDOMIZED, 2, cfg)
    rates = np.abs(np.diff(np.array(free.targets), axis=0)) / dt
    print("target rate [rad/s] by joint group: p50 / p99 / p99.9 / max (no-load speed)")
    for group in sorted({re.sub(r"^[A-Z]+_|^(left|right)_", "", n) for n in meta.joint_names}):
        idx = [i for i, n in enumerate(meta.joint_names) if n.endswith(group)]
        r = rates[:, idx].ravel()
        p50, p99, p999 = np.percentile(r, [50, 99, 99.9])
        print(f"  {group:<16} {p50:6.2f} / {p99:6.2f} / {p999:6.2f} / {r.max():6.2f}  ({vmax[idx[0]]:.2f})")

    for fraction in args.fractions:
        robot = SlewLimitedRobot(MujocoRobot.from_metadata(meta), fraction * vmax * dt)
        for label, rand, count in (("default", Randomization(), 1), ("randomised", RANDOMIZED, 3)):
            failed, _ = evaluate(episodes(policy, robot, rand, count, cfg), cfg)
            print(f"slew {fraction:.2f} x no-load speed, {label:<10}: {'PASS' if not failed else 'FAIL ' + failed[0]}")


if __name__ == "__main__":
    main()
