"""What a velocity-estimating actor believes against what the robot does: one command at a time, native MuJoCo.

For each command (vx, vy, yaw rate), one nominal episode of sim-to-sim (stand 2 s, then the command for
``--seconds``, behind the slew limit the policy trained behind) and, after the first 1 s of the command, the mean
measured base velocity (vx, vy in the base frame, and the yaw rate) beside the mean of the actor's own base-velocity
estimate (vx, vy; the exported graph's `base_lin_vel_estimate` output, docs/policy_schema.md). A policy that misses
an axis it estimates well knows it is off and is not paid enough to fix it; one that estimates the axis wrong walks
by a wrong belief.

    .venv/bin/python benchmarks/velocity_estimate.py assets/policies/g1_flat/policy.onnx \
        --command 0.6 0.2 0.4 --command 0.6 0 0.4 --command 0 0.2 0 --out docs/velocity_estimate.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import onnxruntime as ort

from sim2real.runlog import machine_description
from sim2real_deploy.mujoco_robot import MujocoRobot
from sim2real_deploy.policy_file import ESTIMATE_OUTPUT_NAME, INPUT_NAME, OUTPUT_NAME, OnnxPolicy
from sim2real_deploy.sim2sim import Sim2SimConfig
from sim2real_deploy.sim2sim.config import Segment
from sim2real_deploy.sim2sim.episode import SlewLimit, run_episode, sample_perturbations, target_steps


class EstimatingPolicy:
    """The exported policy, also returning its velocity estimate (recorded per call)."""

    def __init__(self, path: str):
        self.session, self.estimates = ort.InferenceSession(path, providers=["CPUExecutionProvider"]), []
        if ESTIMATE_OUTPUT_NAME not in {out.name for out in self.session.get_outputs()}:
            raise SystemExit(
                f"{path}: no {ESTIMATE_OUTPUT_NAME} output (trained without a velocity estimator, or exported before "
                "2026-12-07: export its checkpoint again)"
            )

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        outputs = [OUTPUT_NAME, ESTIMATE_OUTPUT_NAME]
        action, estimate = self.session.run(outputs, {INPUT_NAME: np.asarray(obs, np.float32)[None]})
        self.estimates.append(estimate[0])
        return action[0]


def probe(path: str, command: tuple[float, float, float], seconds: float) -> dict:
    meta = OnnxPolicy(path).metadata
    cfg = Sim2SimConfig(schedule=(Segment("stand", 2.0, (0.0, 0.0, 0.0)), Segment("move", seconds, command)))
    robot = MujocoRobot.from_metadata(meta)
    nominal = sample_perturbations(cfg.randomization, np.random.default_rng(0), 2.0 + seconds, robot)
    policy = EstimatingPolicy(path)
    slew = SlewLimit(target_steps(meta, None), start=meta.joint_array("default_joint_pos"))
    episode = run_episode(policy, robot, cfg, nominal, robot.standing_height(), target_filter=slew)
    trace = episode["trace"]
    judged = trace["t"] > 3.0
    estimates = np.asarray(policy.estimates)[: len(judged)]
    return {
        "command": list(command),
        "survived": episode["survived"],
        "measured_vx_vy_yaw_rate": np.round(trace["measured"][judged].mean(axis=0), 3).tolist(),
        "estimated_vx_vy": [round(float(v), 3) for v in estimates[judged, :2].mean(axis=0)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("policy")
    parser.add_argument("--command", nargs=3, type=float, action="append", metavar=("VX", "VY", "WZ"), required=True)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--out")
    args = parser.parse_args()
    rows = [probe(args.policy, tuple(c), args.seconds) for c in args.command]
    for row in rows:
        print(
            f"command {row['command']}: measured {row['measured_vx_vy_yaw_rate']}, estimated {row['estimated_vx_vy']}"
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"policy": args.policy, "machine": machine_description(), "probes": rows}, f, indent=2)


if __name__ == "__main__":
    main()
