"""Native MuJoCo (C) physics for Isaac Lab's CPU path: the ``native_mujoco_cpu`` physics preset.

On the CPU, Isaac Lab steps physics through MuJoCo-Warp on Warp's CPU device: one core, float32 kernels and a few
thousand Python kernel launches per step (``docs/native_physics.md`` has the profile). This module keeps everything
Isaac Lab and Newton do around the solver (articulation views, explicit actuators, the contact sensor, resets,
randomisation events) and replaces only the MuJoCo-Warp step itself:

* :class:`NativeMuJoCoSolver` is Newton's :class:`~newton.solvers.SolverMuJoCo` built exactly as for MuJoCo-Warp
  (so ``mjw_model`` / ``mjw_data`` exist, in host memory on the CPU device), with MuJoCo's own collision detection.
  Its ``_mujoco_warp_step`` steps every world with ``mj_step``, on all cores, in a small C routine
  (``physics_native_batch.c``, compiled once with the system C compiler against the MuJoCo headers of the ``mujoco``
  wheel, loaded with ctypes). Each thread has one scratch ``MjData`` and takes the next unstepped world until none is
  left (worlds cost unequal time: fixed shares would leave a thread waiting). Per world it copies in what Newton
  wrote into ``mjw_data`` (qpos, qvel, applied forces, ctrl, warm start, mocap poses: Newton makes a fixed-base
  robot's root a mocap body at its env's origin), steps, and copies back what Newton and Isaac Lab read (qpos, qvel,
  qacc, warm start, actuator force, body poses, contacts and their constraint forces). Newton's own
  ``_update_newton_state`` and ``update_contacts`` then run unchanged, so Isaac Lab's ``ContactSensor`` sees MuJoCo
  contacts exactly as with ``use_mujoco_contacts``.
* Per-world physical parameters (friction, mass, COM, inertia, joint properties...) live in ``mjw_model``'s
  per-world arrays, which Newton updates on ``notify_model_changed`` (Isaac Lab's randomisation events end there).
  After each model change those arrays are copied into one table row per world (``NativeBatch.params``); each
  stepping thread has one native ``MjModel`` and writes a world's row into it before stepping that world. (One
  model copy per world, ~40 kB each for the Go2, stepped 1.4x slower at 1024 envs: they do not fit in cache.)
  Resets need nothing extra: they write joint state, which is copied in on the next step, and zero the warm start
  in ``mjw_data``, which is copied in too.
* Joint PD gains: the locomotion tasks use Isaac Lab's explicit actuators (torques computed in torch, applied as
  ``qfrc_applied``), so randomised gains act before the solver and need no native model write.

Use it with ``physics=native_mujoco_cpu`` (``sim2real train Sim2Real-Velocity-Flat-Go2-v0 physics=native_mujoco_cpu``).
MuJoCo-Warp remains the GPU path.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import warp as wp
from isaaclab.utils import configclass
from isaaclab_newton.physics import MJWarpSolverCfg
from isaaclab_newton.physics.mjwarp_manager import NewtonMJWarpManager
from newton.solvers import SolverMuJoCo

logger = logging.getLogger(__name__)

_C_SOURCE_PATH = Path(__file__).with_name("physics_native_batch.c")  # installed as package data

_FIELDS = [
    *("nworld", "nthread", "nq", "nv", "nu", "na", "nbody", "njmax", "naconmax", "efc_cols", "nstep", "ncon_cap"),
    "nmocap",
    "nparam",
]
# Array pointers of the C ``Batch`` struct, in its order: MuJoCo-Warp's data and contact arrays, then staging.
_DATA_ARRAYS = (
    "qpos",
    "qvel",
    "qacc",
    "qacc_warmstart",
    "qfrc_applied",
    "xfrc_applied",
    "ctrl",
    "act",
    "qfrc_actuator",
    "xpos",
    "xquat",
    "nacon",
    "mocap_pos",
    "mocap_quat",
)
_CONTACT_ARRAYS = ("pos", "frame", "friction", "dist", "dim", "geom", "efc_address", "worldid")
_STAGE_ARRAYS = {  # per-world contact staging: (values per contact, dtype)
    "s_pos": (3, np.float32),
    "s_frame": (9, np.float32),
    "s_friction": (5, np.float32),
    "s_dist": (1, np.float32),
    "s_dim": (1, np.int32),
    "s_geom": (2, np.int32),
    "s_efc": (1, np.int32),
}
_PTRS = [
    "m",
    "d",
    *_DATA_ARRAYS,
    *(f"c_{name}" for name in _CONTACT_ARRAYS),
    "efc_force",
    "ncon_world",
    "nefc_world",
    *_STAGE_ARRAYS,
    "param_src",
    "param_bytes",
    "param_dst",
]


class _Batch(ctypes.Structure):
    _fields_ = [(f, ctypes.c_int) for f in _FIELDS] + [(p, ctypes.c_void_p) for p in _PTRS]


_LIB = None
_LIB_LOCK = threading.Lock()


def _load_library() -> ctypes.CDLL:
    """``physics_native_batch.c`` built and loaded, once per process."""
    global _LIB
    with _LIB_LOCK:
        if _LIB is None:
            _LIB = build_library(_C_SOURCE_PATH)
        return _LIB


def build_library(source_path: Path) -> ctypes.CDLL:
    """Compile a version of the C stepping routine (once, cached by its bytes and the MuJoCo version) and load it.
    The benchmarks load other versions beside the package's own to time them side by side."""
    import mujoco

    pkg = Path(mujoco.__file__).parent
    libs = sorted(pkg.glob("libmujoco.so*")) or sorted(pkg.glob("libmujoco*.dylib"))
    if not libs or not (pkg / "include" / "mujoco" / "mujoco.h").exists():
        raise RuntimeError(f"the mujoco wheel at {pkg} has no libmujoco or headers: cannot build native stepping")
    libmujoco = libs[0]
    source = source_path.read_bytes()
    key = hashlib.sha1(source + (mujoco.__version__ + str(libmujoco)).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("SIM2REAL_CACHE", Path.home() / ".cache" / "sim2real"))
    cache.mkdir(parents=True, exist_ok=True)
    so = cache / f"native_mujoco_batch_{key}.so"
    if not so.exists():
        src = cache / f"native_mujoco_batch_{key}.c"
        src.write_bytes(source)  # compile the hashed bytes, not a file that may change meanwhile
        tmp = so.with_suffix(f".{os.getpid()}.tmp")
        cc = os.environ.get("CC", "cc")
        cmd = [
            cc,
            "-O2",
            "-shared",
            "-fPIC",
            f"-I{pkg / 'include'}",
            str(src),
            str(libmujoco),
            f"-Wl,-rpath,{pkg}",
            "-lpthread",
            "-o",
            str(tmp),
        ]
        try:
            subprocess.run(cmd, check=True, capture_output=True, text=True)
        except (OSError, subprocess.CalledProcessError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            raise RuntimeError(f"building native MuJoCo stepping failed ({' '.join(cmd)}): {detail}") from exc
        os.replace(tmp, so)
    # the mujoco Python module already loaded libmujoco: ctypes reuses that copy, so pointers are shared
    lib = ctypes.CDLL(str(so))
    lib.batch_step.argtypes = [ctypes.POINTER(_Batch)]
    lib.batch_step.restype = ctypes.c_int
    lib.batch_load_params.argtypes = [ctypes.POINTER(_Batch), ctypes.c_void_p, ctypes.c_int]
    lib.batch_load_params.restype = None
    return lib


class NativeBatch:
    """Every world stepped in C on ``nthread`` threads, each with one native ``MjModel`` and one scratch ``MjData``.

    The per-world state is not kept here: it is read from and written back to ``mjw_data`` around every step,
    so Newton's resets, state writes and readers work unchanged and a world's state is never duplicated. The
    per-world model parameters (``params``: one row per world, refreshed by :meth:`sync_model`) are written into the
    stepping thread's model before each world's step.
    """

    def __init__(self, mj_model, mjw_model, mjw_data, nthread: int | None = None):
        import mujoco

        self._lib = _load_library()
        self.mjw_model, self.mjw_data = mjw_model, mjw_data
        self.nworld = int(mjw_data.nworld)
        nthread = max(1, min(int(nthread or os.cpu_count() or 1), 64, self.nworld))
        self.models = [_copy_model(mj_model) for _ in range(nthread)]  # one per thread
        for m in self.models:
            # MuJoCo's midphase culls geom pairs with per-body BVH boxes kept in each body's inertial frame as
            # compiled. Newton then writes its own (equally valid) principal-axes body_iquat, so the boxes no longer
            # sit on the geoms: the G1's toe spheres lost ground contact at 0.5 mm penetration and its stand tipped
            # over. Without the midphase every geom pair gets MuJoCo's exact bounding test (cheap at these geom counts).
            m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MIDPHASE
        self.scratch = [mujoco.MjData(mj_model) for _ in range(nthread)]
        self._model_ptrs = (ctypes.c_void_p * nthread)(*[m._address for m in self.models])
        self._data_ptrs = (ctypes.c_void_p * nthread)(*[d._address for d in self.scratch])
        self.ncon_world = np.zeros(self.nworld, dtype=np.int32)
        self.nefc_world = np.zeros(self.nworld, dtype=np.int32)
        self._batched_fields = _batched_model_fields(mj_model, mjw_model, self.nworld)
        self.params = {
            name: np.zeros((self.nworld, _field(mj_model, name).size), _field(mj_model, name).dtype)
            for name in (*self._batched_fields, "opt.gravity")
        }
        self._param_src = (ctypes.c_void_p * len(self.params))(*[t.ctypes.data for t in self.params.values()])
        self._param_bytes = (ctypes.c_int * len(self.params))(*[t.strides[0] for t in self.params.values()])
        self._param_dst = (ctypes.c_void_p * (nthread * len(self.params)))(
            *[_field(m, name).ctypes.data for m in self.models for name in self.params]
        )
        self.sync_model()
        d, c = mjw_data, mjw_data.contact
        for name in _DATA_ARRAYS:
            _check_host(getattr(d, name), name)
        for name in _CONTACT_ARRAYS:
            _check_host(getattr(c, name), f"contact.{name}")
        _check_host(d.efc.force, "efc.force")
        cap = max(1, int(d.naconmax) // self.nworld)  # nconmax per world
        slots = self.nworld * cap
        # per-world contact staging, packed into mjw_data.contact after the threads join
        self._stage = {name: np.zeros((slots, n) if n > 1 else slots, dt) for name, (n, dt) in _STAGE_ARRAYS.items()}
        self._b = _Batch(
            nworld=self.nworld,
            nthread=nthread,
            nq=mj_model.nq,
            nv=mj_model.nv,
            nu=mj_model.nu,
            na=mj_model.na,
            nbody=mj_model.nbody,
            njmax=int(d.njmax),
            naconmax=int(d.naconmax),
            efc_cols=int(c.efc_address.shape[1]),
            nstep=1,
            ncon_cap=cap,
            nmocap=mj_model.nmocap,
            nparam=len(self.params),
            m=ctypes.cast(self._model_ptrs, ctypes.c_void_p),
            d=ctypes.cast(self._data_ptrs, ctypes.c_void_p),
            ncon_world=self.ncon_world.ctypes.data,
            nefc_world=self.nefc_world.ctypes.data,
            **{k: v.ctypes.data for k, v in self._stage.items()},
            param_src=ctypes.cast(self._param_src, ctypes.c_void_p),
            param_bytes=ctypes.cast(self._param_bytes, ctypes.c_void_p),
            param_dst=ctypes.cast(self._param_dst, ctypes.c_void_p),
        )
        self._bind()
        self._warned_drop = False

    def _bind(self) -> None:
        """Point the C routine at ``mjw_data``'s current host arrays (re-done every step: ~20 us, and safe should
        Newton ever replace an array)."""
        d, b = self.mjw_data, self._b
        for name in _DATA_ARRAYS:
            setattr(b, name, getattr(d, name).ptr)
        for name in _CONTACT_ARRAYS:
            setattr(b, f"c_{name}", getattr(d.contact, name).ptr)
        b.efc_force = d.efc.force.ptr

    @property
    def nthread(self) -> int:
        return self._b.nthread

    @nthread.setter
    def nthread(self, value: int) -> None:
        self._b.nthread = max(1, min(int(value), len(self.scratch)))

    def sync_model(self) -> None:
        """Refresh the per-world parameter rows from ``mjw_model`` (after Newton applied a model change) and the
        solver options every world shares."""
        opt = self.mjw_model.opt
        for name, arr in self._batched_fields.items():
            self.params[name][:] = arr.numpy().reshape(self.nworld, -1)
        self.params["opt.gravity"][:] = np.asarray(opt.gravity.numpy(), np.float64).reshape(-1, 3)
        for key in ("tolerance", "ls_tolerance", "impratio"):
            value = getattr(opt, key, None)
            if value is None:
                continue
            values = np.atleast_1d(value.numpy() if isinstance(value, wp.array) else value).ravel()
            if np.any(values != values[0]):
                raise NotImplementedError(f"native_mujoco_cpu: opt.{key} differs between worlds; it must be shared")
            for m in self.models:
                setattr(m.opt, key, float(values[0]))
        timestep = float(opt.timestep.numpy()[0])
        for m in self.models:
            m.opt.timestep = timestep
            m.opt.iterations = int(opt.iterations)
            m.opt.ls_iterations = int(opt.ls_iterations)

    def world_model(self, world: int):
        """A copy of the native model with ``world``'s parameters written in by the stepping code's own routine:
        the model that world is stepped with."""
        model = _copy_model(self.models[0])
        dst = (ctypes.c_void_p * len(self.params))(*[_field(model, name).ctypes.data for name in self.params])
        self._lib.batch_load_params(ctypes.byref(self._b), dst, world)
        return model

    def step(self) -> None:
        timestep = float(self.mjw_model.opt.timestep.numpy()[0])
        if timestep != self.models[0].opt.timestep:
            for m in self.models:
                m.opt.timestep = timestep
        self._bind()
        dropped = self._lib.batch_step(ctypes.byref(self._b))
        if dropped and not self._warned_drop:
            logger.warning(
                "native MuJoCo: %d contacts beyond nconmax=%d per env not reported to sensors "
                "(they still act in the physics; raise nconmax)",
                dropped,
                self._b.ncon_cap,
            )
            self._warned_drop = True


def _field(model, name: str) -> np.ndarray:
    """A model array by name, ``opt.<name>`` for solver options (a view into the model's memory)."""
    return getattr(model.opt, name[4:]) if name.startswith("opt.") else getattr(model, name)


def _copy_model(mj_model):
    import copy

    return copy.copy(mj_model)  # MjModel.__copy__ is a deep copy of the C model (mj_copyModel)


def _check_host(arr: wp.array, name: str) -> None:
    if arr.device.is_cuda or not arr.is_contiguous:
        raise RuntimeError(f"native MuJoCo needs contiguous host arrays (sim.device='cpu'); mjw_data.{name} is not")


def _batched_model_fields(mj_model, mjw_model, nworld: int) -> dict[str, wp.array]:
    """``mjw_model`` arrays that hold one entry per world and exist with the same per-world size in ``MjModel``."""
    fields = {}
    for name in dir(mjw_model):
        if name.startswith("_") or not hasattr(mj_model, name):
            continue
        arr = getattr(mjw_model, name, None)
        if not isinstance(arr, wp.array) or arr.ndim < 1 or arr.shape[0] not in (nworld,) or arr.size == 0:
            continue
        target = getattr(mj_model, name)
        if isinstance(target, np.ndarray) and arr.numpy()[0].size == target.size:
            fields[name] = arr
    return fields


def _warn_if_openmp_spins(nthread: int) -> None:
    """torch's idle OpenMP workers busy-wait after every op and take the cores the stepping threads need.

    Measured on 2 cores (Go2, 256 envs): 2.7k env-steps/s with torch on 2 threads and the default wait policy,
    7.4k with ``torch.set_num_threads(1)``, 9.4k with 2 threads and ``OMP_WAIT_POLICY=PASSIVE``. The variable must
    be set before torch is imported, so it can only be reported here."""
    try:
        import torch
    except ImportError:
        return
    if nthread > 1 and torch.get_num_threads() > 1 and os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":
        logger.warning(
            "native MuJoCo physics: set OMP_WAIT_POLICY=PASSIVE before starting Python (or use "
            "torch.set_num_threads(1)); torch's spinning OpenMP workers otherwise slow env.step ~3x"
        )


class NativeMuJoCoSolver(SolverMuJoCo):
    """Newton's MuJoCo solver with the MuJoCo-Warp step replaced by native MuJoCo on all CPU cores."""

    def __init__(self, model, *, nthread: int | None = None, **kwargs):
        if wp.get_device(model.device).is_cuda:
            raise RuntimeError("NativeMuJoCoSolver steps on the CPU: use sim.device='cpu' (MuJoCo-Warp: the GPU path)")
        kwargs["use_mujoco_cpu"] = False
        kwargs["use_mujoco_contacts"] = True  # MuJoCo's own collision detection, in C
        super().__init__(model, **kwargs)
        self.native = NativeBatch(self.mj_model, self.mjw_model, self.mjw_data, nthread)
        _warn_if_openmp_spins(self.native.nthread)

    def _mujoco_warp_step(self):
        self.native.step()

    def notify_model_changed(self, flags) -> None:
        super().notify_model_changed(flags)
        self._fix_heightfields()
        if getattr(self, "native", None) is not None:
            self.native.sync_model()

    def _fix_heightfields(self) -> None:
        """Two corrections for heightfield terrain under MuJoCo's own collision (measured on the Go2 rough task):

        * Newton builds a heightfield geom shifted down by the field's lowest height (MuJoCo heightfields start at
          0), but its per-world shape update writes the unshifted pose (and a unit size) into ``mjw_model``: the
          terrain would collide 0.77 m too high. Heightfields are static: keep the built model's pose and size.
        * Newton gives every shape a 1 cm ``gap`` (its own contact look-ahead). MuJoCo 3.12's heightfield collision
          treats a geom gap as extra thickness: feet stood 9-10 mm above the terrain and lost contact in ~15% of
          steps while standing still. With zero margin the gap has no other effect in MuJoCo, so drop it.
        """
        import mujoco

        if getattr(self, "mjw_model", None) is None:
            return
        hfields = np.flatnonzero(self.mj_model.geom_type == mujoco.mjtGeom.mjGEOM_HFIELD)
        if not hfields.size:
            return
        for name in ("geom_pos", "geom_size", "geom_gap"):
            values = getattr(self.mjw_model, name).numpy()
            values[:, hfields] = 0.0 if name == "geom_gap" else getattr(self.mj_model, name)[hfields]
            getattr(self.mjw_model, name).assign(values)


class NewtonNativeMuJoCoManager(NewtonMJWarpManager):
    """Isaac Lab's MuJoCo-Warp Newton manager, building :class:`NativeMuJoCoSolver` instead.

    The name must start with ``Newton``: Isaac Lab picks asset backends from the manager class name."""

    @classmethod
    def _create_solver(cls, model, solver_cfg: NativeMuJoCoSolverCfg) -> SolverMuJoCo:
        kwargs = cls._filter_solver_kwargs(SolverMuJoCo, solver_cfg)
        kwargs.pop("ls_parallel", None)
        return NativeMuJoCoSolver(model, nthread=getattr(solver_cfg, "nthread", None), **kwargs)


@configclass
class NativeMuJoCoSolverCfg(MJWarpSolverCfg):
    """:class:`MJWarpSolverCfg` whose solver steps native MuJoCo (C) on the CPU, every env on ``nthread`` threads."""

    class_type: type | str = "sim2real.tasks.physics_native:NewtonNativeMuJoCoManager"
    use_mujoco_contacts: bool = True
    nthread: int | None = None
    """Threads stepping the worlds (default: all cores, ``os.cpu_count()``)."""
