"""``privenv reproduce dp-mab-regret``, ``ldp-mab-regret`` and ``dp-bai-optimal`` (the zoo's three
comparisons, issue 32): registration and the issue's full scale, the quick forms end to end with
their files and claims, the claims' tests on constructed numbers (orderings from paired runs,
ratios, rates in ε), a point equal to its ``privenv run`` command, bad input. Deterministic
(fixed seeds)."""

import csv
import json
import math
import shlex

import numpy as np
import pytest

from privenv.cli import main
from privenv.reproduce import FIGURES, dp_bai_optimal, zoo_regret
from privenv.reproduce.zoo_claims import (
    VERDICTS,
    Z_PAIRED,
    compare,
    order_verdict,
    rate_verdict,
    ratio_verdict,
)
from privenv.theory.regret import azize_2025, ldp_lower_bound


def _read(path):
    with path.open() as f:
        return list(csv.DictReader(f))


def test_registered_at_the_issues_scale():
    for spec in zoo_regret.FIGURES.values():
        f = FIGURES[spec.id]
        assert f.DEFINITION is spec and f.impl is zoo_regret
        assert spec.full.runs >= 100 and spec.full.horizon >= 10**6
        assert min(spec.full.epsilons) == 0.01 and max(spec.full.epsilons) == 10.0
    assert FIGURES["dp-bai-optimal"] is dp_bai_optimal
    d = dp_bai_optimal.DEFINITION
    assert d.full.instances == ("mu1", "mu2", "mu3", "mu4", "mu5", "mu6")
    assert d.full.runs >= 100 and d.full.epsilons == zoo_regret.EPSILONS
    assert "adap-tt" in d.agents and d.threshold == "theory"
    assert set(zoo_regret.DP_MAB_REGRET.agents) == {
        "dp-ucb", "dp-ucb-hybrid", "dp-se", "adap-ucb", "adap-klucb", "dp-klucb", "dp-imed",
        "lazy-dp-ts"}
    assert set(zoo_regret.LDP_MAB_REGRET.agents) == {"ldp-ucb-l", "ldp-ucb-b", "ldp-se"}


@pytest.mark.slow  # loading every agent's kernels: 6–30 s on the shared 2-core machine, warm cache
@pytest.mark.parametrize("spec", list(zoo_regret.FIGURES.values()), ids=list(zoo_regret.FIGURES))
def test_quick_regret_form_writes_its_files_and_verdicts(spec, tmp_path, capsys):
    out = tmp_path / spec.id
    assert main(["reproduce", spec.id, "--quick", "--output", str(out), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    for name in ("points.csv", "runs.csv", "claims.csv", "metadata.json", "results.sqlite",
                 f"{spec.id}.png", f"{spec.id}.pdf"):
        assert (out / name).stat().st_size > 0, name
    q = spec.quick
    points = _read(out / "points.csv")
    assert len(points) == len(q.instances) * (len(spec.references)
                                              + len(spec.agents) * len(q.epsilons))
    claims = _read(out / "claims.csv")
    assert [c["id"] for c in claims] == [c.id for c in spec.claims]
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert "the papers' claims:" in text
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["horizon"] == q.horizon and meta["runs"] == q.runs
    for row in points:  # the main bound at T and the ratio column
        if row["epsilon"]:
            mu = np.array([0.75, 0.625, 0.5, 0.375, 0.25])  # mu4
            eps = float(row["epsilon"])
            bound = (azize_2025 if spec.model == "global" else ldp_lower_bound)(
                mu, q.horizon, eps)
            assert float(row[f"bound_{spec.bounds[0]}"]) == pytest.approx(bound)
            assert float(row["regret_over_bound"]) == pytest.approx(
                float(row["regret_mean"]) / bound)
            assert row["privacy"].startswith(f"{eps:g}-DP, "
                                             f"{'central' if spec.model == 'global' else 'local'}")


def test_a_small_form_on_the_command_line(tmp_path, capsys):
    """The quick form restricted to two agents (fast): files, the bound column, the claim."""
    out = tmp_path / "l"
    assert main(["reproduce", "ldp-mab-regret", "--quick", "--agents", "ucb1,ldp-ucb-b",
                 "--output", str(out), "--workers", "1"]) == 0
    assert "L.1 [" in capsys.readouterr().out
    points = _read(out / "points.csv")
    assert [(p["agent"], p["epsilon"]) for p in points] == [
        ("ucb1", ""), ("ldp-ucb-b", "1.0"), ("ldp-ucb-b", "10.0")]
    (claim,) = _read(out / "claims.csv")
    assert claim["id"] == "L.1" and claim["verdict"] in VERDICTS
    assert "ldp-ucb-b:" in claim["measured"] and len(_read(out / "runs.csv")) == 3 * 10


def test_a_zero_lower_bound_gives_an_infinite_ratio_not_a_crash(tmp_path, capsys):
    """mu3's best arm has mean 1, so Lai–Robbins' bound, UCB1's main one, is 0 (kl(μ_a, 1) = ∞).
    The full-scale ldp-mab-regret ran every point and then failed on it (ZeroDivisionError) before
    writing its files."""
    out = tmp_path / "m"
    assert main(["reproduce", "ldp-mab-regret", "--instances", "mu3", "--agents", "ucb1,ldp-ucb-b",
                 "--epsilons", "1", "--horizon", "1000", "--runs", "3", "--output", str(out),
                 "--workers", "1"]) == 0
    rows = {p["agent"]: p for p in _read(out / "points.csv")}
    assert float(rows["ucb1"]["bound_lai-robbins"]) == 0.0
    assert rows["ucb1"]["regret_over_bound"] == "inf"
    assert 0 < float(rows["ldp-ucb-b"]["regret_over_bound"]) < math.inf
    assert zoo_regret.ratio(0.0, 0.0) != zoo_regret.ratio(0.0, 0.0)  # nan: no regret, no bound


@pytest.mark.slow  # about 20 s: AdaP-TT's and DP-SE's kernels, four points of 20 runs
def test_quick_bai_form_writes_the_ratio_to_the_bound(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["reproduce", "dp-bai-optimal", "--quick", "--output", str(out),
                 "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "E[τ]/(T*·log(1/δ))" in text and "O.1" in text and "O.2" in text
    rows = _read(out / "ratios.csv")
    d = dp_bai_optimal.DEFINITION
    assert len(rows) == len(d.agents) * len(d.quick.epsilons)
    for row in rows:
        t = dp_bai_optimal.characteristic_times(row["instance"], float(row["epsilon"]))
        assert float(row["T*_g"]) == pytest.approx(t["T*_g"])
        assert float(row["tau_over_Tg_log"]) == pytest.approx(
            float(row["tau_mean"]) / (t["T*_g"] * math.log(100.0)))
    claims = {c["id"]: c for c in _read(out / "claims.csv")}
    if dp_bai_optimal.OPTIMAL_AGENT not in d.agents:
        assert claims["O.1"]["verdict"] == claims["O.2"]["verdict"] == "untested"
    assert all(c["verdict"] in VERDICTS for c in claims.values())


def test_a_point_equals_its_privenv_run_command_and_absent_agents_leave_claims_untested(
        tmp_path, capsys):
    rep = zoo_regret.reproduce(zoo_regret.DP_MAB_REGRET, tmp_path, instances=("mu4",), runs=3,
                               horizon=2000, epsilons=(0.5,), agents=("dp-klucb",), workers=1,
                               progress=False, figure=False)
    meta = json.loads((tmp_path / "metadata.json").read_text())
    (point,) = meta["points"]
    assert main([*shlex.split(point["command"])[1:], "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(rep.results[0].mean, rel=1e-12)
    verdicts = {v.id: v.verdict for v in rep.verdicts}
    # orderings need two agents, DP-SE's rate needs DP-SE: untested; the ratio of D.3 is measured
    assert verdicts["D.1"] == verdicts["D.2"] == verdicts["D.6"] == "untested"
    ratio = rep.results[0].mean / azize_2025([0.75, 0.625, 0.5, 0.375, 0.25], 2000, 0.5)
    assert verdicts["D.3"] == ("reproduced" if ratio <= 1.1 else "not reproduced")


# -- the claims' tests on constructed numbers ---------------------------------------------------


def test_an_ordering_is_a_paired_difference_beyond_two_standard_errors():
    rng = np.random.default_rng(0)
    base = rng.normal(100.0, 30.0, 50)  # the shared part of paired runs
    noise = rng.normal(0.0, 1.0, 50)
    c = compare("x", "a", "b", base, base + 5.0 + noise)
    d = 5.0 + noise
    assert c.mean == pytest.approx(d.mean()) and c.se == pytest.approx(
        d.std(ddof=1) / math.sqrt(50))
    assert c.outcome == "as claimed"
    assert compare("x", "a", "b", base + 5.0 + noise, base).outcome == "reversed"
    tie = compare("x", "a", "b", base, base + noise)
    assert tie.outcome == ("not resolved" if abs(tie.mean) <= Z_PAIRED * tie.se else tie.outcome)
    assert order_verdict([c, c])[0] == "reproduced"
    assert order_verdict([c, tie])[0] in ("partly reproduced", "reproduced", "not reproduced")
    assert order_verdict([c, compare("y", "a", "b", base + 9.0, base)])[0] == "not reproduced"
    assert order_verdict([])[0] == "untested"
    with pytest.raises(ValueError, match="paired"):
        compare("x", "a", "b", base, base[:3])


def test_ratio_and_rate_verdicts():
    assert ratio_verdict({"p": 1.0, "q": 7.9}, 8.0, "r")[0] == "reproduced"
    assert ratio_verdict({"p": 1.0, "q": 9.0}, 8.0, "r")[0] == "partly reproduced"
    assert ratio_verdict({"p": 9.0}, 8.0, "r")[0] == "not reproduced"
    assert ratio_verdict({}, 8.0, "r")[0] == "untested"
    # the bound's rate: a ratio constant over ε holds; one that moves by ε_max/ε_min (a power of
    # ε off) does not
    assert rate_verdict({"mu4": {0.1: 2.0, 1.0: 3.0, 10.0: 2.5}})[0] == "reproduced"
    assert rate_verdict({"mu4": {0.1: 100.0, 10.0: 1.0}})[0] == "not reproduced"
    assert rate_verdict({"mu4": {0.1: 2.0, 1.0: 2.0}, "mu5": {0.1: 1e3, 1.0: 1.0}})[0] == (
        "partly reproduced")
    assert rate_verdict({"mu4": {1.0: 2.0}})[0] == "untested"


@pytest.mark.parametrize("figure, args, message", [
    ("dp-mab-regret", ["--epsilons", "0,1"], "epsilons"),
    ("dp-mab-regret", ["--instances", "mu9"], "instances"),
    ("ldp-mab-regret", ["--agents", "dp-se"], "agents"),
    ("ldp-mab-regret", ["--runs", "1"], "runs"),
    ("dp-mab-regret", ["--horizon", "1"], "horizon"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, figure, args, message):
    assert main(["reproduce", figure, "--quick", "--output", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
