"""rsl-rl's on-policy runner with two additions: a one-line progress display and CPU (gloo) multi-process training.

Distributed training follows torchrun's environment (WORLD_SIZE, RANK, LOCAL_RANK): every rank steps its own
``num_envs`` environments with its own seed, gradients are averaged across ranks after each backward pass, and only
rank 0 writes logs and checkpoints. rsl-rl itself supports NCCL on GPUs; on the CPU this uses gloo.
"""

from __future__ import annotations

import torch
from rsl_rl.runners import OnPolicyRunner

from sim2real.config import world
from sim2real.progress import ProgressLogger


class Runner(OnPolicyRunner):
    def __init__(self, env, train_cfg: dict, log_dir: str | None = None, device: str = "cpu") -> None:
        super().__init__(env, train_cfg, log_dir=log_dir, device=device)
        self.logger.__class__ = ProgressLogger  # same state and TensorBoard scalars, one console line per iteration

    def _configure_multi_gpu(self) -> None:
        size, rank, local_rank = world()
        if size == 1 or self.device != "cpu":
            super()._configure_multi_gpu()  # single process, or NCCL across GPUs
            return
        self.gpu_world_size, self.gpu_global_rank, self.gpu_local_rank = size, rank, local_rank
        self.is_distributed = True
        self.cfg["multi_gpu"] = {"global_rank": rank, "local_rank": local_rank, "world_size": size}
        if not torch.distributed.is_initialized():
            torch.distributed.init_process_group(backend="gloo", rank=rank, world_size=size)
