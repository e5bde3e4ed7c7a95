"""Multi-process training on the CPU (torchrun, gloo): ranks agree after updates; rank 0 alone checkpoints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def torchrun(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)


def test_ranks_hold_identical_networks_after_updates(tmp_path: Path):
    result = torchrun(str(HERE / "distributed_worker.py"), str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    rank0, rank1 = (torch.load(tmp_path / f"rank{r}.pt", weights_only=False) for r in (0, 1))
    assert rank0["seed"] != rank1["seed"], "each rank must explore with its own seed"
    assert not torch.equal(rank0["first_obs"], rank1["first_obs"]), "ranks should simulate different envs"
    for name, value in rank0["actor"].items():
        assert torch.allclose(value, rank1["actor"][name], atol=1e-6), f"ranks diverged in {name}"
    # only rank 0 wrote checkpoints, and they are the shared network
    checkpoints = sorted((tmp_path / "logs").glob("model_*.pt"))
    assert [p.name for p in checkpoints] == ["model_0.pt", "model_1.pt"]


def test_rank0_checkpoint_resumes_in_a_single_process(tmp_path: Path):
    run = torchrun(
        "-m",
        "sim2real.cli",
        "train",
        "--log-root",
        str(tmp_path / "logs"),
        "env.scene.num_envs=4",
        "agent.num_steps_per_env=8",
        "agent.max_iterations=2",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (run_dir,) = (tmp_path / "logs" / "go2_flat").iterdir()
    assert (run_dir / "model_1.pt").is_file()
    resumed = subprocess.run(
        [sys.executable, "-m", "sim2real.cli", "train", "--resume", str(run_dir), "agent.max_iterations=3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert torch.load(run_dir / "model_2.pt", weights_only=False)["iter"] == 2
