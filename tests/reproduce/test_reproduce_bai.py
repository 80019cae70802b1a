"""``privenv reproduce bai-local`` / ``bai-global`` (paper 3, stopping time vs ε) on tiny
configurations: points, lower bounds, cost estimate, budget handling, error bounds, files."""

import csv
import json
import math
import shlex

import numpy as np
import pytest

from privenv.cli import main
from privenv.plotting import (
    Baseline,
    StoppingSeries,
    StoppingTimePanel,
    save_figure,
    stopping_time_grid,
)
from privenv.reproduce import FIGURES, bai, bai_global, bai_local
from privenv.theory import bai as th

LOG = math.log(1.0 / (2.4 * 0.01))


def _read(path):
    with path.open() as f:
        return list(csv.DictReader(f))


def test_registered_with_appendix_i_grids():
    assert FIGURES["bai-local"] is bai_local and FIGURES["bai-global"] is bai_global
    assert bai.LOCAL.full.epsilons == (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9,
                                       1.0, 10.0, 100.0)
    assert bai.GLOBAL.full.epsilons == (0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6,
                                        0.7, 0.8, 0.9, 1.0, 10.0, 100.0, 1000.0)
    for spec in (bai.LOCAL, bai.GLOBAL):
        assert spec.full.instances == ("mu1", "mu2", "mu3", "mu4", "mu5", "mu6")
        assert spec.full.runs == 1000
    assert bai.DELTA == 0.01
    assert bai.LOCAL.agents == ("ttucb", "ctb-tt")
    assert bai.GLOBAL.agents == ("ttucb", "adap-tt", "adap-tt-star", "dp-se")


def test_points_non_private_once_per_instance_and_threshold():
    pts = bai.make_points(bai.GLOBAL, ["mu1", "mu4"], [1.0, 0.1], bai.GLOBAL.agents, "both")
    ttucb = [p for p in pts if p.agent == "ttucb"]
    assert sorted((p.instance, p.threshold, p.epsilon) for p in ttucb) == [
        ("mu1", "empirical", None), ("mu1", "theory", None),
        ("mu4", "empirical", None), ("mu4", "theory", None)]
    dpse = [p for p in pts if p.agent == "dp-se"]  # no threshold choice: one point per ε
    assert sorted((p.instance, p.threshold, p.epsilon) for p in dpse) == [
        ("mu1", None, 0.1), ("mu1", None, 1.0), ("mu4", None, 0.1), ("mu4", None, 1.0)]
    assert len(pts) == 2 * (2 + 2 * 2 * 2 + 2)
    p = next(p for p in pts if p.agent == "adap-tt-star" and p.threshold == "empirical")
    assert p.agent_kwargs == {"epsilon": p.epsilon, "delta": 0.01, "threshold": "empirical"}
    assert p.env_kwargs["instance"] == p.instance
    assert next(p for p in pts if p.agent == "ttucb").agent_kwargs["delta"] == 0.01
    one = bai.make_points(bai.LOCAL, ["mu2"], [0.5], bai.LOCAL.agents, "theory")
    assert [(p.agent, p.threshold, p.epsilon) for p in one] == [
        ("ttucb", "theory", None), ("ctb-tt", "theory", 0.5)]


@pytest.mark.parametrize("kwargs, match", [
    ({"instances": ["mu7"]}, "instances"),
    ({"epsilons": [0.0]}, "epsilons"),
    ({"epsilons": []}, "epsilons"),
    ({"agents": ["nope"]}, "unknown agent"),
    ({"threshold": "tight"}, "threshold"),
    ({"runs": 0}, "runs"),
    ({"horizon": 1}, "horizon"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bai.plan(bai.LOCAL, quick=True, **kwargs)


def test_lower_bounds_and_switches_are_paper_3_theory():
    mu = (0.95, 0.9, 0.9, 0.9, 0.5)
    (name, v), = bai.LOCAL.lower_bounds("mu1", 0.5).items()
    assert "Cor. 11" in name
    assert v == pytest.approx(th.local_dp_lower_bound(mu, 0.5) * LOG, rel=1e-12)
    g = bai.GLOBAL.lower_bounds("mu1", 0.05)
    exact, relaxed = g.values()
    assert exact == pytest.approx(th.global_dp_lower_bound(mu, 0.05) * LOG, rel=1e-12)
    assert relaxed == pytest.approx(th.global_dp_lower_bound_relaxed(mu, 0.05) * LOG, rel=1e-12)
    assert exact >= relaxed * (1 - 1e-9)
    (_, np_bound), = bai.GLOBAL.lower_bounds("mu1", None).items()
    assert np_bound == pytest.approx(th.characteristic_time_kl(mu) * LOG, rel=1e-12)
    assert bai.LOCAL.switch("mu1") == pytest.approx(th.local_regime_switch_epsilon(mu))
    assert bai.GLOBAL.switch("mu1") == pytest.approx(th.global_regime_switch_epsilon(mu))


def test_cost_estimate_grows_as_epsilon_shrinks_and_stops_at_the_budget():
    pl = bai.plan(bai.LOCAL, instances=["mu1"], epsilons=[0.01, 0.1, 1.0], agents=["ctb-tt"],
                  threshold="theory", runs=1000, horizon=10**8)
    steps = {p.epsilon: bai.estimated_steps(bai.LOCAL, p, pl.horizon) for p in pl.points}
    assert steps[1.0] < steps[0.1] < steps[0.01] == 10**8  # local bound ≈ 1e8 at ε = 0.01
    assert pl.chunk == 500  # two cells per point from 200 runs on
    assert bai.default_chunk(100) == 100
    cfg = pl.sweep_config()  # the most expensive point first
    assert cfg.configurations[0].agent_kwargs["epsilon"] == 0.01
    assert "reaches the budget" in pl.describe_cost(2)
    assert pl.total_seconds == pytest.approx(sum(pl.estimates.values()))
    # a run costs its own pulls (the compiled fast path): the estimate does not depend on the
    # split into cells, and is runs × pulls × the agent's measured cost per pull
    halves = bai.plan(bai.LOCAL, instances=["mu1"], epsilons=[0.1], agents=["ctb-tt"],
                      threshold="theory", runs=1000, horizon=10**8, chunk=100)
    point, = halves.points
    assert halves.estimates[point] == pytest.approx(
        1000 * steps[0.1] * bai.PULL_SECONDS["ctb-tt"], rel=1e-12)
    assert halves.estimates[point] == pytest.approx(pl.estimates[point], rel=1e-12)


def _result(errors, runs=1000, non_stopping=0):
    point = bai.Point("mu1", "ttucb", None, "theory")
    rec = np.zeros(runs, dtype=np.int64)
    correct = np.ones(runs, dtype=bool)
    correct[:errors] = False
    rec[:errors] = 1
    rec[errors:errors + non_stopping] = -1
    correct[errors:errors + non_stopping] = False
    st = np.full(runs, 100, dtype=np.int64)
    st[errors:errors + non_stopping] = 10**4
    return bai.PointResult(point, st, rec, correct, {}, {"privacy": "none"}, {}, 0.0, 10**4,
                           {"b": 50.0}, 1.0, 0.0)


def test_error_bounds_clopper_pearson_one_sided_95():
    r = _result(0)  # 0/1000: upper bound 1 − 0.05^(1/1000) ≈ 0.0030 ≤ δ: shown
    lo, hi = r.error_bounds()
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 1000), rel=1e-9)
    row = r.row(bai.LOCAL)
    assert row["error_le_delta_shown"] and row["error_le_delta_consistent"]
    row = _result(12).row(bai.LOCAL)  # 1.2 %: consistent with ≤ 1 %, not shown
    assert not row["error_le_delta_shown"] and row["error_le_delta_consistent"]
    row = _result(30).row(bai.LOCAL)  # 3 %: P(Bin(1000, 0.01) ≥ 30) ≈ 1e-7, rejected
    assert not row["error_le_delta_consistent"]


def test_runs_to_show_is_where_no_error_first_shows_error_le_delta():
    from privenv.reproduce.bai_results import runs_to_show

    n = runs_to_show(0.01)
    assert n == 299  # 1 − 0.05^(1/299) ≈ 0.00997 ≤ 0.01 < 1 − 0.05^(1/298)
    assert _result(0, runs=n).error_verdict() == (True, True)
    assert _result(0, runs=n - 1).error_verdict() == (False, True)


def test_non_stopping_runs_are_counted_not_errors_and_enter_the_mean_at_the_budget():
    r = _result(2, runs=10, non_stopping=3)
    assert (r.errors, r.non_stopping, r.runs) == (2, 3, 10)
    assert r.tau_mean == pytest.approx((7 * 100 + 3 * 10**4) / 10)


def test_stopping_time_grid_png_pdf(tmp_path):
    eps = np.array([0.1, 1.0, 10.0])
    panel = StoppingTimePanel(
        "mu1", [StoppingSeries("a", eps, np.array([1e5, 1e3, 1e3]), np.array([2e5, 1e2, 1e2]),
                               np.array([True, False, False]))],
        [Baseline("ref (non-private)", 900.0, 50.0)],
        [bai_reference(eps)], [("regime switch", 0.9)])
    fig = stopping_time_grid([panel, panel], ncols=2, suptitle="t", footnote="n")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = ax.get_legend_handles_labels()[1]
    assert "a" in labels and "ref (non-private)" in labels and "regime switch" in labels
    png, pdf = save_figure(fig, tmp_path / "s")
    assert png.read_bytes().startswith(b"\x89PNG") and pdf.read_bytes().startswith(b"%PDF")
    with pytest.raises(ValueError, match="panels"):
        stopping_time_grid([])


def bai_reference(eps):
    from privenv.plotting import Reference

    return Reference("bound", eps, 500.0 / eps)


# -- end to end (tiny: μ3, large ε, a few runs; a few seconds) ------------------------------------


def test_tiny_local_reproduction_files_table_and_bounds(tmp_path, capsys):
    out = tmp_path / "local"
    argv = ["reproduce", "bai-local", "--instances", "mu3", "--epsilons", "10", "--runs", "4",
            "--threshold", "empirical", "--output", str(out), "--workers", "2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "estimated cost" in text and "τ mean ± sd" in text and "ctb-tt [empirical]" in text
    for name in ("results.sqlite", "points.csv", "runs.csv", "metadata.json", "bai-local.png",
                 "bai-local.pdf"):
        assert (out / name).stat().st_size > 0, name
    rows = {r["label"]: r for r in _read(out / "points.csv")}
    assert set(rows) == {"ttucb [empirical]", "ctb-tt [empirical]"}
    ctb = rows["ctb-tt [empirical]"]
    assert float(ctb["epsilon"]) == 10.0 and int(ctb["runs"]) == 4
    assert float(ctb["lower_bound"]) == pytest.approx(
        th.local_dp_lower_bound((0.0, 0.25, 0.5, 0.75, 1.0), 10.0) * LOG, rel=1e-9)
    assert "local" in ctb["privacy"].lower()
    # CTB-TT's price of privacy against TTUCB, beside the paper's factor (§3.2)
    assert float(ctb["tau_over_ttucb"]) == pytest.approx(
        float(ctb["tau_mean"]) / float(rows["ttucb [empirical]"]["tau_mean"]))
    assert float(ctb["ctb_factor"]) == pytest.approx((1 + 2 / math.expm1(10.0)) ** 2)
    assert float(ctb["upper_bound_asymptotic"]) == pytest.approx(
        float(ctb["ctb_factor"]) * float(rows["ttucb [empirical]"]["upper_bound_asymptotic"]))
    runs = _read(out / "runs.csv")
    assert len(runs) == 8
    tau = [int(r["stopping_time"]) for r in runs if r["agent"] == "ctb-tt"]
    assert float(ctb["tau_mean"]) == pytest.approx(np.mean(tau))
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["figure"] == "bai-local" and meta["delta"] == 0.01 and len(meta["points"]) == 2
    # the recorded command reproduces the point with `privenv run`
    command = next(p["command"] for p in meta["points"] if p["agent"] == "ctb-tt")
    assert command.startswith("privenv run --env BestArmIdentification-v0")
    capsys.readouterr()
    assert main([*shlex.split(command)[1:], "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stopping_time_mean"] == pytest.approx(float(ctb["tau_mean"]), rel=1e-12)


def test_budget_reached_is_reported_as_non_stopping(tmp_path, capsys):
    out = tmp_path / "budget"
    argv = ["reproduce", "bai-global", "--instances", "mu1", "--epsilons", "1", "--runs", "3",
            "--agents", "ttucb,dp-se", "--horizon", "40", "--output", str(out), "--workers", "1"]
    assert main(argv) == 0
    rows = _read(out / "points.csv")
    assert {r["label"] for r in rows} == {"ttucb [theory]", "ttucb [empirical]", "dp-se"}
    for r in rows:  # μ1 needs ≥ 10⁴ pulls: nobody stops within 40
        assert int(r["non_stopping"]) == 3 and int(r["errors"]) == 0
        assert float(r["tau_mean"]) == 40.0 and int(r["budget"]) == 40
    assert "non-stop" in capsys.readouterr().out


def test_tiny_global_reproduction_all_agents(tmp_path, capsys):
    out = tmp_path / "global"
    argv = ["reproduce", "bai-global", "--instances", "mu3", "--epsilons", "10", "--runs", "2",
            "--threshold", "theory", "--output", str(out), "--workers", "2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "every mean τ above its lower bound" in printed
    # 2 runs are consistent with error ≤ δ but cannot show it: with no error that takes 299 runs
    assert ("error ≤ δ shown (upper bound ≤ δ) at 0 of 4 points (with no wrong recommendation "
            "that takes ≥ 299 runs per point)") in printed
    rows = {r["label"]: r for r in _read(out / "points.csv")}
    assert set(rows) == {"ttucb [theory]", "adap-tt [theory]", "adap-tt-star [theory]", "dp-se"}
    mu3 = (0.0, 0.25, 0.5, 0.75, 1.0)
    for r in rows.values():
        assert int(r["non_stopping"]) == 0 and int(r["runs"]) == 2
        if r["agent"] != "ttucb":
            assert float(r["lower_bound"]) == pytest.approx(
                th.global_dp_lower_bound(mu3, 10.0) * LOG, rel=1e-9)
            assert float(r["lower_bound_relaxed"]) == pytest.approx(
                th.global_dp_lower_bound_relaxed(mu3, 10.0) * LOG, rel=1e-9)
            assert "central" in r["privacy"].lower() or "global" in r["privacy"].lower()
    # the asymptotic upper bounds of Theorems 22 and 24, × log(1/δ)
    L = math.log(100.0)
    assert float(rows["adap-tt [theory]"]["upper_bound_asymptotic"]) == pytest.approx(
        th.adap_tt_upper_bound(mu3, 10.0) * L)
    assert rows["adap-tt-star [theory]"]["upper_bound_source"] == "Theorem 24"
    assert rows["dp-se"]["upper_bound_asymptotic"] == ""
    assert (out / "bai-global.png").read_bytes().startswith(b"\x89PNG")


def test_results_do_not_depend_on_workers_or_chunks(tmp_path):
    common = ["reproduce", "bai-local", "--instances", "mu3", "--epsilons", "10", "--runs", "4",
              "--threshold", "theory"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([*common, "--output", str(a), "--workers", "2", "--chunk", "3"]) == 0
    assert main([*common, "--output", str(b), "--workers", "1"]) == 0
    assert (a / "runs.csv").read_bytes() == (b / "runs.csv").read_bytes()


def test_resuming_with_more_runs_keeps_the_stores_cells(tmp_path, capsys):
    """A resumed reproduction keeps the store's runs per cell by default, so that a larger
    ``--runs`` extends the store: the first runs are not run again, and the runs are those of a
    fresh reproduction at the larger count."""
    common = ["reproduce", "bai-local", "--instances", "mu3", "--epsilons", "10",
              "--threshold", "theory", "--workers", "1"]
    grown, fresh = tmp_path / "grown", tmp_path / "fresh"
    assert main([*common, "--runs", "2", "--chunk", "1", "--output", str(grown)]) == 0
    assert main([*common, "--runs", "3", "--output", str(grown), "--dry-run", "--resume"]) == 0
    assert "cells of ≤ 1 runs" in capsys.readouterr().out
    assert main([*common, "--runs", "3", "--output", str(grown), "--resume"]) == 0
    said = capsys.readouterr()
    assert "4 cells already done, 2 to run" in said.out + said.err
    assert main([*common, "--runs", "3", "--output", str(fresh)]) == 0
    assert (grown / "runs.csv").read_bytes() == (fresh / "runs.csv").read_bytes()
    # without --resume the default chunk applies, and the store is started afresh
    assert main([*common, "--runs", "3", "--output", str(grown)]) == 0
    assert "cells of ≤ 3 runs" in capsys.readouterr().out
