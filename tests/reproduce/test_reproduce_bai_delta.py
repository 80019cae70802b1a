"""``privenv reproduce bai-delta`` (paper 3's δ → 0 rates) on a tiny configuration: points across
δ, each agent's lower bound, the rates and their paired intervals, the files."""

import csv
import math

import numpy as np
import pytest

from privenv.cli import main
from privenv.reproduce import FIGURES, bai_delta
from privenv.reproduce.bai_plan import lower_constants, plan, upper_constant

TINY = dict(instances=["mu3"], epsilons=[1.0], runs=6, deltas=[1e-2, 1e-5],
            agents=["ttucb", "ctb-tt", "adap-tt", "adap-tt-star", "dp-se"])


def _read(path):
    with path.open() as f:
        return list(csv.DictReader(f))


def test_registered_with_the_delta_grid_and_theory_thresholds():
    spec = bai_delta.DEFINITION
    assert FIGURES["bai-delta"] is bai_delta
    assert spec.full.deltas == (1e-2, 1e-4, 1e-6, 1e-8)
    assert spec.full.instances == ("mu1", "mu3") and spec.threshold == "theory"
    assert set(spec.agents) == {"ttucb", "ctb-tt", "adap-tt", "adap-tt-star", "dp-se"}
    pl = plan(spec, threshold="theory", **{k: v for k, v in TINY.items()})
    assert {p.delta for p in pl.points} == {1e-2, 1e-5}
    assert all(p.agent_kwargs.get("delta") == p.delta for p in pl.points)
    assert len(pl.points) == 5 * 2  # one ε, no threshold choice beyond theory


def test_each_agent_answers_to_its_own_lower_bound():
    """CTB-TT (a local-DP system) to Corollary 11, the global-DP agents to Theorem 17, TTUCB to
    T*_KL; each bound is T*·log(1/(2.4δ))."""
    spec = bai_delta.DEFINITION
    pts = {(p.agent, p.delta): p for p in plan(spec, threshold="theory", **TINY).points}
    assert bai_delta.is_local("ctb-tt") and not bai_delta.is_local("adap-tt")
    for (agent, delta), p in pts.items():
        model = "local" if agent == "ctb-tt" else "global"
        (_, constant), *_ = lower_constants(model, "mu3", p.epsilon)
        first = next(iter(spec.point_bounds(p).values()))
        assert first == pytest.approx(constant * math.log(1 / (2.4 * delta)), rel=1e-12)


def test_tiny_run_rates_files_and_monotone_stopping_times(tmp_path, capsys):
    out = tmp_path / "d"
    assert main(["reproduce", "bai-delta", "--instances", "mu3", "--epsilons", "1",
                 "--deltas", "1e-2,1e-5", "--runs", "6", "--workers", "1",
                 "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "marginal rate" in text and "AdaP-TT*/AdaP-TT on mu3, ε = 1" in text
    for name in ("points.csv", "runs.csv", "rates.csv", "metadata.json", "bai-delta.png"):
        assert (out / name).stat().st_size > 0, name
    runs = _read(out / "runs.csv")
    assert {r["delta"] for r in runs} == {"0.01", "1e-05"}
    tau = {}
    for r in runs:
        tau.setdefault((r["agent"], float(r["delta"])), []).append(int(r["stopping_time"]))
    # the sampling rules of TTUCB, AdaP-TT and AdaP-TT* do not read δ and every point shares the
    # seed: a smaller δ (a larger threshold) stops each run at the same time or later
    for agent in ("ttucb", "adap-tt", "adap-tt-star"):
        assert all(b >= a for a, b in zip(tau[(agent, 1e-2)], tau[(agent, 1e-5)], strict=True))
    rows = _read(out / "rates.csv")
    for agent in ("ttucb", "adap-tt", "adap-tt-star"):
        first, second = (r for r in rows if r["agent"] == agent)
        a, b = np.array(tau[(agent, 1e-2)]), np.array(tau[(agent, 1e-5)])
        logs = math.log(1e2), math.log(1e5)
        assert float(first["tau_over_log"]) == pytest.approx(a.mean() / logs[0])
        assert first["marginal_rate"] == ""  # no smaller δ before the first
        d = (b - a) / (logs[1] - logs[0])
        assert float(second["marginal_rate"]) == pytest.approx(d.mean())
        half = 1.959963984540054 * d.std(ddof=1) / math.sqrt(d.size)
        assert float(second["marginal_high"]) == pytest.approx(d.mean() + half)
        eps = None if agent == "ttucb" else 1.0
        assert float(first["rate_paper"]) == pytest.approx(upper_constant(agent, "mu3", eps)[1])
    assert next(r for r in rows if r["agent"] == "dp-se")["rate_paper"] == ""  # none stated


def test_bad_deltas_name_the_parameter(capsys):
    assert main(["reproduce", "bai-delta", "--deltas", "0.1,1", "--dry-run"]) == 2
    assert "deltas" in capsys.readouterr().err
    assert main(["reproduce", "bai-delta", "--deltas", "x", "--dry-run"]) == 2
    assert "deltas" in capsys.readouterr().err
