"""Sweeps (SPEC §6): a grid of configurations split into cells, run on a backend, stored by cell.

A **configuration** is one agent (with its parameters) on one environment instance (with its
parameters) at one horizon. A sweep runs ``runs`` runs of every configuration with the integer
``seed``, split into **cells** of ``chunk`` runs: cell (configuration, first_run, n_runs) simulates
runs ``first_run … first_run + n_runs − 1``. Run *i* of seed *s* owns ``SeedSequence(s,
spawn_key=(i,))`` (:mod:`privenv.seeding`), so a configuration's per-run numbers are the same
whatever the chunk size, the backend, the number of workers or the order cells finish in.
Every configuration of a sweep sees the same reward streams (common random numbers).

Config file (TOML; also JSON, or YAML when PyYAML is installed) — ``examples/demo-sweep.toml``
explains each field::

    name = "demo"               # label (optional)
    seed = 0                    # integer seed of every configuration (default 0)
    runs = 20                   # runs per configuration (required)
    chunk = 10                  # runs per cell (default: runs, one cell per configuration)
    horizon = 20000             # default horizon of every instance (default: the env's own)
    n_checkpoints = 40          # log-spaced regret checkpoints per run (default 40)

    [[instances]]               # one or more environment instances
    env = "HuberBandit-v0"      # registered id (required)
    params = { inlier = "student-t" }      # constructor parameters (optional)
    grid = { alpha = [0.02, 0.1] }         # each a list: one instance per combination (optional)
    # horizon = 50000           # this instance's horizon (optional)

    [[agents]]                  # one or more agents
    name = "prae-c"             # registered name (required)
    grid = { epsilon = [0.5, 1.0] }
    # params = { ... }          # fixed constructor parameters

Configurations are every instance × every agent (instance-major, grids in the order written).
In Python, :meth:`SweepConfig.from_mapping` takes the same structure as a dict, and
``SweepConfig(configurations=[Configuration(...), ...], runs=...)`` lists configurations
explicitly (the paper reproductions do this).

Validation happens before anything runs (:meth:`SweepConfig.validate`): structure, types and
names, then every environment instance and every agent is built once in the parent process, so a
bad ε or an unknown parameter is reported as a :class:`SweepConfigError` naming the field.

:func:`run_sweep` writes each finished cell to a :class:`privenv.store.Store` in the parent
process, one transaction per cell; ``resume=True`` skips cells already done (failed cells are
retried). A cell that raises is stored as ``failed`` with its error and traceback, and the rest of
the sweep completes.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import os
import shlex
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privenv._memory import check_fits, check_runs_fit
from privenv._stats import sample_sd
from privenv._validation import check_int
from privenv.backends import Backend, get_backend
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.store import Store, canonical_json

DEFAULT_CHECKPOINTS = 40
#: memory of one cell in the sweep's process (its Cell, id and entries in the sweep's lists and
#: sets: about 320 B measured with tracemalloc; × 3 for the copies a run holds)
CELL_BYTES = 1000

#: the fields of a config file: top level, ``[[instances]]`` and ``[[agents]]``
TOP_FIELDS = ("name", "seed", "runs", "chunk", "horizon", "n_checkpoints", "instances", "agents")
INSTANCE_FIELDS = ("env", "horizon", "params", "grid")
AGENT_FIELDS = ("name", "params", "grid")


class SweepConfigError(ValueError):
    """A sweep config is invalid; the message names the field and what is allowed."""


def _hash(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:20]


def _plain(value: Any, where: str) -> Any:
    """``value`` as plain JSON-able Python (numpy scalars/arrays converted, tuples as lists)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v, where) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v, where) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise SweepConfigError(
        f"{where}: parameter values must be numbers, strings, booleans, lists or tables "
        f"(what a config file can hold), got {type(value).__name__} {value!r}"
    )


def _kwargs_text(kwargs: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


# -- configurations and cells ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Configuration:
    """One agent on one environment instance.

    Args:
        env: registered env id.
        env_kwargs: the env's constructor parameters (not ``horizon``).
        agent: registered agent name (:mod:`privenv.agents`).
        agent_kwargs: the agent's constructor parameters (problem parameters such as ``K`` are
            filled from the env, see :func:`privenv.agents.make`).
        horizon: rounds per run (``None``: the env's default; resolved by
            :meth:`SweepConfig.validate`).
        origin: where it came from in the config file, ``"instances[i]… × agents[j]…"``
            (error messages only).
    """

    env: str
    env_kwargs: Mapping[str, Any]
    agent: str
    agent_kwargs: Mapping[str, Any]
    horizon: int | None = None
    origin: str = field(default="", compare=False)

    def key(self) -> str:
        """Canonical JSON of what the configuration's numbers depend on (equality, hashing)."""
        return canonical_json([self.env, self.env_kwargs, self.agent, self.agent_kwargs,
                               self.horizon])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def describe(self) -> str:
        env = f"{self.env}({_kwargs_text(self.env_kwargs)})"
        agent = f"{self.agent}({_kwargs_text(self.agent_kwargs)})"
        return f"{agent} on {env}" + (f", T={self.horizon}" if self.horizon else "")


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
        return _hash(self.to_dict())

    @property
    def config_id(self) -> str:
        return _hash(self.config_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cell) and self.cell_id == other.cell_id

    def __hash__(self) -> int:
        return hash(self.cell_id)

    def describe(self) -> str:
        last = self.first_run + self.n_runs - 1
        return (f"{self.agent}({_kwargs_text(self.agent_kwargs)}) on "
                f"{self.env}({_kwargs_text(self.env_kwargs)}) T={self.horizon} seed={self.seed} "
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
class CellResult:
    """What :func:`run_cell` returns: per-run results of one cell, plus provenance."""

    cell: Cell
    checkpoint_times: np.ndarray
    regret_curve: np.ndarray  # (n_runs, len(checkpoint_times)), cumulative pseudo-regret
    steps: np.ndarray  # rounds played by each run
    episode: dict[str, np.ndarray]  # per-run stopping_time, recommendation, correct (if any)
    privacy: PrivacyGuarantee
    agent_params: dict[str, Any]  # the agent's constructor parameters as resolved
    versions: dict[str, str]
    wall_s: float
    worker: str  # host:pid of the process that ran it

    @property
    def runs(self) -> np.ndarray:
        return np.arange(self.cell.first_run, self.cell.first_run + self.cell.n_runs)

    @property
    def regret(self) -> np.ndarray:
        return self.regret_curve[:, -1]

    @property
    def ns_per_run_step(self) -> float:
        total = float(np.sum(self.steps))
        return 1e9 * self.wall_s / total if total else float("nan")

    def rows(self) -> list[dict[str, Any]]:
        """One dict per run: run index, steps, final regret and the episode values."""
        out = []
        for i, run in enumerate(self.runs.tolist()):
            row = {"run": run, "steps": int(self.steps[i]), "regret": float(self.regret[i])}
            row.update({k: np.asarray(v)[i].item() for k, v in self.episode.items()})
            out.append(row)
        return out


def resolved_params(agent: Any) -> dict[str, Any]:
    """An agent's constructor parameters as resolved (defaults filled from the env), where they
    are plain numbers, strings or booleans."""
    out = {}
    for name in inspect.signature(type(agent).__init__).parameters:
        value = getattr(agent, name, None)
        if isinstance(value, np.generic):
            value = value.item()
        if name not in ("self", "n_runs") and isinstance(value, (bool, int, float, str)):
            out[name] = value
    return out


def run_cell(cell: Cell) -> CellResult:
    """Simulate one cell with :func:`privenv.simulation.simulate` (a pure top-level function, so
    any worker process can run it: it depends on nothing but ``cell``)."""
    import privenv  # noqa: F401  (registers the env ids in a fresh worker)
    from privenv.agents import env_kwargs_for, make
    from privenv.simulation import make_vector_env, simulate

    env_kwargs = env_kwargs_for(cell.agent, cell.env_kwargs)
    env = make_vector_env(cell.env, cell.n_runs, cell.horizon, **env_kwargs)
    try:
        agent = make(cell.agent, env, cell.n_runs, **cell.agent_kwargs)
        res = simulate(agent, env, n_runs=cell.n_runs, seed=cell.seed,
                       first_run=cell.first_run, n_checkpoints=cell.n_checkpoints)
    finally:
        env.close()
    return CellResult(
        cell=cell,
        checkpoint_times=res.checkpoint_times,
        regret_curve=res.regret_curve,
        steps=res.steps,
        episode=res.episode,
        privacy=res.privacy,
        agent_params=resolved_params(agent),
        versions=res.versions,
        wall_s=res.wall_s,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )


# -- the config -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepConfig:
    """A sweep: configurations × chunks of runs.

    Args:
        configurations: the configurations (no two equal).
        runs: runs per configuration.
        chunk: runs per cell (``None``: ``runs``).
        seed: the integer seed of every configuration.
        n_checkpoints: log-spaced regret checkpoints per run.
        name: a label recorded in the store.
        source: the config file's text (recorded in the store).
    """

    configurations: tuple[Configuration, ...]
    runs: int
    chunk: int | None = None
    seed: int = 0
    n_checkpoints: int = DEFAULT_CHECKPOINTS
    name: str = "sweep"
    source: str | None = field(default=None, compare=False)
    validated: bool = field(default=False, compare=False)

    # -- building --------------------------------------------------------------------------------

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str | None = None) -> SweepConfig:
        """Parse the config-file structure (a dict); checks structure, types and names."""
        if not isinstance(data, Mapping):
            raise SweepConfigError(f"a sweep config must be a table of fields, got "
                                   f"{type(data).__name__}")
        _check_fields(data, TOP_FIELDS, "the top level")
        runs = _int_field(data, "runs", None, low=1, what="runs per configuration")
        chunk = _int_field(data, "chunk", runs, low=1, what="runs per cell")
        seed = _int_field(data, "seed", 0, low=0, what="the integer seed")
        n_checkpoints = _int_field(data, "n_checkpoints", DEFAULT_CHECKPOINTS, low=1,
                                   what="regret checkpoints per run")
        horizon = _int_field(data, "horizon", None, low=1, what="rounds per run",
                             required=False)
        name = data.get("name", "sweep")
        if not isinstance(name, str):
            raise SweepConfigError(f"name must be a string, got {name!r}")
        instances = _list_of_tables(data, "instances", "[[instances]] tables, each with env = ID")
        agents = _list_of_tables(data, "agents", "[[agents]] tables, each with name = NAME")

        envs = []
        for i, inst in enumerate(instances):
            where = f"instances[{i}]"
            _check_fields(inst, INSTANCE_FIELDS, where)
            env = _registered(inst, "env", _env_ids(), where, "env")
            h = _int_field(inst, "horizon", horizon, low=1, what="rounds per run",
                           required=False, where=where)
            for kw, label in _expand(inst, where):
                if "horizon" in kw:
                    raise SweepConfigError(f"{where}.{label}: set the horizon with {where}.horizon "
                                           "or the top-level horizon, not as a parameter")
                _check_env_params(env, kw, where)
                envs.append((env, kw, h, f"{where}{_grid_label(kw, inst)}"))

        agent_specs = []
        for j, spec in enumerate(agents):
            where = f"agents[{j}]"
            _check_fields(spec, AGENT_FIELDS, where)
            name_ = _registered(spec, "name", _agent_names(), where, "agent")
            for kw, _ in _expand(spec, where):
                agent_specs.append((name_, kw, f"{where}{_grid_label(kw, spec)}"))

        configurations = tuple(
            Configuration(env, env_kw, agent, agent_kw, h, origin=f"{e_where} × {a_where}")
            for env, env_kw, h, e_where in envs
            for agent, agent_kw, a_where in agent_specs
        )
        return cls(configurations, runs=runs, chunk=chunk, seed=seed,
                   n_checkpoints=n_checkpoints, name=name, source=source)

    # -- validation ------------------------------------------------------------------------------

    def validate(self) -> SweepConfig:
        """Check everything and build every env instance and agent once, here, before anything
        runs; returns the config with every horizon resolved (idempotent)."""
        if self.validated:
            return self
        if not self.configurations:
            raise SweepConfigError("a sweep needs at least one configuration (instance × agent)")
        runs = _checked("runs", self.runs, low=1)
        chunk = runs if self.chunk is None else _checked("chunk", self.chunk, low=1)
        seed = _checked("seed", self.seed, low=0)
        n_checkpoints = _checked("n_checkpoints", self.n_checkpoints, low=1)
        chunks = -(-runs // chunk)
        n_cells = len(self.configurations) * chunks
        try:  # the cell list is built in this process: refuse one that memory cannot hold
            check_fits(f"{n_cells} cells ({len(self.configurations)} configurations × {chunks} "
                       f"chunks of {min(chunk, runs)} runs)", n_cells * CELL_BYTES,
                       "use a larger chunk (runs per cell) or fewer runs")
        except ValueError as e:
            raise SweepConfigError(str(e)) from e

        from privenv.agents import env_kwargs_for, make
        from privenv.simulation import make_vector_env

        envs: dict[str, Any] = {}
        resolved = []
        seen: dict[str, Configuration] = {}
        try:
            for k, c in enumerate(self.configurations):
                where = c.origin or f"configurations[{k}]"
                env_where = where.split(" × ")[0]  # an env error is the instance's
                if c.env not in _env_ids():
                    raise SweepConfigError(f"{where}: unknown env {c.env!r}; known envs: "
                                           f"{', '.join(_env_ids())}")
                if c.agent not in _agent_names():
                    raise SweepConfigError(f"{where}: unknown agent {c.agent!r}; known agents: "
                                           f"{', '.join(_agent_names())}")
                env_kw = _plain(dict(c.env_kwargs), where)
                agent_kw = _plain(dict(c.agent_kwargs), where)
                if "horizon" in env_kw:
                    raise SweepConfigError(f"{where}: give the horizon as the configuration's "
                                           "horizon, not as an env parameter")
                _check_env_params(c.env, env_kw, where)
                horizon = None if c.horizon is None else _checked(f"{where}: horizon",
                                                                 c.horizon, low=1)
                try:  # the env as the agent runs on it (its env requirements, as run_cell)
                    built_kw = env_kwargs_for(c.agent, env_kw)
                except ValueError as e:
                    raise SweepConfigError(f"{where}: {e}") from e
                key = canonical_json([c.env, built_kw, horizon])
                if key not in envs:
                    try:
                        envs[key] = make_vector_env(c.env, 1, horizon, **built_kw)
                    except (ValueError, TypeError) as e:
                        raise SweepConfigError(f"{env_where}: env {c.env}"
                                               f"({_kwargs_text(built_kw)}): {e}") from e
                venv = envs[key]
                horizon = int(venv.unwrapped.horizon)
                try:
                    make(c.agent, venv, 1, **agent_kw)
                    _check_cell_memory(c.env, built_kw, c.agent, agent_kw, horizon,
                                       min(chunk, runs), n_checkpoints)
                except (ValueError, TypeError) as e:
                    raise SweepConfigError(
                        f"{where}: agent {c.agent}({_kwargs_text(agent_kw)}) on "
                        f"{c.env}({_kwargs_text(env_kw)}): {e}") from e
                conf = Configuration(c.env, env_kw, c.agent, agent_kw, horizon, c.origin)
                ident = conf.key()
                if ident in seen:
                    raise SweepConfigError(
                        f"{where}: the configuration {conf.describe()} is listed twice "
                        f"(also as {seen[ident].origin or 'an earlier configuration'})")
                seen[ident] = conf
                resolved.append(conf)
        finally:
            for venv in envs.values():
                venv.close()
        return replace(self, configurations=tuple(resolved), runs=runs, chunk=chunk, seed=seed,
                       n_checkpoints=n_checkpoints, validated=True)

    # -- expansion -------------------------------------------------------------------------------

    def cells(self) -> list[Cell]:
        """Every cell: configurations in order, each split into chunks of ``chunk`` runs."""
        cfg = self.validate()
        chunk = cfg.chunk or cfg.runs
        return [
            Cell(c.env, c.env_kwargs, c.agent, c.agent_kwargs, c.horizon, cfg.seed, first,
                 min(chunk, cfg.runs - first), cfg.n_checkpoints)
            for c in cfg.configurations
            for first in range(0, cfg.runs, chunk)
        ]

    def config_ids(self) -> list[str]:
        """The ``config_id`` of each configuration, in order (whatever the chunking)."""
        cfg = self.validate()
        chunk = cfg.chunk or cfg.runs
        return [cell.config_id for cell in cfg.cells()[:: -(-cfg.runs // chunk)]]

    def to_dict(self) -> dict[str, Any]:
        """The canonical expanded config (what :attr:`config_hash` hashes, plus the name)."""
        cfg = self.validate()
        return {
            "name": cfg.name, "runs": cfg.runs, "chunk": cfg.chunk, "seed": cfg.seed,
            "n_checkpoints": cfg.n_checkpoints,
            "configurations": [
                {"env": c.env, "env_kwargs": c.env_kwargs, "agent": c.agent,
                 "agent_kwargs": c.agent_kwargs, "horizon": c.horizon}
                for c in cfg.configurations
            ],
        }

    @property
    def config_hash(self) -> str:
        """Hash of the expanded config: what the numbers depend on (not the name, not the order
        of the configurations)."""
        d = self.to_dict()
        d.pop("name")
        d["configurations"] = sorted(d["configurations"], key=canonical_json)
        return _hash(d)


def _check_cell_memory(env: str, env_kwargs: Mapping[str, Any], agent: str,
                       agent_kwargs: Mapping[str, Any], horizon: int, n_runs: int,
                       n_checkpoints: int) -> None:
    """Refuse a cell of ``n_runs`` runs that a worker's memory cannot hold (measured for large
    cells, :func:`privenv._memory.check_runs_fit`)."""
    from privenv.agents import make
    from privenv.simulation import make_vector_env

    def build(k: int) -> Any:
        venv = make_vector_env(env, k, horizon, **env_kwargs)
        venv.reset(seed=0)
        built = make(agent, venv, k, **agent_kwargs)
        built.reset(seed=0)
        return venv, built

    check_runs_fit(n_runs, n_checkpoints, build, what=f"a cell of {n_runs} runs",
                   advice="use a smaller chunk (runs per cell)")


def _checked(name: str, value: Any, low: int) -> int:
    try:
        return check_int(name, value, low=low)
    except ValueError as e:
        raise SweepConfigError(str(e)) from e


def _check_fields(table: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise SweepConfigError(f"unknown field {unknown[0]!r} in {where}; allowed fields: "
                               f"{', '.join(allowed)}")


def _int_field(table: Mapping[str, Any], key: str, default: Any, *, low: int, what: str,
               required: bool = True, where: str = "") -> Any:
    name = f"{where}.{key}" if where else key
    if key not in table:
        if default is None and required:
            raise SweepConfigError(f"missing required field {name!r} ({what}, an integer ≥ {low})")
        return default
    return _checked(name, table[key], low=low)


def _list_of_tables(data: Mapping[str, Any], key: str, what: str) -> list[Mapping[str, Any]]:
    if key not in data:
        raise SweepConfigError(f"missing required field {key!r} (one or more {what})")
    value = data[key]
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(v, Mapping) for v in value)):
        raise SweepConfigError(f"{key} must be a non-empty list of tables ({what}), got {value!r}")
    return list(value)


def _expand(spec: Mapping[str, Any], where: str) -> Iterable[tuple[dict[str, Any], str]]:
    """The parameter dicts of one instance/agent spec: ``params`` × the product of ``grid``."""
    params = spec.get("params", {})
    grid = spec.get("grid", {})
    for key, value in (("params", params), ("grid", grid)):
        if not isinstance(value, Mapping):
            raise SweepConfigError(f"{where}.{key} must be a table of parameter = value, got "
                                   f"{value!r}")
    both = [k for k in grid if k in params]
    if both:
        raise SweepConfigError(f"{where}: parameter {both[0]!r} is in both params and grid")
    for k, values in grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise SweepConfigError(
                f"{where}.grid.{k} must be a non-empty list of values (one per grid point), got "
                f"{values!r}; put a single value in {where}.params")
    params = _plain(params, where)
    keys = list(grid)
    for combo in itertools.product(*(grid[k] for k in keys)):
        kw = dict(params)
        kw.update(zip(keys, _plain(list(combo), where), strict=True))
        yield kw, "params" if not keys else "grid"


def _grid_label(kw: Mapping[str, Any], spec: Mapping[str, Any]) -> str:
    grid = spec.get("grid", {})
    if not grid:
        return ""
    return "[" + ", ".join(f"{k}={kw[k]!r}" for k in grid) + "]"


def _registered(table: Mapping[str, Any], key: str, known: Sequence[str], where: str,
                what: str) -> str:
    """``table[key]``, which must name a registered env or agent (``what``)."""
    value = table.get(key)
    if value is None:
        raise SweepConfigError(f"{where}: missing required field {key!r} (a registered {what}; "
                               f"known {what}s: {', '.join(known)})")
    if value not in known:
        raise SweepConfigError(f"{where}.{key}: unknown {what} {value!r}; known {what}s: "
                               f"{', '.join(known)}")
    return value


def _env_ids() -> list[str]:
    import privenv  # noqa: F401  (registers the ids)
    from privenv.envs import ENV_IDS

    return list(ENV_IDS)


def _agent_names() -> list[str]:
    from privenv.agents import names

    return names()


def _check_env_params(env_id: str, kwargs: Mapping[str, Any], where: str) -> None:
    import importlib

    from privenv.envs import ENV_IDS

    module, _, cls = ENV_IDS[env_id][0].partition(":")
    params = inspect.signature(getattr(importlib.import_module(module), cls).__init__).parameters
    allowed = [k for k, p in params.items()
               if k not in ("self", "render_mode", "horizon")
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    for key in kwargs:
        if key not in allowed:
            raise SweepConfigError(f"{where}: env {env_id!r} has no parameter {key!r}; "
                                   f"parameters: {allowed}")


def load_config(path: str | os.PathLike[str]) -> SweepConfig:
    """Read a sweep config file (``.toml``; ``.json``; ``.yaml``/``.yml`` with PyYAML)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise SweepConfigError(f"cannot read sweep config {str(path)!r}: {e.strerror}") from e
    suffix = path.suffix.lower()
    if suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepConfigError(f"{str(path)!r} is not valid TOML: {e}") from e
    elif suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise SweepConfigError(f"{str(path)!r} is not valid JSON: {e}") from e
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as e:
            raise SweepConfigError("YAML sweep configs need PyYAML (pip install pyyaml); or "
                                   "write the config in TOML") from e
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise SweepConfigError(f"{str(path)!r} is not valid YAML: {e}") from e
    else:
        raise SweepConfigError(f"sweep config {str(path)!r} must end in .toml, .json, .yaml or "
                               ".yml")
    return SweepConfig.from_mapping(data, source=text)


# -- running --------------------------------------------------------------------------------------


#: a progress callback: (cells finished, cells to run, cell, CellResult or exception, seconds)
ProgressCallback = Callable[[int, int, Cell, Any, float], None]


def describe_result(cell: Cell, value: Any) -> str:
    """One line about a finished cell (the progress lines)."""
    if isinstance(value, BaseException):
        return f"{cell.describe()}: FAILED {type(value).__name__}: {value}"
    episode = value.episode
    if "stopping_time" in episode:  # best-arm identification: no regret, a stopping time
        tau = np.asarray(episode["stopping_time"], dtype=float)
        text = f"{cell.describe()}: stopping time {tau.mean():.6g} ± {sample_sd(tau):.3g}"
        if "correct" in episode:
            text += f", error rate {1.0 - np.mean(episode['correct']):.3g}"
    else:
        r = value.regret
        text = f"{cell.describe()}: final regret {r.mean():.6g} ± {sample_sd(r):.3g}"
    return text + f" [{value.wall_s:.1f} s, {value.ns_per_run_step:.0f} ns/run-step]"



class _Progress:
    """Progress on stderr (never stdout): a tqdm bar with ETA, or one line per finished cell."""

    def __init__(self, mode: str | bool | ProgressCallback, total: int, skipped: int) -> None:
        self.total, self.done, self.failed = total, 0, 0
        self.start = time.perf_counter()
        self.callback: ProgressCallback | None = None
        self.bar = None
        if callable(mode):
            self.callback, mode = mode, "callback"
        elif mode is True:
            mode = "auto"
        elif mode is False or mode is None:
            mode = "none"
        if mode not in ("auto", "bar", "lines", "none", "callback"):
            raise ValueError(f"progress must be one of ['auto', 'bar', 'lines', 'none'], a bool "
                             f"or a callable, got {mode!r}")
        if mode in ("auto", "bar"):
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            tty = getattr(sys.stderr, "isatty", lambda: False)()
            if tqdm is not None and (mode == "bar" or tty):
                self.bar = tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True,
                                desc="sweep", smoothing=0.1)
            else:
                mode = "lines"
        self.mode = mode
        if skipped and mode != "none" and mode != "callback":
            print(f"resuming: {skipped} cells already done, {total} to run", file=sys.stderr,
                  flush=True)

    def update(self, cell: Cell, value: Any) -> None:
        self.done += 1
        self.failed += isinstance(value, BaseException)
        elapsed = time.perf_counter() - self.start
        if self.callback is not None:
            self.callback(self.done, self.total, cell, value, elapsed)
        elif self.bar is not None:
            self.bar.update(1)
            if self.failed:
                self.bar.set_postfix(failed=self.failed)
        elif self.mode == "lines":
            eta = elapsed / self.done * (self.total - self.done)
            width = len(str(self.total))
            print(f"[{self.done:>{width}}/{self.total}] {describe_result(cell, value)}  "
                  f"({elapsed:.1f} s elapsed, ETA {eta:.0f} s)", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@dataclass
class SweepReport:
    """What :func:`run_sweep` did."""

    store: Path
    config_hash: str
    backend: str
    cells: int  # cells of the config
    skipped: int  # already done in the store (resume)
    done: int  # finished in this call
    failed: list[tuple[Cell, str]]  # (cell, error) of the cells that raised in this call
    wall_s: float

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        return (f"{self.cells} cells: {self.done} finished now, {len(self.failed)} failed, "
                f"{self.skipped} already done; backend {self.backend}; wall time "
                f"{self.wall_s:.1f} s; store {self.store}")


def run_sweep(
    config: SweepConfig | Mapping[str, Any] | str | os.PathLike[str],
    store: Store | str | os.PathLike[str],
    *,
    backend: Backend | str = "local",
    workers: int | None = None,
    address: str | None = None,
    resume: bool = False,
    progress: str | bool | ProgressCallback = "auto",
    fn: Callable[[Cell], CellResult] = run_cell,
) -> SweepReport:
    """Run a sweep, writing each finished cell to ``store``.

    Args:
        config: a :class:`SweepConfig`, the config-file structure as a dict, or a file path.
        store: a :class:`privenv.store.Store` or the path of its SQLite file (created).
        backend: ``"local"`` (default) or ``"dask"``, or a :class:`privenv.backends.Backend`
            (then ``workers``/``address`` are the backend's own).
        workers: worker processes (local default: one per CPU; 1 runs in-process).
        address: the distributed engine's scheduler address.
        resume: continue a store that already holds cells of this config (or of a config this
            one extends): done cells are skipped, failed ones retried. Without it, a non-empty
            store is refused.
        progress: ``"auto"`` (a tqdm bar on a terminal, else one line per cell), ``"bar"``,
            ``"lines"``, ``"none"``, a bool, or a callback; always on stderr.
        fn: the cell function (a picklable top-level function; default :func:`run_cell`).

    Returns:
        A :class:`SweepReport`; cells that raised are stored as failed and listed in it.
    """
    if isinstance(config, SweepConfig):
        cfg = config
    elif isinstance(config, Mapping):
        cfg = SweepConfig.from_mapping(config)
    else:
        cfg = load_config(config)
    cfg = cfg.validate()
    cells = cfg.cells()
    config_hash = cfg.config_hash

    own_backend = isinstance(backend, str)
    be = get_backend(backend, workers, address) if own_backend else backend
    own_store = not isinstance(store, Store)
    created = own_store and not Path(store).exists()
    try:
        st = Store(store) if own_store else store
    except BaseException:
        if own_backend:
            be.close()
        raise
    start = time.perf_counter()
    failed: list[tuple[Cell, str]] = []
    try:
        try:
            sweep_id = st.begin_sweep(config_hash=config_hash, config=cfg.to_dict(),
                                      cell_ids=[c.cell_id for c in cells], name=cfg.name,
                                      source=cfg.source, backend=be.describe(), resume=resume)
        except BaseException:
            if created:  # refused before anything was recorded: leave no empty store behind
                st.close()
                for suffix in ("", "-journal"):
                    Path(f"{st.path}{suffix}").unlink(missing_ok=True)
            raise
        done_ids = st.done_cell_ids()
        todo = [c for c in cells if c.cell_id not in done_ids]
        bar = _Progress(progress, len(todo), len(cells) - len(todo))
        finished = be.imap_unordered(fn, todo)
        try:
            for i, value in finished:
                cell = todo[i]
                if isinstance(value, BaseException):
                    error = f"{type(value).__name__}: {value}"
                    st.record_failure(cell, error, _traceback_text(value), config_hash, sweep_id)
                    failed.append((cell, error))
                else:
                    if value.cell != cell:
                        raise RuntimeError(f"the cell function returned the result of "
                                           f"{value.cell.describe()} for {cell.describe()}")
                    st.record_result(value, config_hash, sweep_id)
                bar.update(cell, value)
        finally:
            close = getattr(finished, "close", None)
            if close is not None:  # a generator: stop it now (cancels cells not yet started)
                close()
            bar.close()
    finally:
        if own_backend:
            be.close()
        if own_store:
            st.close()
    return SweepReport(
        store=st.path, config_hash=config_hash, backend=be.describe(), cells=len(cells),
        skipped=len(cells) - len(todo), done=len(todo) - len(failed), failed=failed,
        wall_s=time.perf_counter() - start,
    )


def _traceback_text(exc: BaseException) -> str:
    """The exception's traceback, including a worker process's (chained as its cause)."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


__all__ = ["Cell", "CellResult", "Configuration", "ProgressCallback", "SweepConfig",
           "SweepConfigError", "SweepReport", "describe_result", "load_config",
           "resolved_params", "run_cell", "run_sweep"]
