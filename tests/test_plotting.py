"""privenv.plotting: regret figures with error bands and reference curves, PNG and PDF."""

import subprocess
import sys

import numpy as np
import pytest

from privenv.plotting import Reference, RegretPanel, mean_sd, regret_grid, save_figure


def test_mean_sd_uses_ddof_1_and_zero_for_one_run():
    x = np.array([[0.0, 1.0], [2.0, 5.0]])
    m, s = mean_sd(x)
    np.testing.assert_allclose(m, [1.0, 3.0])
    np.testing.assert_allclose(s, [np.sqrt(2.0), np.sqrt(8.0)])
    m, s = mean_sd(np.array([[3.0, 4.0]]))
    np.testing.assert_allclose(s, 0.0)


def test_grid_written_as_png_and_pdf(tmp_path, rng):
    t = np.unique(np.geomspace(1, 1000, 30).round())
    curves = {name: np.cumsum(rng.random((5, len(t))) * s, axis=1)
              for name, s in (("a", 1.0), ("b", 2.0))}
    panels = [
        RegretPanel(f"panel {i}", t, curves, [Reference("rate (constant 1)", t, 3 * np.sqrt(t))])
        for i in range(4)
    ]
    fig = regret_grid(panels, ncols=3, suptitle="test", footnote="note")
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 4  # the 5th and 6th cells of the 2×3 grid are hidden
    # one line per agent + the reference, and a band per agent
    assert len(axes[0].lines) == 3 and len(axes[0].collections) == 2
    paths = save_figure(fig, tmp_path / "sub" / "fig")
    assert [p.name for p in paths] == ["fig.png", "fig.pdf"]
    png, pdf = (p.read_bytes() for p in paths)
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert pdf.startswith(b"%PDF") and len(pdf) > 5_000


def test_empty_grid_is_an_error():
    with pytest.raises(ValueError, match="panels"):
        regret_grid([])


def test_core_does_not_import_matplotlib_and_plots_avoid_pyplot():
    code = (
        "import sys, numpy as np\n"
        "import privenv, privenv.simulation, privenv.cli, privenv.reproduce, privenv.plotting\n"
        "assert 'matplotlib' not in sys.modules, 'core imported matplotlib'\n"
        "from privenv.plotting import RegretPanel, regret_grid\n"
        "t = np.arange(1, 11); regret_grid([RegretPanel('p', t, {'a': np.ones((2, 10))})])\n"
        "assert 'matplotlib' in sys.modules and 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _legend(ax) -> dict[str, object]:
    return dict(zip(ax.get_legend_handles_labels()[1], ax.get_lines(), strict=False))


def test_no_curve_hides_another():
    """A curve equal to (or within 1 % of the y range of) an earlier one is drawn with another
    line style and markers, and its legend entry names the curve it lies on; distinct curves keep
    the plain solid line. Mutation check: without the overlap styles the later curve would be a
    solid line exactly on the first."""
    from privenv.plotting import overlaps

    t = np.arange(1.0, 101.0)
    a = np.vstack([t, t + 2])
    curves = {"a": a, "b": a.copy(), "c": a + 0.5, "d": 3 * a}
    assert overlaps({k: v.mean(axis=0) for k, v in curves.items()}, span=300.0) == {
        "b": ("a", True), "c": ("a", False)}
    fig = regret_grid([RegretPanel("p", t, curves)])
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["a", "b (= a: dashed)", "c (≈ a: dotted)", "d"]
    styles = [(line.get_linestyle(), line.get_marker()) for line in ax.get_lines()]
    assert styles[0] == ("-", "None") and styles[3] == ("-", "None")
    assert len({styles[0], styles[1], styles[2]}) == 3  # a, b, c each drawn differently


def test_equal_runs_are_labelled_sd_0():
    t = np.arange(1.0, 11.0)
    fig = regret_grid([RegretPanel("p", t, {"same": np.tile(t, (3, 1)),
                                            "varies": np.vstack([t, 2 * t, 3 * t]),
                                            "one run": 5 * t[None]})])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["same (runs all equal: sd 0)", "varies", "one run"]


def test_uniform_play_reference():
    """Exact on a K-armed problem (t × mean gap, 50 on paper 1's instance), simulated where the
    contexts vary (the zoo's uniform agent on the same runs), absent for best-arm identification
    (no regret)."""
    from privenv.plotting import uniform_play

    t = np.array([10.0, 100.0, 1000.0])
    ref = uniform_play("HuberBandit-v0", {}, t, horizon=1000, runs=np.arange(3), seed=0)
    np.testing.assert_allclose(ref.y, 50 * t)
    assert "mean gap 50" in ref.label
    assert uniform_play("BestArmIdentification-v0", {}, t, horizon=1000, runs=np.arange(3),
                        seed=0) is None
    ref = uniform_play("LinearContextualBandit-v0", {"d": 2, "A": 4}, t, horizon=1000,
                       runs=np.arange(2), seed=0)
    assert "simulated" in ref.label and np.all(np.diff(ref.y) > 0)


def test_plot_of_a_store_draws_uniform_play_and_tells_equal_curves_apart(tmp_path):
    """``privenv plot``'s figure: two agent configurations with the same curves are both in the
    legend, the second marked as lying on the first, and uniform play is drawn."""
    from privenv.plotting import store_figure
    from privenv.store import Store
    from privenv.sweep import run_sweep

    config = {"runs": 2, "horizon": 300, "n_checkpoints": 10,
              "instances": [{"env": "HuberBandit-v0", "params": {"K": 3}}],
              "agents": [{"name": "dp-se", "grid": {"epsilon": [0.5, 1.0]}}]}
    run_sweep(config, tmp_path / "s.sqlite", workers=1, progress="none")
    with Store(tmp_path / "s.sqlite") as s:
        fig = store_figure(s)
    (legend_axes,) = [ax for ax in fig.axes if ax.get_legend() is not None]
    labels = [x.get_text() for x in legend_axes.get_legend().get_texts()]
    assert labels[1].startswith("dp-se(epsilon=1.0)")
    assert "(= dp-se(epsilon=0.5): dashed)" in labels[1]
    assert labels[-1] == "uniform play (expected: t × mean gap 50)"
