"""A one-line training progress display over rsl-rl's logger; the full per-iteration report goes to a file."""

from __future__ import annotations

import contextlib
import datetime
import io
import statistics
import sys
from pathlib import Path

from rsl_rl.utils.logger import Logger


class ProgressLogger(Logger):
    """Keeps rsl-rl's TensorBoard logging; replaces its 30-line console block with one updating line:

    ``[120/300]  40% | reward 12.31 | ep len 612 | 4,812 steps/s | KL 0.0081 D2D 3.03e+06 | elapsed 0:04:10 | ETA
    0:06:15`` (KL and data-to-divergence: see :mod:`sim2real.ppo`)
    """

    def log(self, it: int, start_it: int, total_it: int, collect_time: float, learn_time: float, **kwargs) -> None:
        report = io.StringIO()
        with contextlib.redirect_stdout(report):
            super().log(
                it=it, start_it=start_it, total_it=total_it, collect_time=collect_time, learn_time=learn_time, **kwargs
            )
        if self.writer is None or self.log_dir is None:
            return
        with open(Path(self.log_dir) / "train.log", "a") as f:
            f.write(report.getvalue())
        steps_per_s = self.cfg["num_steps_per_env"] * self.num_envs * self.gpu_world_size / (collect_time + learn_time)
        self.writer.add_scalar("Perf/env_steps_per_s", steps_per_s, it)
        done = it + 1 - start_it
        eta = self.tot_time / done * (total_it - start_it - done)
        reward = f"{statistics.mean(self.rewbuffer):8.2f}" if self.rewbuffer else "     n/a"
        length = f"{statistics.mean(self.lenbuffer):5.0f}" if self.lenbuffer else "  n/a"
        losses = kwargs.get("loss_dict", {})
        d2d = (
            f" | KL {losses['kl_behaviour_updated']:.4f} D2D {losses['data_to_divergence']:.2e}"
            if ("data_to_divergence" in losses)
            else ""
        )
        width = len(str(total_it))
        line = (
            f"[{it + 1:>{width}}/{total_it}] {100 * (it + 1) / total_it:3.0f}% | reward {reward} | ep len {length} | "
            f"{steps_per_s:7,.0f} steps/s{d2d} | elapsed {_hms(self.tot_time)} | ETA {_hms(eta)}"
        )
        interactive = sys.stdout.isatty()
        print(("\r" + line) if interactive else line, end="" if interactive else "\n", flush=True)
        if interactive and it + 1 == total_it:
            print()


def _hms(seconds: float) -> str:
    return str(datetime.timedelta(seconds=int(seconds)))
