"""The one results record: per-run results of runs of one configuration.

:class:`RunResults` is what :func:`privenv.simulation.simulate` returns, what a sweep's cell
computes (:func:`privenv.sweep.run_cell`) and the results store writes
(:meth:`privenv.store.Store.record_result`), what the store reads back for a configuration
(:meth:`privenv.store.Store.results`, all its done cells joined) and what the paper reproductions
draw from. :class:`Cell` names a chunk of runs of one configuration: the key under which a
result is stored, and everything its numbers depend on.

This module sits below the simulation, the store and the sweeps (it imports none of them), so
they share the record without importing one another.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from privenv._stats import sample_sd
from privenv.privacy.guarantee import PrivacyGuarantee

#: log-spaced regret checkpoints per run, by default
DEFAULT_CHECKPOINTS = 40


def canonical_json(value: Any) -> str:
    """Canonical JSON text: sorted keys, no spaces, numpy values as Python ones."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} value {obj!r} is not JSON serializable")


def content_hash(value: Any) -> str:
    """A short, stable hash of ``value``'s canonical JSON (ids of cells and configurations)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:20]


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def versions() -> dict[str, str]:
    """Versions recorded with every result."""
    import gymnasium as gym
    import numba
    import scipy

    import privenv

    return {
        "privenv": privenv.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "gymnasium": gym.__version__,
        "numba": numba.__version__,
        "python": platform.python_version(),
    }


def kwargs_text(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


@dataclass(frozen=True, eq=False)
class Cell:
    """A chunk of runs of one configuration: everything its numbers depend on.

    ``cell_id`` is a hash of the cell's canonical JSON (stable across processes and machines);
    ``config_id`` the hash of the same without ``first_run``/``n_runs`` (the configuration and its
    seed). Cells (and configurations) are equal when their canonical JSON is: parameter values
    compare as written, so ``epsilon = 1`` and ``epsilon = 1.0`` are different configurations.
    Treat the kwargs dicts as read-only.
    """

    env: str
    env_kwargs: Mapping[str, Any]
    agent: str
    agent_kwargs: Mapping[str, Any]
    horizon: int
    seed: int
    first_run: int
    n_runs: int
    n_checkpoints: int = DEFAULT_CHECKPOINTS

    def config_dict(self) -> dict[str, Any]:
        return {"env": self.env, "env_kwargs": dict(self.env_kwargs), "agent": self.agent,
                "agent_kwargs": dict(self.agent_kwargs), "horizon": self.horizon,
                "seed": self.seed, "n_checkpoints": self.n_checkpoints}

    def to_dict(self) -> dict[str, Any]:
        return {**self.config_dict(), "first_run": self.first_run, "n_runs": self.n_runs}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Cell:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})

    @property
    def cell_id(self) -> str:
        return content_hash(self.to_dict())

    @property
    def config_id(self) -> str:
        return content_hash(self.config_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cell) and self.cell_id == other.cell_id

    def __hash__(self) -> int:
        return hash(self.cell_id)

    def describe(self) -> str:
        last = self.first_run + self.n_runs - 1
        return (f"{self.agent}({kwargs_text(self.agent_kwargs)}) on "
                f"{self.env}({kwargs_text(self.env_kwargs)}) T={self.horizon} seed={self.seed} "
                f"runs {self.first_run}-{last}")

    def command(self) -> str:
        """The ``privenv run`` command that reproduces this cell's final regrets."""
        sets = [f"--set {shlex.quote(f'{k}={canonical_json(v)}')}"
                for k, v in self.agent_kwargs.items()]
        sets += [f"--set {shlex.quote(f'env.{k}={canonical_json(v)}')}"
                 for k, v in self.env_kwargs.items()]
        return " ".join([
            f"privenv run --env {self.env} --agent {self.agent} --runs {self.n_runs} "
            f"--horizon {self.horizon} --seed {self.seed} --first-run {self.first_run}", *sets])


@dataclass
class RunResults:
    """Per-run results of runs of one configuration (one agent on one env instance).

    Args:
        env: the env id.
        agent: the agent's registered name (or its class name).
        privacy: the guarantee of the whole system (agent behind any local-DP wrappers).
        horizon: rounds per run (regret) or sample budget (best-arm identification).
        seed: the integer seed; run *i* is run *i* of this seed (:mod:`privenv.seeding`).
        runs: the run indices, ascending (``first_run … first_run + n_runs − 1`` for one batch;
            a store's read-back joins the done cells of a configuration).
        env_kwargs: the env's parameters as given (not its defaults).
        agent_kwargs: the agent's parameters as given.
        checkpoint_times: the log-spaced times of the regret curve.
        regret_curve: ``(len(runs), len(checkpoint_times))`` cumulative clean pseudo-regret.
        steps: rounds played by each run.
        episode: per-run values of the end of an episode (stopping time, recommendation,
            correct; communication counts of federated agents, …).
        agent_params: the agent's constructor parameters as resolved (plain values only).
        n_checkpoints: the number of checkpoints asked for (``checkpoint_times`` may hold fewer:
            they are distinct integers).
        wall_s: wall time of the runs (a read-back: the sum over its cells): their setup
            (resets, seeding), the kernels' compile or cache load, and their loop.
        compile_s: of ``wall_s``, the seconds spent compiling kernels or loading them from the
            cache (:func:`privenv._jit.kernel_seconds`; a first run on a machine compiles).
        loop_s: of ``wall_s``, the seconds of the runs' loop alone (no setup, compile or load);
            ``None`` when unknown (a store's read-back keeps ``wall_s`` only).
        versions: package versions of the computation.
        worker: ``host:pid`` of the process that computed a sweep cell (``None`` otherwise).
    """

    env: str
    agent: str
    privacy: PrivacyGuarantee
    horizon: int
    seed: int
    runs: np.ndarray
    env_kwargs: dict[str, Any]
    agent_kwargs: dict[str, Any]
    checkpoint_times: np.ndarray
    regret_curve: np.ndarray
    steps: np.ndarray
    episode: dict[str, np.ndarray] = field(default_factory=dict)
    agent_params: dict[str, Any] = field(default_factory=dict)
    n_checkpoints: int = DEFAULT_CHECKPOINTS
    wall_s: float = 0.0
    compile_s: float = 0.0
    loop_s: float | None = None
    versions: dict[str, str] = field(default_factory=dict)
    worker: str | None = None

    # -- views ------------------------------------------------------------------------------------

    @property
    def n_runs(self) -> int:
        return int(len(self.runs))

    @property
    def first_run(self) -> int:
        return int(self.runs[0]) if len(self.runs) else 0

    @property
    def regret(self) -> np.ndarray:
        """Final cumulative pseudo-regret of each run."""
        return self.regret_curve[:, -1]

    @property
    def ns_per_run_step(self) -> float:
        """The loop's wall time per (run, round) in nanoseconds, ``loop_s`` (no setup, kernel
        compile or load) over the steps taken (``wall_s`` when ``loop_s`` is unknown)."""
        total = float(np.sum(self.steps))
        seconds = self.wall_s if self.loop_s is None else self.loop_s
        return 1e9 * seconds / total if total else float("nan")

    @property
    def cell(self) -> Cell:
        """The cell of these runs (consecutive runs, one batch or one sweep cell)."""
        return Cell(self.env, self.env_kwargs, self.agent, self.agent_kwargs, self.horizon,
                    self.seed, self.first_run, self.n_runs, self.n_checkpoints)

    @property
    def config_id(self) -> str:
        """The id of the configuration and seed (the store's key), whatever the runs."""
        return self.cell.config_id

    def summary(self) -> dict[str, Any]:
        """The JSON object printed by ``privenv run --format json``."""

        def mean_sd(x: np.ndarray | None) -> tuple[float | None, float | None]:
            if x is None or len(x) == 0:
                return None, None
            x = np.asarray(x, dtype=float)
            return float(x.mean()), sample_sd(x)

        stopping = self.episode.get("stopping_time")
        correct = self.episode.get("correct")
        is_bai = stopping is not None
        r_mean, r_sd = (None, None) if is_bai else mean_sd(self.regret)
        s_mean, s_sd = mean_sd(stopping)
        return {
            "env": self.env,
            "agent": self.agent,
            "privacy": str(self.privacy),
            **{k: _json_number(v) for k, v in self.privacy.as_dict().items() if k != "privacy"},
            "runs": self.n_runs,
            "horizon": self.horizon,
            "seed": self.seed,
            "first_run": self.first_run,
            "regret_mean": r_mean,
            "regret_sd": r_sd,
            "stopping_time_mean": s_mean,
            "stopping_time_sd": s_sd,
            "error_rate": None if correct is None else float(1.0 - np.mean(correct)),
            "wall_s": self.wall_s,
            "compile_s": self.compile_s,
            "ns_per_run_step": self.ns_per_run_step,
            "env_kwargs": self.env_kwargs,
            "agent_kwargs": self.agent_kwargs,
            "versions": self.versions,
        }

    def rows(self) -> list[dict[str, Any]]:
        """One dict per run: run index, steps, final regret and the episode values."""
        out = []
        for i, run in enumerate(np.asarray(self.runs).tolist()):
            row = {"run": run, "steps": int(self.steps[i]), "regret": float(self.regret[i])}
            row.update({k: np.asarray(v)[i].item() for k, v in self.episode.items()})
            out.append(row)
        return out

    def to_frame(self) -> Any:
        """One row per run (pandas): configuration, privacy, seed, final regret, episode keys."""
        import pandas as pd

        rows = {
            "env": self.env,
            "agent": self.agent,
            **self.privacy.as_dict(),
            "seed": self.seed,
            "run": np.asarray(self.runs),
            "horizon": self.horizon,
            "steps": self.steps,
            "regret": self.regret,
            **{k: v for k, v in self.episode.items()},
            "wall_s": self.wall_s,
        }
        return pd.DataFrame(rows)

    def curve_frame(self) -> Any:
        """Long table of the regret curve: (run, t, regret)."""
        import pandas as pd

        n, m = self.regret_curve.shape
        return pd.DataFrame(
            {
                "run": np.repeat(np.asarray(self.runs), m),
                "t": np.tile(self.checkpoint_times, n),
                "regret": self.regret_curve.ravel(),
            }
        )


def bai_outcomes(recommendation: Any, correct: Any) -> tuple[np.ndarray, np.ndarray]:
    """Which best-arm runs stopped and which of those were wrong, as two boolean arrays.

    A run that reached its sample budget recommends nothing (−1): it did not stop, and it is not
    a wrong answer. A wrong run stopped and recommended another arm than the best.
    """
    stopped = np.asarray(recommendation) >= 0
    return stopped, stopped & ~np.asarray(correct, dtype=bool)


def _json_number(v: Any) -> Any:
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v


__all__ = ["DEFAULT_CHECKPOINTS", "Cell", "RunResults", "bai_outcomes", "canonical_json",
           "content_hash", "kwargs_text", "utc_now", "versions"]
