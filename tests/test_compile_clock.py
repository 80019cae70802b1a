"""The kernels' compile is announced and timed apart from the runs' loop (privenv._jit,
"Compile time, visibly"): the runs' time per step and a sweep's ETA leave it out."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from privenv import _jit
from privenv.results import RunResults
from privenv.simulation import simulate
from privenv.sweep import Cell
from privenv.sweep.run import _Progress, describe_result


def test_a_compile_is_announced_timed_and_reported(capsys):
    _jit.report_compile(1.0)  # (forget any earlier announcement)
    capsys.readouterr()
    before = _jit.kernel_seconds()
    add_one = numba.njit(lambda x: x + 1)  # a new function: compiled here
    assert add_one(1) == 2 and add_one(2) == 3
    compiled = _jit.kernel_seconds()[0] - before[0]
    assert compiled > 0
    assert capsys.readouterr().err.count("privenv: compiling kernels (first run only") == 1
    _jit.report_compile(compiled)
    assert f"kernels compiled in {compiled:.1f} s" in capsys.readouterr().err
    _jit.report_compile(compiled)  # said once
    assert capsys.readouterr().err == ""


def test_the_time_per_step_is_the_loop_alone():
    res = simulate("ucb1", "HuberBandit-v0", n_runs=2, horizon=200, seed=0)
    assert 0 <= res.compile_s <= res.wall_s and 0 < res.loop_s <= res.wall_s - res.compile_s
    assert res.ns_per_run_step == pytest.approx(1e9 * res.loop_s / res.steps.sum())
    assert res.summary()["compile_s"] == res.compile_s
    # a read-back (loop time unknown) falls back to the wall time
    back = RunResults(**{**res.__dict__, "loop_s": None})
    assert back.ns_per_run_step == pytest.approx(1e9 * res.wall_s / res.steps.sum())


def _cell_result(wall: float, compile_s: float) -> RunResults:
    res = simulate("ucb1", "HuberBandit-v0", n_runs=1, horizon=10, seed=0)
    return RunResults(**{**res.__dict__, "wall_s": wall, "compile_s": compile_s,
                         "loop_s": wall - compile_s})


def test_the_eta_leaves_the_compile_out():
    cell = Cell("HuberBandit-v0", {}, "ucb1", {}, 10, 0, 0, 1, 40)
    progress = _Progress("none", total=10, skipped=0)
    first = _cell_result(wall=31.0, compile_s=30.0)  # a first cell: mostly compile
    progress.update(cell, first)
    assert progress.eta(elapsed=31.0) == pytest.approx(9 * 1.0)  # not 9 × 31
    progress.update(cell, _cell_result(wall=1.0, compile_s=0.0))
    assert progress.eta(elapsed=32.0) == pytest.approx(8 * 1.0)
    assert "30.0 s of it compiling or loading kernels" in describe_result(cell, first)
    assert "compiling" not in describe_result(cell, _cell_result(wall=1.0, compile_s=0.0))
    assert np.isfinite(first.ns_per_run_step)
