"""Export an rsl-rl actor (or any raw-obs -> action torch module) to a self-describing ONNX policy file.

The file follows ``docs/policy_schema.md``: input ``obs`` (raw observations, the normaliser folded in), output
``actions`` (deterministic mean; a velocity-estimating actor adds ``base_lin_vel_estimate``), dynamic batch,
weights inline, metadata in ``metadata_props``.
Every export is checked against PyTorch with onnxruntime before the file lands at its final path, so a
file that exists is a file that matches the trained network.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from sim2real.export.metadata import embed_metadata, save_onnx, write_json_copy
from sim2real_deploy.policy_file import INPUT_NAME, OUTPUT_NAME, read_metadata, validate_metadata

OPSET = 18
PARITY_BATCHES = (1, 64)


class ParityError(RuntimeError):
    """The exported ONNX graph disagrees with the PyTorch actor beyond the tolerance."""


def actor_from_runner(runner: Any) -> nn.Module:
    """The deterministic actor of an rsl-rl 5.x runner (``OnPolicyRunner`` or ``DistillationRunner``).

    ``alg.get_policy()`` returns the raw module even when the algorithm wrapped it with ``torch.compile``
    (``alg.actor`` may then be a compiled wrapper that does not export). Recurrent actors carry hidden
    state the schema has no inputs for, so they are refused.
    """
    alg = runner.alg
    actor = alg.get_policy() if hasattr(alg, "get_policy") else alg.actor
    if getattr(actor, "is_recurrent", False):
        raise NotImplementedError("recurrent actors are not supported by the policy schema (no hidden-state inputs)")
    if hasattr(alg, "eval_mode"):
        alg.eval_mode()
    return actor.eval()


def export_policy(
    actor: nn.Module, metadata: Mapping[str, Any], path: str | Path, parity_tol: float = 1e-5
) -> dict[str, Any]:
    """Write ``actor`` with ``metadata`` to ``path`` (and ``<stem>.json``); return the export report.

    ``actor`` is an rsl-rl 5.x actor model (``MLPModel`` with its empirical normaliser; exported through its
    own ``as_onnx()``) or any module mapping raw obs ``[B, obs_dim]`` to actions ``[B, n]``. Raises
    ``PolicyFileError`` for invalid metadata, ``ValueError`` for shape mismatches and ``ParityError`` when
    onnxruntime and PyTorch differ by more than ``parity_tol``; nothing is left at ``path`` then.
    """
    meta = validate_metadata(dict(metadata), "export metadata")
    path = Path(path)
    _check_obs_dim(actor, meta.obs_dim)
    module = _exportable(actor)
    model = _to_onnx(module, meta.obs_dim)
    _check_output_dim(model, meta.num_actions)
    embed_metadata(model, meta.raw)

    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.onnx")
    try:
        save_onnx(model, tmp)
        parity = _parity(tmp, _reference(actor, module), _normaliser(actor), meta.obs_dim, parity_tol)
        read_metadata(tmp)  # the shared reader (robot side) must accept what we wrote
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    json_path = write_json_copy(path, meta.raw)
    return {
        "path": str(path),
        "json_path": str(json_path),
        "opset": OPSET,
        "obs_dim": meta.obs_dim,
        "num_actions": meta.num_actions,
        "size_bytes": path.stat().st_size,
        "parity": parity,
        "max_abs_err": max(parity.values()),
        "parity_tol": parity_tol,
    }


def _exportable(actor: nn.Module) -> nn.Module:
    """A CPU, eval-mode copy mapping raw obs -> deterministic actions (the normaliser included)."""
    module = actor.as_onnx(verbose=False) if hasattr(actor, "as_onnx") else copy.deepcopy(actor)
    return module.to("cpu").eval()


def _to_onnx(module: nn.Module, obs_dim: int) -> Any:
    """Trace with torch's dynamo exporter into memory, with a symbolic batch dimension.

    Exporting to memory (``f=None``) keeps the weights in the proto, so ``save_onnx`` writes one file;
    the file-based exporter writes a separate ``.data`` file. The example batch is 2 because
    ``torch.export`` specialises a dimension of size 1 to a constant. A module with more than one output names
    them in ``output_names``, ``actions`` first.
    """
    with warnings.catch_warnings():  # torch 2.11's exporter warns about its own pytree internals
        warnings.simplefilter("ignore", FutureWarning)
        program = torch.onnx.export(
            module,
            (torch.zeros(2, obs_dim),),
            None,
            dynamo=True,
            opset_version=OPSET,
            input_names=[INPUT_NAME],
            output_names=list(getattr(module, "output_names", (OUTPUT_NAME,))),
            dynamic_shapes=({0: torch.export.Dim("batch")},),
            verbose=False,
        )
    return program.model_proto


def _check_obs_dim(actor: nn.Module, obs_dim: int) -> None:
    actor_dim = getattr(actor, "obs_dim", None)
    if actor_dim is not None and int(actor_dim) != obs_dim:
        raise ValueError(f"actor takes {actor_dim} observations, metadata terms sum to {obs_dim}")


def _check_output_dim(model: Any, num_actions: int) -> None:
    dims = model.graph.output[0].type.tensor_type.shape.dim
    width = dims[-1].dim_value if dims else 0
    if width != num_actions:
        raise ValueError(f"actor outputs {width} actions, the metadata's joints (and gripper) take {num_actions}")


def _reference(actor: nn.Module, module: nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """The PyTorch function the ONNX graph must match: the original actor where it can be called on raw obs.

    An rsl-rl ``MLPModel`` takes a TensorDict of observation groups; with one group, call it directly so the
    parity check also covers ``as_onnx()``. With several groups the group sizes are unknown here, so the
    exported copy stands in.
    """
    groups = getattr(actor, "obs_groups", None)
    if groups is not None and len(groups) != 1:
        return lambda obs: _actions(module(obs))
    device = next(actor.parameters(), torch.zeros(0)).device  # the actor may live on the GPU

    def call(obs: torch.Tensor) -> torch.Tensor:
        obs = obs.to(device)
        if groups is not None:
            from tensordict import TensorDict

            obs = TensorDict({groups[0]: obs}, batch_size=[obs.shape[0]])
        return actor(obs).cpu()

    return call


def _actions(outputs: torch.Tensor | tuple[torch.Tensor, ...]) -> torch.Tensor:
    """The actions of a module that may return further outputs after them."""
    return outputs[0] if isinstance(outputs, tuple) else outputs


def _normaliser(actor: nn.Module) -> Callable[[np.ndarray], np.ndarray] | None:
    """Map normalised observations back to raw ones through the actor's empirical normaliser, if it has one."""
    norm = getattr(actor, "obs_normalizer", None)
    if norm is None or not hasattr(norm, "inverse"):
        return None

    def to_raw(z: np.ndarray) -> np.ndarray:
        device = norm._mean.device
        with torch.no_grad():
            return norm.inverse(torch.as_tensor(z, device=device)).cpu().numpy()

    return to_raw


def _parity(
    path: Path,
    reference: Callable[[torch.Tensor], torch.Tensor],
    to_raw: Callable[[np.ndarray], np.ndarray] | None,
    obs_dim: int,
    tol: float,
) -> dict[str, float]:
    """Max |onnxruntime - PyTorch| on random raw inputs and on random normalised inputs mapped to raw, each held
    to ``tol`` relative to the largest output (at least 1): float32 rounding grows with the outputs' size.

    Raw N(0, 1) inputs alone can miss a wrong normaliser when the trained mean/std are far from 0/1; inputs
    drawn in the normalised space exercise the range the network actually saw in training. (Raw inputs through a
    normaliser with a small std, e.g. the reach task's target, give outputs in the hundreds.)
    """
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    errors = {}
    for kind in ("raw", "normalised"):
        for batch in PARITY_BATCHES:
            obs = rng.standard_normal((batch, obs_dim)).astype(np.float32)
            if kind == "normalised" and to_raw is not None:
                obs = to_raw(obs).astype(np.float32)
            with torch.no_grad():
                expected = reference(torch.from_numpy(obs)).numpy()
            actual = session.run([OUTPUT_NAME], {INPUT_NAME: obs})[0]
            if actual.shape != expected.shape:
                raise ParityError(f"{kind} batch {batch}: ONNX output {actual.shape}, PyTorch {expected.shape}")
            case = f"{kind}_batch{batch}"
            errors[case] = float(np.max(np.abs(actual - expected)))
            limit = tol * max(1.0, float(np.max(np.abs(expected))))
            if errors[case] > limit:
                raise ParityError(f"ONNX and PyTorch differ by {errors[case]:.3g} > {limit:.3g} ({case}): {errors}")
    return errors
