"""``privenv reproduce lplr-constants`` and ``linear-epsilon`` (paper 4's agents against one
parameter): the quick forms end to end, the privacy guarantee unchanged by LPLR's κ scale, a cell
equals its ``privenv run`` command, bad input. Deterministic (fixed seeds)."""

import json
import shlex

import numpy as np
import pytest

from privenv.cli import main
from privenv.reproduce import FIGURES
from privenv.reproduce import linear_axes as fig


def test_registered():
    for spec in fig.FIGURES.values():
        f = FIGURES[spec.id]
        assert f.DEFINITION is spec and f.impl is fig
    assert fig.LPLR_CONSTANTS.full.kappa_scales[0] == 1.0  # the proofs' κ's are on the axis
    assert fig.LINEAR_EPSILON.full == fig.Scale(10, (10_000,), (0.1, 1.0, 10.0))
    assert fig.LINEAR_EPSILON.instance.env_kwargs == {"d": 5, "A": 10}


def test_lplr_constants_quick(tmp_path, capsys):
    out = tmp_path / "lc"
    assert main(["reproduce", "lplr-constants", "--quick", "--output", str(out),
                 "--workers", "2"]) == 0
    text = capsys.readouterr().out
    for name in ("runs.csv", "summary.csv", "slopes.csv", "metadata.json", "results.sqlite",
                 "lplr-constants.png", "lplr-constants.pdf"):
        assert (out / name).stat().st_size > 0, name
    meta = json.loads((out / "metadata.json").read_text())
    q = fig.LPLR_CONSTANTS.quick
    lplr = [c for c in meta["cells"] if c["agent"] == "lplr-regcb"]
    assert len(lplr) == len(q.epsilons) * len(q.kappa_scales) * len(q.horizons)
    # privacy does not depend on the scale: one guarantee per ε, whatever kappa_scale
    for eps in q.epsilons:
        seen = {(c["privacy"], c["privacy_epsilon"], c["privacy_delta"]) for c in lplr
                if c["agent_kwargs"]["epsilon"] == eps}
        assert len(seen) == 1 and seen.pop()[1] == eps
    assert all(len(v) == 1 for v in meta["guarantees"].values())
    # the proofs' κ's never eliminate at these horizons: exactly uniform play's actions
    for c in lplr:
        if c["agent_kwargs"]["kappa_scale"] == 1.0:
            assert c["episode"]["eliminating_rounds"] == [0] * q.runs
    assert len(meta["slopes"]) == len(q.epsilons) * (len(q.kappa_scales) + 1)  # + ldp-linucb
    assert "slope of lplr-regcb, κ × 1, ε = 1 against T" in text


def test_linear_epsilon_quick(tmp_path, capsys):
    out = tmp_path / "le"
    assert main(["reproduce", "linear-epsilon", "--quick", "--output", str(out),
                 "--workers", "2"]) == 0
    capsys.readouterr()
    meta = json.loads((out / "metadata.json").read_text())
    q = fig.LINEAR_EPSILON.quick
    assert len(meta["cells"]) == len(q.epsilons) * 3 + 1  # linucb once
    rows = (out / "summary.csv").read_text().splitlines()
    assert rows[0].startswith("agent,epsilon,kappa_scale,privacy,horizon,runs,regret_mean,"
                              "regret_se")
    for c in meta["cells"]:
        assert c["regret_mean"] > 0 and c["regret_se"] >= 0 and c["command"]
    assert (out / "linear-epsilon.png").read_bytes().startswith(b"\x89PNG")


def test_a_cell_equals_its_privenv_run_command(tmp_path, capsys):
    rep = fig.reproduce(fig.LPLR_CONSTANTS, tmp_path, runs=2, horizons=(60, 120),
                        epsilons=(10.0,), kappa_scales=(1e-6,), workers=1, progress=False,
                        figure=False, n_boot=20)
    result = next(r for r in rep.results if r.cell.agent == "lplr-regcb"
                  and r.cell.horizon == 120)
    assert result.cell.agent_kwargs == {"epsilon": 10.0, "kappa_scale": 1e-6}
    args = shlex.split(result.cell.command())[1:]
    assert main([*args, "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(float(np.mean(result.result.regret)), rel=1e-12)


@pytest.mark.parametrize("figure, args, message", [
    ("lplr-constants", ["--horizons", "100"], "horizons"),
    ("lplr-constants", ["--kappa-scales", "0"], "kappa_scales"),
    ("lplr-constants", ["--runs", "1"], "runs"),
    ("linear-epsilon", ["--epsilons", "-1"], "epsilons"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, figure, args, message):
    assert main(["reproduce", figure, "--output", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
