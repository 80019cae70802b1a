"""What a human sees when a privenv env is rendered: a board of pulls, estimates and regret.

Every env accepts ``render_mode="ansi"`` (a text table) or ``"rgb_array"`` (a bar-chart frame, an
``(H, W, 3)`` ``uint8`` array of constant shape, so ``gymnasium.wrappers.RecordVideo`` and
``RenderCollection`` work). Both show, per arm, the number of pulls and the mean observed reward
(the empirical mean of the raw samples), and the cumulative pseudo-regret of the run (or, for
best-arm identification, the stopping time and recommendation).

**Rendering a private problem shows raw data to whoever watches.** The mean observed rewards are
computed from the raw, non-private rewards; a render is a human view of the env's own state — it
is never given to an agent, never put in ``info``, and is not covered by any agent's privacy
guarantee. Do not publish renders of runs on real users' data.

The board exists only when a ``render_mode`` is set: without one, an env does no bookkeeping beyond
its usual step. Frames are drawn with matplotlib's Agg canvas when matplotlib is installed
(``BACKEND == "matplotlib"``), and otherwise by a small pure-numpy raster of the same shape
(``BACKEND == "numpy"``: bars and axes, no text).

A family whose actions are not "pull arm ``a``" says how to read them with a ``pulls`` function
``(problem, actions, obs, reward, info) -> (arms, values)`` — ``arms`` an integer array
``(n_runs, m)`` (−1: no pull), ``values`` the matching observed samples — set as the env classes'
``render_pulls`` attribute (see :mod:`privenv.envs.bai`).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

#: frame size in pixels (height, width); the same for both backends
FRAME_SHAPE = (240, 720, 3)
#: "matplotlib" (Agg canvas) if matplotlib is importable, else "numpy" (raster without text)
BACKEND = "matplotlib" if importlib.util.find_spec("matplotlib") is not None else "numpy"

_HISTORY = 256  # cumulative regret curve: at most 2·_HISTORY points kept (stride doubles)

PullsFn = Callable[[Any, np.ndarray, Any, np.ndarray, dict], tuple[np.ndarray, np.ndarray]]


def arm_pulls(
    problem: Any, actions: np.ndarray, obs: Any, reward: np.ndarray, info: dict
) -> tuple[np.ndarray, np.ndarray]:
    """Default reading of a step: action = arm (one per run, or one per silo), value = reward.

    ``reward`` is what the problem's ``step`` returned, before ``gym_reward`` (one reward per
    silo for the federated family).
    """
    n = problem.n_runs
    return np.asarray(actions).reshape(n, -1), np.asarray(reward, dtype=float).reshape(n, -1)


def n_arms(problem: Any) -> int:
    """The number of arms a board shows: the problem's K (arms) or A (actions)."""
    k = getattr(problem, "K", None)
    return int(k if k is not None else problem.A)


class Board:
    """Per-run bookkeeping for rendering: pulls and reward sums per arm, cumulative regret.

    Args:
        n_runs: runs held (1 for a single env).
        K: arms shown.
        title: the env's name, shown in the header.
        backend: ``"matplotlib"`` or ``"numpy"`` (default: :data:`BACKEND`).
    """

    def __init__(self, n_runs: int, K: int, title: str, backend: str | None = None) -> None:
        backend = BACKEND if backend is None else backend
        if backend not in ("matplotlib", "numpy"):
            raise ValueError(f"backend must be 'matplotlib' or 'numpy', got {backend!r}")
        self.n_runs, self.K, self.title, self.backend = n_runs, K, title, backend
        self.counts = np.zeros((n_runs, K), dtype=np.int64)
        self.sums = np.zeros((n_runs, K))
        self.t = np.zeros(n_runs, dtype=np.int64)
        self.regret = np.zeros(n_runs)
        self.recommendation = np.full(n_runs, -1, dtype=np.int64)
        self._history: list[list[tuple[int, float]]] = [[] for _ in range(n_runs)]
        self._stride = np.ones(n_runs, dtype=np.int64)
        self._canvas: Any = None
        self._bai = False

    def reset(self, runs: np.ndarray | None = None) -> None:
        """Clear the given runs (all by default)."""
        runs = np.arange(self.n_runs) if runs is None else np.asarray(runs)
        for a in (self.counts, self.sums, self.t, self.regret):
            a[runs] = 0
        self.recommendation[runs] = -1
        self._stride[runs] = 1
        for i in runs:
            self._history[int(i)] = []

    def record(
        self, arms: np.ndarray, values: np.ndarray, info: dict, live: np.ndarray | None = None
    ) -> None:
        """Add one step of every run (of the runs in ``live``)."""
        ok = arms >= 0
        if live is not None:
            ok &= live[:, None]
        rows = np.broadcast_to(np.arange(self.n_runs)[:, None], arms.shape)
        np.add.at(self.counts, (rows[ok], arms[ok]), 1)
        np.add.at(self.sums, (rows[ok], arms[ok]), values[ok])
        step = np.ones(self.n_runs, dtype=np.int64) if live is None else live.astype(np.int64)
        self.t += step
        if "regret" in info:
            self.regret += np.asarray(info["regret"], dtype=float).reshape(self.n_runs) * step
        if "recommendation" in info:  # best-arm identification: no regret, a recommendation
            self._bai = True
            rec = np.asarray(info["recommendation"]).reshape(self.n_runs)
            self.recommendation = np.where(rec >= 0, rec, self.recommendation)
        for i in np.flatnonzero(step):
            if self.t[i] % self._stride[i] == 0:
                h = self._history[i]
                h.append((int(self.t[i]), float(self.regret[i])))
                if len(h) >= 2 * _HISTORY:  # keep memory bounded: halve the resolution
                    self._history[i] = h[1::2]
                    self._stride[i] *= 2

    def means(self, run: int) -> np.ndarray:
        """Mean observed reward of each arm of a run (NaN for unpulled arms)."""
        c = self.counts[run]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, self.sums[run] / np.maximum(c, 1), np.nan)

    def status(self, run: int) -> str:
        if not self._bai:
            return f"t={self.t[run]}  cumulative pseudo-regret={self.regret[run]:.4g}"
        s = f"pulls={self.counts[run].sum()}"
        if self.recommendation[run] >= 0:
            s += f"  stopped: recommends arm {self.recommendation[run]}"
        return s

    # -- ansi -----------------------------------------------------------------------------------
    def ansi(self, run: int = 0, max_rows: int = 20) -> str:
        """A text table: arm, pulls, share of pulls, mean observed reward (the most pulled
        ``max_rows`` arms when there are more)."""
        counts, means = self.counts[run], self.means(run)
        total = max(int(counts.sum()), 1)
        arms = np.arange(self.K)
        if self.K > max_rows:
            arms = np.sort(np.argsort(-counts, kind="stable")[:max_rows])
        lines = [f"{self.title}  {self.status(run)}", f"{'arm':>5} {'pulls':>10} {'share':>7} "
                 f"{'mean obs. reward':>17}"]
        for a in arms:
            m = "-" if np.isnan(means[a]) else f"{means[a]:.4g}"
            lines.append(f"{a:>5} {counts[a]:>10} {counts[a] / total:>7.1%} {m:>17}")
        if self.K > max_rows:
            lines.append(f"({self.K - max_rows} less pulled arms not shown)")
        return "\n".join(lines) + "\n"

    # -- rgb_array ------------------------------------------------------------------------------
    def rgb(self, run: int = 0) -> np.ndarray:
        """An ``FRAME_SHAPE`` uint8 frame: pulls per arm | mean observed reward | regret vs t."""
        if self.backend == "matplotlib":
            return self._rgb_matplotlib(run)
        return self._rgb_numpy(run)

    def _rgb_matplotlib(self, run: int) -> np.ndarray:
        if self._canvas is None:  # artists are built once and updated (redrawing ticks is slow)
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            h, w, _ = FRAME_SHAPE
            fig = Figure(figsize=(w / 100, h / 100), dpi=100)
            self._canvas = FigureCanvasAgg(fig)
            axes = fig.subplots(1, 3)
            fig.subplots_adjust(left=0.05, right=0.99, bottom=0.12, top=0.8, wspace=0.3)
            arms = np.arange(self.K)
            pulls = axes[0].bar(arms, np.zeros(self.K), color="tab:blue")
            means = axes[1].bar(arms, np.zeros(self.K), color="tab:orange")
            axes[1].axhline(0, color="k", lw=0.5)
            (curve,) = axes[2].plot([], [], color="tab:red")
            for ax, title in zip(axes, ("pulls per arm", "mean observed reward",
                                        "cumulative pseudo-regret"), strict=True):
                ax.set_title(title, fontsize=8)
                ax.tick_params(labelsize=6)
            self._artists = (axes, pulls, means, curve, fig.suptitle("", fontsize=8))
        axes, pulls, means, curve, header = self._artists
        counts, mu = self.counts[run], np.nan_to_num(self.means(run))
        for bars, values in ((pulls, counts), (means, mu)):
            for bar, v in zip(bars, values, strict=True):
                bar.set_height(v)
        axes[0].set_ylim(0, max(int(counts.max()), 1) * 1.05)
        lo, hi = min(0.0, float(mu.min())), max(0.0, float(mu.max()))
        axes[1].set_ylim(lo - 0.05 * (hi - lo or 1), hi + 0.05 * (hi - lo or 1))
        hist = self._history[run]
        if self._bai:
            axes[2].set_title("(best-arm identification: no regret)", fontsize=8)
        elif hist:
            t, r = (np.array(x) for x in zip(*hist, strict=True))
            curve.set_data(t, r)
            axes[2].set_xlim(0, max(int(t[-1]), 1))
            axes[2].set_ylim(0, max(float(r.max()), 1e-12) * 1.05)
        else:
            curve.set_data([], [])
        header.set_text(f"{self.title}  {self.status(run)}")
        self._canvas.draw()
        return np.asarray(self._canvas.buffer_rgba())[..., :3].copy()

    def _rgb_numpy(self, run: int) -> np.ndarray:
        h, w, _ = FRAME_SHAPE
        img = np.full(FRAME_SHAPE, 255, dtype=np.uint8)
        pw = w // 3
        means = np.nan_to_num(self.means(run))
        hist = self._history[run]
        panels = [
            (self.counts[run].astype(float), (31, 119, 180)),
            (means, (255, 127, 14)),
        ]
        top, bottom = 20, h - 15
        for p, (values, color) in enumerate(panels):
            x0, x1 = p * pw + 10, (p + 1) * pw - 10
            lo, hi = min(0.0, float(values.min())), max(0.0, float(values.max()))
            span = hi - lo or 1.0
            zero = bottom - int((0 - lo) / span * (bottom - top))
            bw = max((x1 - x0) // self.K, 1)
            for a, v in enumerate(values):
                y = bottom - int((v - lo) / span * (bottom - top))
                xa = x0 + a * bw
                img[min(y, zero):max(y, zero) + 1, xa:xa + max(bw - 1, 1)] = color
            img[zero, x0:x1] = 0  # axis
            img[top:bottom + 1, x0] = 0
        x0, x1 = 2 * pw + 10, w - 10
        img[bottom, x0:x1] = 0
        img[top:bottom + 1, x0] = 0
        if hist:
            t = np.array([p[0] for p in hist], dtype=float)
            r = np.array([p[1] for p in hist])
            xs = x0 + ((t / max(t[-1], 1)) * (x1 - x0 - 1)).astype(int)
            span = max(float(r.max()), 1e-12)
            ys = bottom - ((np.clip(r, 0, None) / span) * (bottom - top)).astype(int)
            img[ys, xs] = (214, 39, 40)
        return img
