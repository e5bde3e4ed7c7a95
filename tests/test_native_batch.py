"""``NativeBatch`` (the C stepping behind ``native_mujoco_cpu``) against plain ``mujoco.mj_step``, no Isaac Lab env.

Three worlds of one tiny model (a damped, motor-driven hinge pendulum and a free box dropped onto a plane) with
different initial states, controls and per-world hinge damping, built with MuJoCo-Warp's ``put_model`` /
``put_data`` on Warp's CPU device as Newton does. Each world is stepped by ``NativeBatch`` and, as reference, by
``mj_step`` on its own ``MjModel`` / ``MjData``. ``NativeBatch`` keeps the state in MuJoCo-Warp's float32 arrays, so
the reference rounds qpos, qvel and the warm start to float32 after every step too: the two then follow the same
arithmetic and agree to float32 precision (measured: exactly), where a swapped world parameter is off by orders of
magnitude more.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import warp as wp

mjw = pytest.importorskip("mujoco_warp")
physics_native = pytest.importorskip("sim2real.tasks.physics_native")

XML = """
<mujoco>
  <option timestep="0.005" tolerance="1e-6"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 0.1"/>
    <body name="pole" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.03" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="box" pos="1 0 0.3">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/>
    </body>
  </worldbody>
  <actuator><motor joint="hinge"/></actuator>
</mujoco>
"""
NWORLD = 3
STEPS = 200  # 1 s: the boxes land (~0.2 s) and settle on the floor
HINGE = [0.3, -0.8, 1.5]  # rad, initial pendulum angle per world
BOX_Z = [0.3, 0.5, 0.2]  # m, initial box height per world
BOX_VX = [0.0, 0.4, -0.2]  # m/s, initial box velocity per world
CTRL = [0.0, 0.5, -0.5]  # N m on the hinge per world
DAMPING = [0.05, 1.0, 4.0]  # N m s/rad, hinge damping per world (a per-world model parameter)
TOL = 1e-5  # float32 state: ~1e-7 relative


def _initial_state(m: mujoco.MjModel) -> tuple[np.ndarray, np.ndarray]:
    qpos = np.tile(m.qpos0, (NWORLD, 1))
    qvel = np.zeros((NWORLD, m.nv))
    for w in range(NWORLD):
        qpos[w, 0] = HINGE[w]
        qpos[w, 3] = BOX_Z[w]  # free joint: hinge (1), then box position (3) and quaternion (4)
        qpos[w, 4:8] = [np.cos(0.2 * w), np.sin(0.2 * w), 0.0, 0.0]  # a different tilt per world
        qvel[w, 1] = BOX_VX[w]
    return qpos.astype(np.float32), qvel.astype(np.float32)  # as MuJoCo-Warp holds them


def _reference(m: mujoco.MjModel, qpos, qvel, ctrl: float, damping: float) -> dict[str, np.ndarray]:
    """One world stepped with ``mj_step``, its state rounded to float32 after each step as ``NativeBatch``'s is."""
    mw = mujoco.MjModel.from_xml_string(XML)
    # NativeBatch takes the per-world parameters and solver options from mjw_model, in float32 (the tolerance is
    # set to MuJoCo-Warp's floor, 1e-6, in XML: put_model raises smaller ones to it)
    mw.dof_damping[0] = np.float32(damping)
    mw.opt.gravity[:] = mw.opt.gravity.astype(np.float32)
    for name in ("timestep", "tolerance", "ls_tolerance"):
        setattr(mw.opt, name, float(np.float32(getattr(mw.opt, name))))
    d = mujoco.MjData(mw)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
    out = {"qpos": [], "qvel": []}
    for _ in range(STEPS):
        mujoco.mj_step(mw, d)
        for name in ("qpos", "qvel", "qacc_warmstart"):
            getattr(d, name)[:] = getattr(d, name).astype(np.float32)
        out["qpos"].append(d.qpos.copy())
        out["qvel"].append(d.qvel.copy())
    out = {k: np.array(v) for k, v in out.items()}
    out.update(xpos=d.xpos.copy(), ncon=d.ncon, contact_dist=np.array([c.dist for c in d.contact[: d.ncon]]))
    return out


def _native(nthread: int) -> dict:
    m = mujoco.MjModel.from_xml_string(XML)
    with wp.ScopedDevice("cpu"):
        mjw_model = mjw.put_model(m)
        mjw_data = mjw.put_data(m, mujoco.MjData(m), nworld=NWORLD, nconmax=16, njmax=64)
        # one damping row per world, as Newton expands randomised fields
        damping = np.tile(m.dof_damping, (NWORLD, 1))
        damping[:, 0] = DAMPING
        mjw_model.dof_damping = wp.array(damping, dtype=float)
    qpos, qvel = _initial_state(m)
    mjw_data.qpos.assign(qpos)
    mjw_data.qvel.assign(qvel)
    mjw_data.ctrl.assign(np.array(CTRL, np.float32)[:, None])
    batch = physics_native.NativeBatch(m, mjw_model, mjw_data, nthread=nthread)
    assert batch.nthread == nthread
    out = {"qpos": [], "qvel": []}
    for _ in range(STEPS):
        batch.step()
        out["qpos"].append(mjw_data.qpos.numpy().copy())
        out["qvel"].append(mjw_data.qvel.numpy().copy())
    out = {k: np.array(v).swapaxes(0, 1) for k, v in out.items()}  # (world, step, dof)
    nacon = int(mjw_data.nacon.numpy()[0])
    out.update(
        initial=(qpos, qvel),
        xpos=mjw_data.xpos.numpy(),
        ncon_world=batch.ncon_world.copy(),
        nacon=nacon,
        worldid=mjw_data.contact.worldid.numpy()[:nacon],
        dist=mjw_data.contact.dist.numpy()[:nacon],
        world_damping=[batch.world_model(w).dof_damping.copy() for w in range(NWORLD)],
    )
    return out


@pytest.fixture(scope="module")
def reference():
    m = mujoco.MjModel.from_xml_string(XML)
    qpos, qvel = _initial_state(m)
    return [_reference(m, qpos[w], qvel[w], CTRL[w], DAMPING[w]) for w in range(NWORLD)]


@pytest.mark.parametrize("nthread", [1, 2])  # 2 threads on 3 worlds: one thread's scratch MjData steps two worlds
def test_native_batch_matches_mj_step(reference, nthread):
    nat = _native(nthread)
    for w, ref in enumerate(reference):
        for key in ("qpos", "qvel"):
            err = np.abs(nat[key][w] - ref[key]).max()
            assert err < TOL, f"world {w}: {key} differs from mj_step by {err:.2e}"
        np.testing.assert_allclose(nat["xpos"][w], ref["xpos"], atol=TOL)
        # each world's contacts, packed in world order as MuJoCo-Warp does: the settled box has 4 corner contacts
        assert ref["ncon"] == 4 and nat["ncon_world"][w] == 4
        np.testing.assert_allclose(nat["dist"][nat["worldid"] == w], ref["contact_dist"], atol=TOL)
        assert nat["world_damping"][w][0] == np.float32(DAMPING[w])  # the row this world is stepped with
    assert nat["nacon"] == 4 * NWORLD and np.all(np.diff(nat["worldid"]) >= 0)


def test_reference_tells_the_worlds_apart(reference):
    """The comparison above can fail: each world's trajectory is far (>> TOL) from the others', and stepping a world
    with another world's damping (parameters swapped) gives a trajectory far from its own."""
    m = mujoco.MjModel.from_xml_string(XML)
    qpos, qvel = _initial_state(m)
    for a in range(NWORLD):
        for b in range(a + 1, NWORLD):
            assert np.abs(reference[a]["qpos"] - reference[b]["qpos"]).max() > 1000 * TOL
    swapped = _reference(m, qpos[0], qvel[0], CTRL[0], DAMPING[1])
    assert np.abs(swapped["qpos"][:, 0] - reference[0]["qpos"][:, 0]).max() > 1000 * TOL
