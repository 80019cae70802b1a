"""Sweep configs: parsing a config file and validating it before anything runs.

A **configuration** is one agent (with its parameters) on one environment instance (with its
parameters) at one horizon; a :class:`SweepConfig` lists them (from a config file or in Python)
with the runs per configuration, the chunk of runs per cell and the seed, and expands them into
:class:`~privenv.results.Cell` values. See :mod:`privenv.sweep` for the file format.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privenv._memory import check_fits, check_runs_fit, check_sizes
from privenv._validation import check_int
from privenv.results import DEFAULT_CHECKPOINTS, Cell, canonical_json, content_hash, kwargs_text

#: memory of one cell in the sweep's process (its Cell, id and entries in the sweep's lists and
#: sets: about 320 B measured with tracemalloc; × 3 for the copies a run holds)
CELL_BYTES = 1000

#: the fields of a config file (top level, ``[[instances]]`` and ``[[agents]]``)
TOP_FIELDS = ("name", "seed", "runs", "chunk", "horizon", "n_checkpoints", "instances", "agents")
INSTANCE_FIELDS = ("env", "horizon", "params", "grid")
AGENT_FIELDS = ("name", "params", "grid")


class SweepConfigError(ValueError):
    """A sweep config is invalid; the message names the field and what is allowed."""


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
        run_bytes: a lower bound of one run's memory (set by :meth:`SweepConfig.validate`,
            :func:`privenv.simulation.estimate_run_bytes`; 0 before).
    """

    env: str
    env_kwargs: Mapping[str, Any]
    agent: str
    agent_kwargs: Mapping[str, Any]
    horizon: int | None = None
    origin: str = field(default="", compare=False)
    run_bytes: int = field(default=0, compare=False)

    def key(self) -> str:
        """Canonical JSON of what the configuration's numbers depend on (equality, hashing)."""
        return canonical_json([self.env, self.env_kwargs, self.agent, self.agent_kwargs,
                               self.horizon])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def describe(self) -> str:
        env = f"{self.env}({kwargs_text(self.env_kwargs)})"
        agent = f"{self.agent}({kwargs_text(self.agent_kwargs)})"
        return f"{agent} on {env}" + (f", T={self.horizon}" if self.horizon else "")


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
        from privenv.simulation import estimate_run_bytes, make_vector_env

        envs: dict[str, Any] = {}
        resolved = []
        seen: dict[str, Configuration] = {}
        try:
            for k, c in enumerate(self.configurations):
                where = c.origin or f"configurations[{k}]"
                env_where = where.split(" × ")[0]  # an env error is the instance's
                if c.env not in _env_ids():
                    from privenv.rl.ids import unknown_env

                    raise SweepConfigError(f"{where}: {unknown_env(c.env)}")
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
                    try:  # (the sizes first: nothing is built from a size out of range)
                        check_sizes({**env_kw, "horizon": horizon})
                        estimate_run_bytes(c.env, None, n_checkpoints, horizon, built_kw)
                        envs[key] = make_vector_env(c.env, 1, horizon, **built_kw)
                    except (ValueError, TypeError) as e:
                        raise SweepConfigError(f"{env_where}: env {c.env}"
                                               f"({kwargs_text(built_kw)}): {e}") from e
                venv = envs[key]
                horizon = int(venv.unwrapped.horizon)
                try:
                    per_run, sizes = estimate_run_bytes(c.env, c.agent, n_checkpoints, horizon,
                                                        built_kw)
                    check_runs_fit(min(chunk, runs), per_run, what=f"a cell of "
                                   f"{min(chunk, runs)} runs",
                                   advice="use a smaller chunk (runs per cell)", sizes=sizes)
                    make(c.agent, venv, 1, **agent_kw)
                except (ValueError, TypeError) as e:
                    raise SweepConfigError(
                        f"{where}: agent {c.agent}({kwargs_text(agent_kw)}) on "
                        f"{c.env}({kwargs_text(env_kw)}): {e}") from e
                conf = Configuration(c.env, env_kw, c.agent, agent_kw, horizon, c.origin,
                                     per_run)
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
        cells = []
        for c in cfg.configurations:
            assert c.horizon is not None  # validate() resolves every horizon
            cells += [Cell(c.env, c.env_kwargs, c.agent, c.agent_kwargs, c.horizon, cfg.seed,
                           first, min(chunk, cfg.runs - first), cfg.n_checkpoints)
                      for first in range(0, cfg.runs, chunk)]
        return cells

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
        """Hash of the expanded config — what the numbers depend on (not the name, not the order
        of the configurations)."""
        d = self.to_dict()
        d.pop("name")
        d["configurations"] = sorted(d["configurations"], key=canonical_json)
        return content_hash(d)


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
        if what == "env":
            from privenv.rl.ids import unknown_env

            raise SweepConfigError(f"{where}.{key}: {unknown_env(value)}")
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
    from privenv.envs import check_env_kwargs

    try:
        check_env_kwargs(env_id, kwargs)
    except ValueError as e:
        raise SweepConfigError(f"{where}: {e}") from None


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


__all__ = ["AGENT_FIELDS", "CELL_BYTES", "Configuration", "INSTANCE_FIELDS", "SweepConfig",
           "SweepConfigError", "TOP_FIELDS", "load_config"]
