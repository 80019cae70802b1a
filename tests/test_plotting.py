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
