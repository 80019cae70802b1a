"""``privenv reproduce fed-communication`` (paper 2): the quick form end to end — a fixed schedule
syncs exactly ⌊T/B⌋ times (exponent 0 in M, 1 in T), floats per silo are syncs·(d(d+1)/2 + d)
except for the vector-sum protocol, whose silos send one-bit messages only — and the super agent
in ``fed-scaling``'s cells and exponent fit. Deterministic (fixed seeds)."""

import json

import numpy as np
import pytest

from privenv.cli import main
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.reproduce import FIGURES, fed
from privenv.reproduce import fed_communication as fig
from privenv.reproduce.cells import FigureResult
from privenv.results import RunResults


def test_quick_form(tmp_path, capsys):
    assert FIGURES[fig.ID] is fig
    out = tmp_path / "fc"
    assert main(["reproduce", fig.ID, "--quick", "--output", str(out), "--workers", "2"]) == 0
    text = capsys.readouterr().out
    for name in ("runs.csv", "summary.csv", "exponents.csv", "metadata.json", "results.sqlite",
                 f"{fig.ID}.png", f"{fig.ID}.pdf"):
        assert (out / name).stat().st_size > 0, name
    meta = json.loads((out / "metadata.json").read_text())
    q = fig.QUICK
    assert len(meta["cells"]) == len(fig.VARIANTS) * (len(q.M) + len(q.T) - 1)  # one shared
    for c in meta["cells"]:
        comm, T = c["communication"], c["horizon"]
        if c["agent"] == "fed-linucb":
            assert comm["sync_rounds"] == T // fed.BATCH
        if c["variant"] == "sdp-vector-sum":
            assert comm["floats_sent_per_silo"] == 0 and comm["bits_sent_per_silo"] > 0
        else:
            assert comm["floats_sent_per_silo"] == comm["sync_rounds"] * (10 * 11 // 2 + 10)
            assert comm["bits_sent_per_silo"] == 0
        if c["variant"].startswith("adaptive"):
            assert c["privacy_model"] == "none"  # its sync times leak (fed-leak)
    for e in meta["exponents"]:
        if e["variant"] in ("none", "ldp", "sdp-vector-sum"):
            assert e["fit"]["slope"] == pytest.approx(0.0 if e["axis"] == "M" else 1.0,
                                                      abs=0.02)
    assert "sync rounds of adaptive sync (non-private) ∝ T^b" in text


def test_scaling_keeps_the_super_agents_reference():
    cells = fed.make_cells(fed.SCALING, fed.SCALING.quick, protocols=["super-central"])
    per_panel = {c.protocol for c in cells if c.panel.key == "M5"}
    assert per_panel == {"none", "super-none", "super-central"}
    sup = next(c for c in cells if c.protocol == "super-central")
    assert sup.agent == "super-agent" and "batch" not in sup.agent_kwargs
    assert sup.agent_kwargs["protocol"] == "central" and sup.command().count("super-agent") == 1


def test_super_agent_cost_is_measured_against_its_own_learner():
    """Costs c·M^0.5 between super-central and super-none (fed-linucb's "none" is far lower here,
    so using it would give another exponent): the fit returns 0.5 ± noise, theory 0.5."""
    rng = np.random.default_rng(1)
    Ms, runs = (5, 10, 20, 40), 30
    results = []
    for m in Ms:
        panel = fed.Panel(f"M{m}", f"M = {m}", {"M": m}, 1.0, 1e-4,
                          ("none", "super-none", "super-central"))
        base = rng.normal(100.0, 1.0, runs)
        for p, value in (("none", base - 90.0), ("super-none", base),
                         ("super-central", base + 40.0 * m**0.5 * rng.normal(1, .05, runs))):
            cell = fed.Cell(panel, p, runs, 10, 0, {"M": m})
            stored = RunResults("FederatedLinearBandit-v0", cell.agent, PrivacyGuarantee.none(),
                                10, 0, np.arange(runs), {"M": m}, {}, np.array([5, 10]),
                                np.stack([value / 2, value], 1), np.full(runs, 10))
            results.append(FigureResult(cell, stored))
    (e,) = fed.privacy_cost_exponents(results)
    assert e.protocol == "super-central" and e.theory == 0.5
    assert e.fit.low < 0.5 < e.fit.high


def test_bad_variant_exits_2(tmp_path, capsys):
    assert main(["reproduce", fig.ID, "--output", str(tmp_path), "--variants", "gossip"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "variants" in err[0]
