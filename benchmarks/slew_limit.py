"""How fast a policy's own joint targets move, and which slew limit it survives: the basis of policy_node's default.

Runs the policy through sim-to-sim's default schedule in native MuJoCo (no ROS, no Isaac Lab) and reports
1. the rate of its joint targets per joint group (median, p99, p99.9, max) over one default and two randomised
   episodes, next to the motors' no-load speed;
2. for each slew limit given as a fraction of the no-load speed (the node's ``target_rate_fraction``), whether the
   default and the randomised check (20 episodes) still pass with the targets slew-limited as the node does.

    .venv/bin/python benchmarks/slew_limit.py assets/policies/go2_flat/policy.onnx --fractions 1.0 0.5 0.33 0.25
"""

from __future__ import annotations

import argparse
import re
from dataclasses import replace

import numpy as np

from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import OnnxPolicy
from sim2real_deploy.sim2sim import RANDOMIZED, RANDOMIZED_CONFIG, Randomization, Sim2SimConfig, Thresholds
from sim2real_deploy.sim2sim.episode import SlewLimit, run_episode, sample_perturbations
from sim2real_deploy.sim2sim.verdict import evaluate, segment_metrics


def episodes(policy: OnnxPolicy, robot: MujocoRobot, rand: Randomization, count: int, cfg: Sim2SimConfig, limit):
    """``count`` episodes, each with a fresh slew limiter from ``limit()``; returns (episodes, every target)."""
    out, targets = [], []
    duration = sum(s.duration for s in cfg.schedule)
    for i in range(count):
        perturb = sample_perturbations(rand, np.random.default_rng([cfg.seed, i]), duration, robot)
        slew = limit()
        episode = run_episode(policy, robot, cfg, perturb, robot.standing_height(), target_filter=slew)
        episode["segments"] = segment_metrics(episode["trace"], cfg.schedule, cfg.transition_s)
        out.append(episode)
        targets += slew.targets
    return out, np.array(targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy")
    parser.add_argument("--fractions", type=float, nargs="+", default=[1.0, 0.5, 0.33, 0.25])
    args = parser.parse_args()
    policy = OnnxPolicy(args.policy)
    meta, cfg = policy.metadata, Sim2SimConfig()
    vmax, dt = meta.joint_array("velocity_limit"), meta.control_dt

    robot = MujocoRobot.from_metadata(meta)
    _, nominal = episodes(policy, robot, Randomization(), 1, cfg, lambda: SlewLimit(None))
    _, randomised = episodes(policy, robot, RANDOMIZED, 2, cfg, lambda: SlewLimit(None))
    rates = np.concatenate([np.abs(np.diff(t, axis=0)) / dt for t in (nominal, randomised)])
    print("target rate [rad/s] by joint group: p50 / p99 / p99.9 / max (no-load speed)")
    for group in sorted({re.sub(r"^[A-Z]+_|^(left|right)_", "", n) for n in meta.joint_names}):
        idx = [i for i, n in enumerate(meta.joint_names) if n.endswith(group)]
        r = rates[:, idx].ravel()
        p50, p99, p999 = np.percentile(r, [50, 99, 99.9])
        print(f"  {group:<16} {p50:6.2f} / {p99:6.2f} / {p999:6.2f} / {r.max():6.2f}  ({vmax[idx[0]]:.2f})")

    for fraction in args.fractions:
        for label, rand, count in (
            ("default", Randomization(), 1),
            ("randomised", RANDOMIZED, RANDOMIZED_CONFIG.episodes),
        ):
            step = fraction * vmax * dt
            run = episodes(policy, robot, rand, count, cfg, lambda step=step: SlewLimit(step))[0]
            th = Thresholds() if label == "default" else RANDOMIZED_CONFIG.thresholds
            failed = evaluate(run, replace(cfg, thresholds=th))[0]
            print(f"slew {fraction:.2f} x no-load speed, {label:<10}: {'PASS' if not failed else 'FAIL ' + failed[0]}")


if __name__ == "__main__":
    main()
