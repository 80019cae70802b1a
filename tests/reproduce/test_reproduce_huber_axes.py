"""``privenv reproduce huber-epsilon``, ``huber-alpha`` and ``huber-constants`` (paper 1's agents
against one parameter): the quick forms end to end, the guarantee unchanged by the constant
scale, the verdicts computed from paired runs, a cell equals its ``privenv run`` command, bad
input. Deterministic (fixed seeds)."""

import json
import shlex

import numpy as np
import pytest

from privenv.cli import main
from privenv.reproduce import FIGURES, huber_fig1
from privenv.reproduce import huber_axes as fig


def test_registered():
    for spec in fig.FIGURES.values():
        f = FIGURES[spec.id]
        assert f.DEFINITION is spec and f.impl is fig
    assert fig.HUBER_CONSTANTS.panels == huber_fig1.PANELS  # the six panels of Figure 1
    assert fig.HUBER_CONSTANTS.full.horizon == huber_fig1.PAPER.horizon  # the paper's T
    assert fig.HUBER_CONSTANTS.full.values[0] == 1.0  # the proofs' constants are on the axis
    assert fig.HUBER_EPSILON.full.horizon == fig.HUBER_ALPHA.full.horizon == 10**6


@pytest.mark.parametrize("spec", list(fig.FIGURES.values()), ids=list(fig.FIGURES))
def test_quick_form_writes_its_files(spec, tmp_path, capsys):
    out = tmp_path / spec.id
    assert main(["reproduce", spec.id, "--quick", "--output", str(out), "--workers", "2"]) == 0
    text = capsys.readouterr().out
    for name in ("runs.csv", "summary.csv", "metadata.json", "results.sqlite",
                 f"{spec.id}.png", f"{spec.id}.pdf"):
        assert (out / name).stat().st_size > 0, name
    meta = json.loads((out / "metadata.json").read_text())
    q = spec.quick
    assert len(meta["cells"]) == len(spec.panels) * len(q.values) * 3
    assert meta["values"] == sorted(q.values) and meta["axis"] == spec.axis
    assert len(meta["trends"]) == len(spec.panels) * 3
    assert f"claim: {spec.claim}" in text
    for c in meta["cells"]:
        assert c["privacy_epsilon"] == c["agent_kwargs"]["epsilon"] and c["command"]
    rows = (out / "summary.csv").read_text().splitlines()
    assert len(rows) == 1 + len(meta["cells"])
    if spec is fig.HUBER_CONSTANTS:
        # privacy does not depend on the scale: one guarantee per (agent, ε)
        assert all(len(v) == 1 for v in meta["guarantees"].values())
        assert set(meta["ordered_as_paper"]) == {str(v) for v in q.values}


def test_verdicts_are_paired_differences(tmp_path):
    """A trend is the mean ± SE of x(high) − x(low) over paired runs, read off the runs."""
    rep = fig.reproduce(fig.HUBER_ALPHA, tmp_path, quick=True, workers=1, progress=False,
                        figure=False)
    for t in rep.trends():
        d = rep.regret(t.panel, t.agent, 0.1) - rep.regret(t.panel, t.agent, 0.02)
        assert t.mean == pytest.approx(d.mean())
        assert t.se == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))
        assert t.verdict == ("no change" if abs(d.mean()) <= 2 * t.se
                             else "rises" if d.mean() > 0 else "falls")
    assert fig.Trend("x", "a", 0, 1, 0.0, 0.0).verdict == "no change"
    assert fig.Trend("x", "a", 0, 1, -3.0, 1.0).verdict == "falls"


def test_a_cell_equals_its_privenv_run_command(tmp_path, capsys):
    rep = fig.reproduce(fig.HUBER_CONSTANTS, tmp_path, runs=2, horizon=3000, values=(1.0, 0.01),
                        agents=("prae-c",), workers=1, progress=False, figure=False)
    result = next(r for r in rep.results if r.cell.panel.key == "f"
                  and r.cell.agent_kwargs.get("constant_scale") == 0.01)
    assert result.cell.agent_kwargs == {"epsilon": 0.5, "constant_scale": 0.01}
    assert main([*shlex.split(result.cell.command())[1:], "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(float(np.mean(result.result.regret)), rel=1e-12)


def test_epsilon_and_alpha_axes_at_another_constant_scale(tmp_path):
    """``constant_scale`` reaches every agent of an ε or α axis (and only changes which arms are
    pulled: the guarantee is the same); it cannot be set on the axis that sweeps it."""
    kw = dict(runs=2, horizon=3000, values=(0.2, 1.0), agents=("prae-c", "dprse"), workers=1,
              progress=False, figure=False)
    rep = fig.reproduce(fig.HUBER_EPSILON, tmp_path / "c", constant_scale=0.1, **kw)
    base = fig.reproduce(fig.HUBER_EPSILON, tmp_path / "b", **kw)
    assert all(r.cell.agent_kwargs["constant_scale"] == 0.1 for r in rep.results)
    assert all("constant_scale" not in r.cell.agent_kwargs for r in base.results)
    assert [str(r.result.privacy) for r in rep.results] == [
        str(r.result.privacy) for r in base.results]
    assert {row.split(",")[4] for row in (tmp_path / "c" / "runs.csv").read_text().splitlines()[1:]
            } == {"0.1"}
    with pytest.raises(ValueError, match="constant_scale is the axis"):
        fig.reproduce(fig.HUBER_CONSTANTS, tmp_path / "x", constant_scale=0.5, **kw)


@pytest.mark.parametrize("figure, args, message", [
    ("huber-constants", ["--values", "0,1"], "values"),
    ("huber-constants", ["--values", "1"], "values"),
    ("huber-alpha", ["--values", "0.05,0.2"], "values"),
    ("huber-epsilon", ["--runs", "1"], "runs"),
    ("huber-epsilon", ["--horizon", "1"], "horizon"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, figure, args, message):
    assert main(["reproduce", figure, "--output", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
