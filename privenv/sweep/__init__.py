"""Sweeps: a grid of configurations split into cells, run on a backend, stored by cell.

Guide: docs/guides/sweeps.md.

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
    n_checkpoints = 40          # regret checkpoints per run (default 40; at most the horizon)

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

from privenv.results import Cell, RunResults
from privenv.sweep.config import Configuration, SweepConfig, SweepConfigError, load_config
from privenv.sweep.run import (
    ProgressCallback,
    SweepReport,
    describe_result,
    resolved_params,
    run_cell,
    run_sweep,
)

__all__ = ["Cell", "Configuration", "ProgressCallback", "RunResults", "SweepConfig",
           "SweepConfigError", "SweepReport", "describe_result", "load_config",
           "resolved_params", "run_cell", "run_sweep"]
