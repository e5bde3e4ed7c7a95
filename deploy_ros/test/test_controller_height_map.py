"""The ROS-free controller serving a perceptive legged policy: the ground heights perception samples at the policy's
scan points are an input only the policy reads. Standing needs none; enabling, and every RUNNING tick, needs fresh,
finite ones of the policy's size, else enable is refused or the robot damps."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_policy import SCAN_POINTS, perceptive_metadata
from test_controller import DEFAULT, DT, feed, make, run, to_standing_done

from sim2real_deploy.controller import Mode
from sim2real_deploy.policy_file import PolicyFileError, validate_metadata

STAIRS = np.array([0.0, -0.1, -0.2] * 3) - 0.32  # ground steps down ahead; the base 0.32 m above the near step


def running(ctrl) -> float:
    t = to_standing_done(ctrl)  # standing reads no ground heights
    ok, msg = ctrl.enable(t)
    assert not ok and "no ground_heights yet" in msg
    ctrl.set_ground_heights(STAIRS, t)
    assert ctrl.enable(t)[0] and ctrl.mode == Mode.RUNNING
    return t


def test_the_policy_reads_base_height_above_the_ground_less_the_offset_clipped():
    seen = []
    ctrl = make(policy=lambda obs: (seen.append(obs), np.zeros(12, np.float32))[1], meta=perceptive_metadata())
    assert ctrl.meta.scan_points.shape == (9, 2)
    t = running(ctrl)
    for _ in range(3):
        ctrl.set_ground_heights(STAIRS, t)
        t, _ = run(ctrl, t, 1, q=DEFAULT)
    assert ctrl.mode == Mode.RUNNING and seen[-1].shape == (45 + 9,)
    np.testing.assert_allclose(seen[-1][45:], np.clip(-STAIRS - 0.5, -1, 1), atol=1e-6)  # 0.32 .. 0.52 above - 0.5
    ctrl.set_ground_heights(np.full(9, -2.0), t)  # a hole: clipped as in training
    run(ctrl, t, 1, q=DEFAULT)
    np.testing.assert_allclose(seen[-1][45:], 1.0)


@pytest.mark.parametrize("bad", ["stale", "nan", "size"])
def test_lost_or_bad_ground_heights_damp_the_robot(bad):
    ctrl = make(meta=perceptive_metadata())
    t = running(ctrl)
    t, _ = run(ctrl, t, 3, q=DEFAULT)
    if bad != "stale":
        ctrl.set_ground_heights([np.nan] * 9 if bad == "nan" else STAIRS[:8], t)
    last = ctrl.perceived["ground_heights"].time
    while ctrl.mode == Mode.RUNNING and t < last + 1.0:
        t, out = run(ctrl, t, 1, q=DEFAULT)
    assert ctrl.mode == Mode.DAMPING and "ground_heights" in ctrl.reason
    expected = {"stale": "stale", "nan": "NaN", "size": "8 values"}[bad]
    assert expected in ctrl.reason, ctrl.reason
    late = t - DT - last
    timeout = ctrl.config.height_map_timeout
    assert late == pytest.approx(0.0) if bad != "stale" else timeout - 1e-9 <= late <= timeout + DT  # not a tick early
    assert np.all((out[-1] >= ctrl.pos_lo) & (out[-1] <= ctrl.pos_hi))


def test_a_bad_height_map_before_running_is_no_fault_and_a_blind_policy_ignores_one():
    ctrl = make(meta=perceptive_metadata())
    feed(ctrl, 0.0)
    ctrl.set_ground_heights([np.nan] * 9, 0.0)  # perception not ready yet: nothing reads it
    run(ctrl, 0.0, 5)
    assert ctrl.mode == Mode.STANDING
    blind = make()
    assert not blind.perceived
    blind.set_ground_heights([np.nan] * 3, 0.0)
    blind.enable(to_standing_done(blind))
    assert blind.mode == Mode.RUNNING


def test_scan_points_must_be_xy_pairs_of_the_terms_size():
    meta = perceptive_metadata()
    meta["observations"][-1]["points"] = SCAN_POINTS[:8]
    with pytest.raises(PolicyFileError, match="height_scan.*size 9, expected 8"):
        validate_metadata(meta)
    meta["observations"][-1]["points"] = [[0.0, 0.0, 0.0]] * 9
    with pytest.raises(PolicyFileError, match="finite \\(x, y\\) pairs"):
        validate_metadata(meta)
