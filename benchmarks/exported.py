"""Export a training checkpoint as a robot gets it, for the benchmarks that score checkpoints in the checks."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def export_checkpoint(checkpoint: Path, onnx: Path, force: bool = False) -> Path:
    """``sim2real export`` in a subprocess (one Isaac Lab simulation per process); returns ``onnx``. ``force``
    exports a run that today's task config no longer matches, with the values it trained with."""
    export = [sys.executable, "-m", "sim2real.cli", "export", str(checkpoint), "--out", str(onnx)]
    export += ["--force"] if force else []
    subprocess.run(export, check=True, capture_output=True, text=True)
    return onnx


@contextmanager
def exported(checkpoint: Path) -> Iterator[Path]:
    """The checkpoint's ONNX policy in a temporary folder, removed on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        yield export_checkpoint(checkpoint, Path(tmp) / "policy.onnx")
