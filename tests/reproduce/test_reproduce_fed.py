"""``privenv reproduce fed-synthetic | fed-realdata | fed-scaling`` (paper 2): the panels match the
paper's setup, a tiny run end to end writes every file, a cell equals its ``privenv run`` command,
and the exponent fit recovers a known exponent."""

import json
import shlex

import numpy as np
import pytest

from privenv.cli import main
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.reproduce import FIGURES, fed
from privenv.reproduce.cells import FigureResult
from privenv.results import RunResults

TINY = ["--runs", "2", "--horizon", "100", "--workers", "2"]
TINY_ENV = {"M": 3, "K": 4}


def test_registered_with_paper_2_setup():
    for spec in (fed.SYNTHETIC, fed.REALDATA, fed.SCALING):
        fig = FIGURES[spec.id]
        assert fig.DEFINITION is spec and fig.ID == spec.id and fig.impl is fed
    s = fed.SYNTHETIC
    assert (s.full.runs, s.full.horizon, fed.BATCH) == (25, 10_000, 25)
    assert [(p.epsilon, p.delta) for p in s.panels] == [(1e-4, 1e-4), (1e-3, 1e-4), (0.2, 0.1),
                                                        (1.0, 1e-4)]
    assert s.panels[0].protocols == ("none", "ldp", "sdp-amplification")
    assert s.panels[2].protocols == ("none", "ldp", "sdp-vector-sum")
    assert all(p.env_kwargs == {} for p in s.panels)  # the env's default: paper 2's M = K = 100
    assert [p.epsilon for p in fed.REALDATA.panels] == [0.2, 1.0, 5.0]
    assert all(p.env_kwargs["M"] == 10 and p.env_kwargs["contexts"] == "dataset"
               for p in fed.REALDATA.panels)
    assert [p.env_kwargs["M"] for p in fed.SCALING.panels] == list(fed.SCALING_M)


def test_non_private_cell_is_shared_by_panels_of_one_instance():
    cells = fed.make_cells(fed.SYNTHETIC, fed.Scale(2, 100, TINY_ENV))
    config = fed.sweep_config(fed.SYNTHETIC, cells)
    assert len(cells) == 12 and len(config.configurations) == 9  # one "none" for all panels
    with pytest.raises(ValueError, match="protocols"):
        fed.make_cells(fed.SYNTHETIC, fed.Scale(2, 100), protocols=["sdp"])


@pytest.mark.parametrize("figure_id", ["fed-synthetic", "fed-scaling"])
def test_tiny_reproduction_writes_every_file(tmp_path, capsys, figure_id):
    spec = fed.FIGURES[figure_id]
    out = tmp_path / "fig"
    args = ["reproduce", figure_id, "--quick", *TINY, "--output", str(out)]
    if figure_id == "fed-scaling":
        args += ["--protocols", "ldp"]
    assert main(args) == 0
    captured = capsys.readouterr()
    names = ["runs.csv", "curves.csv", "metadata.json", f"{figure_id}.png", f"{figure_id}.pdf",
             "results.sqlite"] + (["exponents.csv"] if spec.scaling else [])
    for name in names:
        assert (out / name).stat().st_size > 0, name
    assert (out / f"{figure_id}.png").read_bytes().startswith(b"\x89PNG")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["figure"] == figure_id and meta["runs"] == 2 and meta["horizon"] == 100
    for cell in meta["cells"]:
        assert cell["command"].startswith("privenv run --env FederatedLinearBandit-v0")
        if cell["protocol"] == "none":
            assert cell["privacy_model"] == "none"
        else:
            assert cell["privacy_model"] != "none" and cell["agent_kwargs"]["epsilon"] > 0
        # every run reports its communication: ⌊T/B⌋ = 4 fixed-batch synchronizations
        assert cell["communication"]["sync_rounds"] == 100 // fed.BATCH
    assert "R(T)/T" in captured.out
    if spec.scaling:
        assert "privacy cost of silo-level LDP" in captured.out
        assert len(meta["exponents"]) == 1


def test_a_cell_equals_its_privenv_run_command(tmp_path, capsys):
    rep = fed.reproduce(fed.SCALING, tmp_path, quick=True, runs=2, horizon=60,
                        protocols=["ldp"], workers=1, progress=False, figure=False)
    result = next(r for r in rep.results if r.cell.protocol == "ldp")
    args = shlex.split(result.cell.command())[1:]
    assert main([*args, "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(float(np.mean(result.result.regret)), rel=1e-12)


def test_privacy_cost_exponent_is_recovered_from_known_costs():
    """Costs c·M^0.75 (private − non-private, paired runs): the fit returns 0.75 ± noise."""
    rng = np.random.default_rng(0)
    Ms, runs = (5, 10, 20, 40), 30
    cells, results = [], []
    for m in Ms:
        panel = fed.Panel(f"M{m}", f"M = {m}", {"M": m}, 1.0, 1e-4, ("none", "ldp"))
        base = rng.normal(100.0, 1.0, runs)
        for p, value in (("none", base), ("ldp", base + 50.0 * m**0.75 * rng.normal(1, .05, runs))):
            cell = fed.Cell(panel, p, runs, 10, 0, {"M": m})
            cells.append(cell)
            curve = np.stack([value / 2, value], axis=1)
            stored = RunResults("FederatedLinearBandit-v0", p, PrivacyGuarantee.none(), 10, 0,
                                np.arange(runs), {"M": m}, {}, np.array([5, 10]), curve,
                                np.full(runs, 10))
            results.append(FigureResult(cell, stored))
    (e,) = fed.privacy_cost_exponents(results)
    assert e.protocol == "ldp" and e.theory == 0.75
    assert e.fit.slope == pytest.approx(0.75, abs=0.03)
    assert e.fit.low < 0.75 < e.fit.high
    np.testing.assert_allclose(e.local, 0.75, atol=0.05)  # no drift with M in these costs


def test_command_round_trips_through_shlex():
    cell = fed.make_cells(fed.REALDATA, fed.REALDATA.quick)[1]
    assert shlex.split(cell.command())[:4] == ["privenv", "run", "--env",
                                              "FederatedLinearBandit-v0"]
