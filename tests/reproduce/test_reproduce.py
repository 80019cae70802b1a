"""``privenv reproduce huber-fig1`` on a tiny configuration: files, determinism across workers,
and agreement with ``privenv run``."""

import argparse
import json
import shlex

import numpy as np
import pytest

from privenv import agents
from privenv.cli import main
from privenv.reproduce import FIGURES, figure
from privenv.reproduce import huber_fig1 as fig1
from privenv.reproduce.cells import Execution, default_workers


def _figure_agents() -> tuple[str, ...]:
    """The figure's agents once they exist; the baselines until then."""
    try:
        for a in fig1.AGENTS:
            agents.agent_class(a)
        return fig1.AGENTS
    except (ImportError, AttributeError):
        return ("ucb1", "eps-greedy")


AGENTS = _figure_agents()
TINY = ["--runs", "2", "--horizon", "2000", "--agents", ",".join(AGENTS)]


def test_registry():
    assert FIGURES["huber-fig1"] is fig1
    assert figure("huber-fig1") is fig1
    with pytest.raises(ValueError, match="unknown figure"):
        figure("nope")
    for mod in FIGURES.values():
        assert mod.ID and mod.DESCRIPTION and callable(mod.add_arguments) and callable(mod.main)


def test_panels_match_paper_1_section_7():
    assert [(p.inlier, p.alpha, p.epsilon) for p in fig1.PANELS] == [
        ("student-t", 0.05, 0.2), ("student-t", 0.05, 0.5), ("student-t", 0.05, 1.0),
        ("pareto", 0.02, 0.5), ("pareto", 0.05, 0.5), ("pareto", 0.10, 0.5),
    ]
    assert fig1.AGENTS == ("prae-r", "prae-c", "dprse")
    assert (fig1.PAPER.runs, fig1.PAPER.horizon) == (30, 100_000)  # §7.1
    assert fig1.FULL.runs == fig1.PAPER.runs and fig1.FULL.horizon == 10 * fig1.PAPER.horizon
    assert fig1.QUICK.horizon == fig1.FULL.horizon and fig1.QUICK.runs < fig1.FULL.runs


def test_tiny_reproduction_writes_csv_json_png_pdf(tmp_path, capsys):
    out = tmp_path / "fig"
    assert main(["reproduce", "huber-fig1", *TINY, "--output", str(out), "--workers", "2"]) == 0
    captured = capsys.readouterr()
    for name in ("runs.csv", "curves.csv", "metadata.json", "huber-fig1.png", "huber-fig1.pdf"):
        assert (out / name).stat().st_size > 0, name
    assert (out / "huber-fig1.png").read_bytes().startswith(b"\x89PNG")
    assert (out / "huber-fig1.pdf").read_bytes().startswith(b"%PDF")
    # the final-regret table on stdout, one progress line per cell on stderr
    assert "final cumulative regret" in captured.out
    assert all(p.title in captured.out for p in fig1.PANELS)
    assert captured.err.count("final regret") == 6 * len(AGENTS)

    rows = (out / "runs.csv").read_text().splitlines()
    assert len(rows) == 1 + 6 * len(AGENTS) * 2
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["runs"] == 2 and meta["horizon"] == 2000 and meta["seed"] == 0
    assert meta["versions"]["numpy"] and meta["wall_s"] > 0
    assert len(meta["cells"]) == 6 * len(AGENTS)
    for cell in meta["cells"]:
        assert cell["privacy_model"] in ("none", "central") and cell["command"]
        if cell["privacy_model"] == "central":
            assert cell["privacy_epsilon"] == cell["agent_kwargs"]["epsilon"]
    assert set(meta["theory_at_horizon"]) == set("abcdef")


def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    kw = dict(runs=2, horizon=300, agents=AGENTS, progress=False, figure=False)
    one = fig1.reproduce(tmp_path / "w1", workers=1, **kw)
    two = fig1.reproduce(tmp_path / "w2", workers=2, **kw)
    for name in ("runs.csv", "curves.csv"):
        assert (tmp_path / "w1" / name).read_bytes() == (tmp_path / "w2" / name).read_bytes()
    assert [r.cell for r in one.results] == [r.cell for r in two.results]


def test_one_execution_bundle_or_its_fields_by_keyword(tmp_path):
    """How a reproduction runs is one :class:`Execution`, built once (from the command line or
    from keywords); a bad worker count names the parameter; an execution and loose fields
    together are refused, never merged."""
    kw = dict(runs=2, horizon=300, agents=AGENTS[:1])
    ex = Execution(workers=1, progress=False, figure=False)
    bundled = fig1.reproduce(tmp_path / "b", execution=ex, **kw)
    loose = fig1.reproduce(tmp_path / "k", workers=1, progress=False, figure=False, **kw)
    assert (tmp_path / "b" / "runs.csv").read_bytes() == (tmp_path / "k" / "runs.csv").read_bytes()
    assert bundled.workers == loose.workers == 1
    assert not (tmp_path / "b" / "huber-fig1.png").exists()
    with pytest.raises(ValueError, match="workers"):
        Execution(workers=0)
    with pytest.raises(TypeError, match="either execution or its fields"):
        fig1.reproduce(tmp_path / "x", execution=ex, resume=True, **kw)
    with pytest.raises(TypeError):
        Execution.of(None, worker=2)  # a misspelt field is an error, not ignored
    args = argparse.Namespace(workers=None, backend="local", address=None, resume=True)
    assert Execution.from_args(args) == Execution(resume=True)
    assert Execution().workers == default_workers()


def test_the_figure_draws_what_its_labels_say(tmp_path):
    """The figure's lines are the agents and uniform play only (the paper's rates, constants 1,
    are orders, not bounds here: recorded in the metadata, not drawn); an agent whose runs all
    end equal is labelled sd 0, and the footnote says why; the title says how T compares with
    the paper's."""
    rep = fig1.reproduce(tmp_path, runs=2, horizon=2000, agents=AGENTS, workers=1,
                         progress=False, figure=False)
    fig = fig1.figure(rep.results, 2, 2000)
    labels = [label for ax in fig.axes for label in ax.get_legend_handles_labels()[1]]
    assert set(labels) <= {*AGENTS, *(f"{a} (runs all equal: sd 0)" for a in AGENTS),
                           "uniform play (expected: t × mean gap 50)"}
    assert labels.count("uniform play (expected: t × mean gap 50)") == 6
    equal = sorted({r.cell.agent for r in rep.results if np.all(r.result.regret
                                                                 == r.result.regret[0])})
    assert sorted({a.split(" (")[0] for a in labels if "sd 0" in a}) == equal
    footnote = fig.get_supxlabel() if equal else ""
    assert (fig1.EQUAL_RUNS_NOTE in footnote) == bool(equal)
    assert "0.02× the paper's T = 100,000" in fig.get_suptitle()


def test_a_cell_equals_its_privenv_run_command(tmp_path, capsys):
    rep = fig1.reproduce(tmp_path, runs=3, horizon=500, agents=AGENTS[:1], workers=1,
                         progress=False, figure=False)
    result = rep.results[-1]  # panel (f)
    args = shlex.split(result.cell.command())[1:]
    assert main([*args, "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(float(np.mean(result.result.regret)), rel=1e-12)
    assert s["env_kwargs"] == {"inlier": "pareto", "alpha": 0.1}


def test_random_arm_order_reaches_every_agent_and_its_command(tmp_path, capsys):
    """``--arm-order random`` sets every agent's ``arm_order``; a cell still equals its command,
    and the runs differ from the index order's (the unfinished batches visit other arms)."""
    kw = dict(runs=2, horizon=3000, agents=AGENTS, workers=1, progress=False, figure=False)
    rand = fig1.reproduce(tmp_path / "r", arm_order="random", **kw)
    index = fig1.reproduce(tmp_path / "i", **kw)
    assert all(r.cell.agent_kwargs["arm_order"] == "random" for r in rand.results)
    assert all("arm_order" not in r.cell.agent_kwargs for r in index.results)
    assert any(not np.array_equal(a.result.regret, b.result.regret)
               for a, b in zip(rand.results, index.results, strict=True))
    result = rand.results[1]
    assert main([*shlex.split(result.cell.command())[1:], "--format", "json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["regret_mean"] == pytest.approx(float(np.mean(result.result.regret)), rel=1e-12)


def test_bad_options_are_clear_errors(tmp_path, capsys):
    out = str(tmp_path)
    assert main(["reproduce", "huber-fig1", "--arm-order", "rand", "--output", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "arm_order must be one of ['index', 'random']" in err[0]
    assert main(["reproduce", "huber-fig1", "--agents", "nope", "--output", out]) == 2
    assert "unknown agent 'nope'" in capsys.readouterr().err
    assert main(["reproduce", "huber-fig1", "--runs", "0", "--output", out]) == 2
    assert "runs" in capsys.readouterr().err


def test_the_quick_form_shows_learning():
    """``make reproduce``'s quick form is at a horizon where the agents learn: on panel (b),
    PRAE-C's regret, every run, is below half of uniform play's (T · mean gap = 50 T). Measured
    at the quick scale (3 runs, T = 10⁶): 9.4·10⁶ against 5·10⁷ (deterministic for the seed)."""
    from privenv.simulation import simulate

    assert fig1.QUICK.horizon >= 10**6
    panel = fig1.PANELS[1]
    res = simulate("prae-c", fig1.ENV_ID, n_runs=fig1.QUICK.runs, horizon=fig1.QUICK.horizon,
                   seed=0, env_kwargs=panel.env_kwargs, agent_kwargs={"epsilon": panel.epsilon})
    uniform = fig1.QUICK.horizon * np.mean(100.0 - np.array([100.0, 75.0, 50.0, 25.0, 0.0]))
    assert (res.regret < 0.5 * uniform).all()
