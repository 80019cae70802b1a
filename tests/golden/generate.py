"""Golden outputs: run-by-run results of every scalar-state agent for fixed seeds.

``python tests/golden/generate.py [--only PREFIX] [--workers N] [--resume]`` writes
``bai.json.gz``, ``mab.json.gz`` and ``releases.json.gz`` next to this file (``--resume``: only
the cells a file does not hold yet). The stored files were produced by the batched numpy
implementation that the compiled kernels replaced (privenv 0.1.0, commit 41d421f); the kernels
must reproduce them run by run (``tests/test_golden.py``). Re-running this script regenerates
them from the current implementation — do that only for a deliberate, explained change of
numbers.

Cells:

* best-arm identification: every best-arm agent on μ1 and μ4, δ = 0.01, thresholds ``"theory"``
  and ``"empirical"`` (where the agent has the choice), ε ∈ {0.1, 1, 10} for the private ones;
  the stopping time, recommendation and correctness of every run (and the adaptivity rounds of
  the doubling agents). A run that has not stopped within the golden budget (``BUDGET`` pulls) is
  recorded as truncated, so that no cell costs hours (CTB-TT and the Gaussian-LDP TTUCB at
  ε = 0.1 on μ1 need 10⁷–10⁸ pulls). Cells run cheapest first and the file is rewritten after
  each: the stored ``bai.json.gz`` holds all 65 cells, produced by the numpy implementation
  (commit 41d421f; the last 8, the ε = 0.1 cells of CTB-TT and the Gaussian-LDP TTUCB, with
  ``--resume``, 2–6 min each);
* multi-armed: every regret agent on the six panels of huber-fig1 at T = 10⁴, the final regret and
  the 40-checkpoint regret curve of every run; plus variants that exercise the other branches
  (random arm order, Remark 5.1's first phases);
* releases: every private agent (each family it plays) on a small instance, runs
  ``RELEASE_FIRST_RUN`` … ``RELEASE_FIRST_RUN + RELEASE_RUNS − 1`` (a slice that does not start at
  run 0), with, besides the regret curve or stopping times, the agent's *released noisy
  statistics* after the run (:data:`RELEASES`: the private estimates its decisions are
  post-processing of). The actions and regret of a short run often do not move when a noise
  scale is wrong; these do. Recorded from the compiled kernels (the implementation the other
  files check against the numpy one), when these cells were added.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 20261201
BAI_RUNS = 10
BUDGET = 500_000
DELTA = 0.01
EPSILONS = (0.1, 1.0, 10.0)
MAB_RUNS = 20
MAB_HORIZON = 10_000

BAI_AGENTS = {  # name -> (private, has a threshold choice)
    "ttucb": (False, True),
    "ttucb-dpa": (False, True),
    "ctb-tt": (True, True),
    "gaussian-ldp-ttucb": (True, True),
    "adap-tt": (True, True),
    "adap-tt-star": (True, True),
    "dp-se": (True, False),
}
PANELS = (  # huber-fig1 (a-f): inlier, alpha, epsilon
    ("a", "student-t", 0.05, 0.2),
    ("b", "student-t", 0.05, 0.5),
    ("c", "student-t", 0.05, 1.0),
    ("d", "pareto", 0.02, 0.5),
    ("e", "pareto", 0.05, 0.5),
    ("f", "pareto", 0.10, 0.5),
)
MAB_PRIVATE = ("prae-r", "prae-c", "dprse", "dp-se")
MAB_BASELINES = ("ucb1", "eps-greedy", "robust-ucb")
RELEASE_FIRST_RUN = 5
#: release families whose agents compute with numpy's linear algebra (einsum, matmul, eigh) rather
#: than a compiled kernel. numpy picks its SIMD loops by CPU at run time (X86_V3 = AVX2,
#: X86_V4 = AVX-512, ...) and OpenBLAS its kernels, and they sum in different orders: measured
#: between an AVX-512 and an AVX2 machine, the linear cells' floats differed by up to 4·10⁻⁷
#: relative, and the federated cells' synchronisation times (a float threshold) moved, so their
#: runs diverged. These cells run in a subprocess on numpy's baseline loops and one OpenBLAS
#: kernel (:func:`portable_environment`): the same bits on every x86-64 CPU.
PORTABLE_FAMILIES = ("linear", "federated")
#: the OpenBLAS kernel of the portable cells: Nehalem (SSE4.2), numpy's own x86-64-v2 baseline
OPENBLAS_CORE = "Nehalem"
RELEASE_RUNS = 3
ENV_IDS = {"mab": "HuberBandit-v0", "bai": "BestArmIdentification-v0",
           "bernoulli": "BernoulliBandit-v0",
           "linear": "LinearContextualBandit-v0", "federated": "FederatedLinearBandit-v0"}

#: agent → the attributes holding its released noisy statistics after a run (the central agents'
#: private estimates; the local-DP learners' statistics of the privatized rewards or messages;
#: the federated server's private sums). ``"psi"``: LPLR's released bin counts ψ̂_B = ĉ_B/n of
#: the layer being built (:func:`_lplr_counts`).
RELEASES: dict[str, tuple[str, ...]] = {
    "prae-r": ("estimates",), "prae-c": ("estimates",), "dprse": ("estimates",),
    "dp-se": ("estimates",),
    "adap-tt": ("mu_tilde",), "adap-tt-star": ("mu_tilde",), "daf-wrapper": ("mu_tilde",),
    "ctb-tt": ("mu_tilde",), "gaussian-ldp-ttucb": ("mu_tilde",),
    "central-dp-linucb": ("G", "u"), "ldp-linucb": ("V", "u"),
    "input-perturbation-ols": ("V_inv", "b"), "lplr-regcb": ("psi",),
    "fed-linucb": ("W_tilde", "U_tilde"), "feducb-adaptive": ("W_tilde", "U_tilde"),
    "super-agent": ("W_tilde", "U_tilde"),
    # the Bernoulli bandit's zoo (docs/guides/zoo.md)
    "dp-ucb": ("private_sum",), "dp-ucb-hybrid": ("private_sum",), "adap-ucb": ("mu_tilde",),
    "adap-klucb": ("mu_tilde",), "dp-klucb": ("mu_tilde",), "dp-imed": ("mu_tilde",),
    "lazy-dp-ts": ("mu_tilde",), "ldp-ucb-l": ("sums",), "ldp-ucb-b": ("sums",),
    "ldp-se": ("sums",),
    # Jourdan & Azize 2025's DP Top Two (agents/dp_top_two.py): μ̃ and the private sums S̃
    "dp-top-two": ("mu_tilde", "sums"),
}


def bai_cells() -> list[dict[str, Any]]:
    cells = []
    for instance in ("mu1", "mu4"):
        for name, (private, thresholds) in BAI_AGENTS.items():
            for threshold in (("theory", "empirical") if thresholds else (None,)):
                for eps in (EPSILONS if private else (None,)):
                    kw: dict[str, Any] = {"delta": DELTA}
                    if threshold:
                        kw["threshold"] = threshold
                    if eps is not None:
                        kw["epsilon"] = eps
                    cells.append({"family": "bai", "agent": name, "env_kwargs":
                                  {"instance": instance}, "agent_kwargs": kw,
                                  "runs": BAI_RUNS, "horizon": BUDGET})
    # other branches: random arm order (DP-SE), permuted instances, a Gaussian law
    cells.append({"family": "bai", "agent": "dp-se", "env_kwargs": {"instance": "mu4"},
                  "agent_kwargs": {"delta": DELTA, "epsilon": 1.0, "arm_order": "random"},
                  "runs": BAI_RUNS, "horizon": BUDGET})
    cells.append({"family": "bai", "agent": "ttucb", "env_kwargs":
                  {"instance": "mu4", "permute_arms": True},
                  "agent_kwargs": {"delta": DELTA}, "runs": BAI_RUNS, "horizon": BUDGET})
    cells.append({"family": "bai", "agent": "adap-tt", "env_kwargs":
                  {"means": [0.6, 0.4, 0.2], "law": "gaussian", "sigma": 0.5},
                  "agent_kwargs": {"delta": DELTA, "epsilon": 1.0, "bonus": "literal"},
                  "runs": BAI_RUNS, "horizon": BUDGET})
    return cells


def mab_cells() -> list[dict[str, Any]]:
    cells = []
    for key, inlier, alpha, eps in PANELS:
        env_kwargs = {"inlier": inlier, "alpha": alpha}
        for name in MAB_PRIVATE:
            cells.append({"family": "mab", "panel": key, "agent": name, "env_kwargs": env_kwargs,
                          "agent_kwargs": {"epsilon": eps}, "runs": MAB_RUNS,
                          "horizon": MAB_HORIZON})
        if key in ("a", "d", "e", "f"):  # the baselines do not depend on ε (a = b = c)
            for name in MAB_BASELINES:
                cells.append({"family": "mab", "panel": key, "agent": name,
                              "env_kwargs": env_kwargs, "agent_kwargs": {}, "runs": MAB_RUNS,
                              "horizon": MAB_HORIZON})
    variants = [
        ("prae-c", {"epsilon": 0.5, "arm_order": "random"}, {"alpha": 0.1, "inlier": "pareto"}),
        ("prae-r", {"epsilon": 1.0, "first_phase": "round-random"}, {"alpha": 0.02}),
        ("prae-r", {"epsilon": 1.0, "first_phase": "greedy"}, {"alpha": 0.02}),
        ("prae-c", {"epsilon": 1.0, "first_phase": "greedy"}, {"alpha": 0.0}),
        ("prae-c", {"epsilon": 1.0, "first_phase": "round-random"}, {"alpha": 0.1}),
        ("dp-se", {"epsilon": 1.0, "arm_order": "random"}, {"alpha": 0.05}),
        ("dprse", {"epsilon": 5.0, "arm_order": "random"}, {"contamination": "adversarial"}),
        ("eps-greedy", {"explore": 0.3}, {"K": 3, "inlier": "gaussian"}),
        ("ucb1", {}, {"K": 3, "alpha": 0.0, "inlier": "gaussian"}),
        ("robust-ucb", {}, {"alpha": 0.1, "contamination": "adversarial"}),
    ]
    for name, akw, ekw in variants:
        cells.append({"family": "mab", "panel": "variant", "agent": name, "env_kwargs": ekw,
                      "agent_kwargs": akw, "runs": MAB_RUNS, "horizon": 100_000
                      if name == "robust-ucb" else MAB_HORIZON})
    return cells


def release_cells() -> list[dict[str, Any]]:
    """One cell per private agent and family it plays (:data:`RELEASES`), small and quick."""
    specs: list[tuple[str, str, dict[str, Any], dict[str, Any], int]] = [
        ("prae-r", "mab", {"alpha": 0.05}, {"epsilon": 0.5}, MAB_HORIZON),
        ("prae-c", "mab", {"alpha": 0.05}, {"epsilon": 0.5}, MAB_HORIZON),
        ("prae-c", "mab", {"alpha": 0.0}, {"epsilon": 1.0, "first_phase": "greedy"},
         MAB_HORIZON),
        ("dprse", "mab", {"alpha": 0.05}, {"epsilon": 0.5}, MAB_HORIZON),
        ("dp-se", "mab", {"alpha": 0.05}, {"epsilon": 0.5}, MAB_HORIZON),
        ("dp-se", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        ("adap-tt", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        ("adap-tt-star", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        ("daf-wrapper", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        # the challenger on the pulls N: the default until 2026-12-06 (its numbers from then)
        ("dp-top-two", "bai", {"instance": "mu4"},
         {"epsilon": 1.0, "delta": DELTA, "challenger_weights": "pulls"}, 20_000),
        ("dp-top-two", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        ("ctb-tt", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA}, 20_000),
        ("gaussian-ldp-ttucb", "bai", {"instance": "mu4"}, {"epsilon": 1.0, "delta": DELTA},
         20_000),
        ("central-dp-linucb", "linear", {}, {"epsilon": 1.0}, 500),
        ("ldp-linucb", "linear", {}, {"epsilon": 1.0}, 500),
        ("input-perturbation-ols", "linear", {}, {"epsilon": 1.0}, 500),
        # (n₀ = 4: phases short enough that layer 1's counts are released within the run)
        ("lplr-regcb", "linear", {"d": 2, "A": 3}, {"epsilon": 1.0, "n0": 4}, 3_000),
        # the LDP protocol (until 2026-12-06 these two cells set ε with the default protocol
        # "none", which ignored it: they recorded non-private sums; agents.make now refuses that)
        ("fed-linucb", "federated", {"M": 10, "K": 10, "noise": "bounded"},
         {"protocol": "ldp", "epsilon": 1.0}, 200),
        ("feducb-adaptive", "federated", {"M": 10, "K": 10, "noise": "bounded"},
         {"protocol": "ldp", "epsilon": 1.0}, 200),
        ("super-agent", "federated", {"M": 10, "K": 10, "noise": "bounded"}, {"epsilon": 1.0},
         200),
        *((name, "bernoulli", {"instance": "mu4"}, {"epsilon": 1.0}, 5_000)
          for name in ("dp-ucb", "dp-ucb-hybrid", "adap-ucb", "adap-klucb", "dp-klucb",
                       "dp-imed", "lazy-dp-ts", "ldp-ucb-l", "ldp-ucb-b", "ldp-se")),
    ]
    return [{"family": "releases", "release_family": family, "agent": name,
             "env_kwargs": env_kwargs, "agent_kwargs": agent_kwargs, "runs": RELEASE_RUNS,
             "first_run": RELEASE_FIRST_RUN, "horizon": horizon}
            for name, family, env_kwargs, agent_kwargs, horizon in specs]


def _hex(array: Any) -> dict[str, Any]:
    a = np.asarray(array, dtype=float)
    return {"shape": list(a.shape), "hex": [float(v).hex() for v in a.ravel()]}


def _lplr_counts(agent: Any) -> dict[str, Any]:
    """LPLR's released bin counts ψ̂_B of the layer being built (LPLR-PCR, Algorithm 4 line 1),
    as the server holds them between its update and CI phases."""
    return _hex(agent.oracle.server.pcr["psi"])


def run_release_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """A release cell's outputs (what the file stores, and what the tests recompute): steps,
    the regret curve or the stopping times, and the released statistics."""
    from privenv.agents import env_kwargs_for, make
    from privenv.simulation import make_vector_env, simulate

    name, family = cell["agent"], cell["release_family"]
    venv = make_vector_env(ENV_IDS[family], cell["runs"], cell["horizon"],
                           **env_kwargs_for(name, cell["env_kwargs"]))
    agent = make(name, venv, cell["runs"], **cell["agent_kwargs"])
    start = time.perf_counter()
    res = simulate(agent, venv, n_runs=cell["runs"], seed=SEED, first_run=cell["first_run"])
    out = dict(cell)
    out["seed"] = SEED
    out["wall_s"] = round(time.perf_counter() - start, 2)
    out["steps"] = res.steps.tolist()
    if family == "bai":
        for key in ("stopping_time", "recommendation", "correct"):
            out[key] = np.asarray(res.episode[key]).tolist()
    else:
        out["regret_curve"] = [[float(v).hex() for v in row] for row in res.regret_curve]
    out["releases"] = {attr: _lplr_counts(agent) if attr == "psi"
                       else _hex(getattr(agent, attr)) for attr in RELEASES[name]}
    venv.close()
    return out


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    from privenv.agents import env_kwargs_for
    from privenv.simulation import simulate

    env_id = "BestArmIdentification-v0" if cell["family"] == "bai" else "HuberBandit-v0"
    start = time.perf_counter()
    res = simulate(cell["agent"], env_id, n_runs=cell["runs"], horizon=cell["horizon"],
                   seed=SEED, env_kwargs=env_kwargs_for(cell["agent"], cell["env_kwargs"]),
                   agent_kwargs=cell["agent_kwargs"])
    out = dict(cell)
    out["seed"] = SEED
    out["wall_s"] = round(time.perf_counter() - start, 2)
    if cell["family"] == "bai":
        for key in ("stopping_time", "recommendation", "correct", "adaptivity_rounds"):
            if key in res.episode:
                out[key] = res.episode[key].tolist()
        out["steps"] = res.steps.tolist()
    else:
        out["checkpoints"] = res.checkpoint_times.tolist()
        out["regret_curve"] = [[float(v).hex() for v in row] for row in res.regret_curve]
        out["steps"] = res.steps.tolist()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=("bai", "mab", "releases"), default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resume", action="store_true",
                        help="keep the cells the file holds and run only the others")
    args = parser.parse_args(argv)
    families = [args.only] if args.only else ["mab", "bai", "releases"]
    for family in families:
        cells = {"bai": bai_cells, "mab": mab_cells, "releases": release_cells}[family]()
        # cheapest first, and the file rewritten after every cell: an interrupted run keeps what
        # it has done (the tests compare the cells a file holds; the generator's order is kept)
        order = sorted(range(len(cells)), key=lambda i: _cost_hint(cells[i]))
        results: list[Any] = [None] * len(cells)
        path = HERE / f"{family}.json.gz"
        if args.resume and path.exists():
            with gzip.open(path, "rt", encoding="utf-8") as f:
                held = {_key(c): c for c in json.load(f)["cells"]}
            results = [held.get(_key(c)) for c in cells]
            order = [i for i in order if results[i] is None]
        with ProcessPoolExecutor(args.workers) as pool:
            run = run_release_cell_portably if family == "releases" else run_cell
            futures = {i: pool.submit(run, cells[i]) for i in order}
            for i in order:
                results[i] = futures[i].result()
                r = results[i]
                print(f"{family} {r['agent']} {r['env_kwargs']} {r['agent_kwargs']}: "
                      f"{r['wall_s']} s", flush=True)
                done = [c for c in results if c is not None]
                with gzip.open(path, "wt", encoding="utf-8") as f:
                    json.dump({"seed": SEED, "cells": done}, f, separators=(",", ":"))
        print(f"wrote {path}")
    return 0


def portable_environment() -> dict[str, str]:
    """This process's environment with numpy's run-time SIMD dispatch off (its baseline loops
    only) and one OpenBLAS kernel, single-threaded (read when numpy is imported)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(__cpu_dispatch__),
            "OPENBLAS_CORETYPE": OPENBLAS_CORE, "OPENBLAS_NUM_THREADS": "1"}


def run_release_cells_portably(cells: list[dict[str, Any]],
                               halve: tuple[str, str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`run_release_cell` of each cell in a subprocess on :func:`portable_environment`;
    ``halve`` = (module, class, attribute): that noise hook set to 0.5 first (the mutation of
    tests/test_golden.py)."""
    done = subprocess.run([sys.executable, str(HERE / "generate.py"), "--portable-worker"],
                          input=json.dumps({"cells": cells, "halve": halve}), text=True,
                          capture_output=True, env=portable_environment(), check=False)
    if done.returncode:
        raise RuntimeError(f"the portable release cells failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def run_release_cell_portably(cell: dict[str, Any]) -> dict[str, Any]:
    """One release cell, in the portable environment where its family needs it."""
    if cell["release_family"] in PORTABLE_FAMILIES:
        return run_release_cells_portably([cell])[0]
    return run_release_cell(cell)


def _portable_worker() -> int:
    job = json.load(sys.stdin)
    if job["halve"]:
        module, name, attribute = job["halve"]
        setattr(getattr(importlib.import_module(module), name), attribute, 0.5)
    print(json.dumps([run_release_cell(cell) for cell in job["cells"]]))
    return 0


def _key(cell: dict[str, Any]) -> str:
    """What identifies a cell (its definition, not its results)."""
    return json.dumps([cell["family"], cell.get("panel"), cell.get("release_family"),
                       cell["agent"], cell["env_kwargs"], cell["agent_kwargs"], cell["runs"],
                       cell.get("first_run", 0), cell["horizon"]], sort_keys=True)


def _cost_hint(cell: dict[str, Any]) -> float:
    eps = cell["agent_kwargs"].get("epsilon", 10.0)
    return (1.0 / eps) ** 2 if cell["agent"] in ("ctb-tt", "gaussian-ldp-ttucb") else 1.0 / eps


if __name__ == "__main__":
    sys.exit(_portable_worker() if sys.argv[1:] == ["--portable-worker"] else main())
