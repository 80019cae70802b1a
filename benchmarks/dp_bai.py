"""Benchmark of the DP Top Two (``dp-top-two``, agents/dp_top_two.py). Run:
``python benchmarks/dp_bai.py``.

On ``BestArmIdentification-v0`` (instance ``--instance``, default μ4) with δ = 0.01 at ``--epsilon``
(default 1), prints, measured in one run on this machine, in ns per run-step (one pull of one
run; a stopped run costs nothing):

* the fast path: ``simulate`` with ``--runs`` runs (default 100), each played to its own stop
  inside compiled code (:mod:`privenv.driver`), and the part of it spent in the compiled driver;
* a **plain compiled loop of the same algorithm** written in this file (:func:`reference_run`):
  one run as a numba loop with its own Bernoulli and Laplace draws, no buffers, no dispatch,
  calling the same arithmetic (:func:`~privenv.agents.dp_top_two.dp_transport`,
  :func:`~privenv.agents.dp_top_two.dp_glr_threshold`); the ratio privenv / reference
  (target ≤ 1.5).

The machine is shared and noisy: compare the ratios, read absolute times as context.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numba
import numpy as np
from bai import _beta_tracking, _laplace, _LoopTimer
from common import machine_line, settle

from privenv.agents.dp_top_two import dp_glr_threshold, dp_transport
from privenv.problems.bai import instance_means
from privenv.simulation import simulate

ENV_ID = "BestArmIdentification-v0"
DELTA, RATIO = 0.01, 2.0


@numba.njit(cache=True)
def reference_run(mu: np.ndarray, seed: int, budget: int, epsilon: float) -> tuple[int, int]:
    """(τ, recommendation) of one run of the DP Top Two: geometric batches of ratio 2 (each
    batch's sum + Lap(1/ε), summed), EB leader, TCI challenger, β-tracking, the GLR stopping rule
    on W^ε with the threshold c(k_â, k_b), memoised between releases."""
    np.random.seed(seed)  # noqa: NPY002  (numba's own generator: the cheapest draws in a loop)
    K = mu.size
    counts = np.zeros(K)
    lead = np.zeros(K)
    lead_pulls = np.zeros(K)
    private_sum = np.zeros(K)
    phase_sum = np.zeros(K)
    est = np.zeros(K)
    w = np.ones(K)
    next_end = np.zeros(K)
    k = np.zeros(K, np.int64)
    stat = np.zeros(K)
    thr = np.zeros(K)
    dirty = True
    for t in range(budget):
        if t >= K:
            a_hat = np.argmax(est)
            if dirty:
                for b in range(K):
                    if b != a_hat:
                        stat[b] = dp_transport(est[a_hat], est[b], w[a_hat], w[b], epsilon)
                        thr[b] = dp_glr_threshold(k[a_hat], k[b], K, DELTA)
                dirty = False
            stop = True
            for b in range(K):
                if b != a_hat and stat[b] < thr[b]:
                    stop = False
                    break
            if stop:
                return t, a_hat
            leader = a_hat
            challenger, low = 0, np.inf
            for b in range(K):
                if b != leader:
                    cost = dp_transport(est[leader], est[b], counts[leader], counts[b],
                                        epsilon) + math.log(counts[b])
                    if cost < low:
                        challenger, low = b, cost
            arm = _beta_tracking(lead, lead_pulls, leader, challenger)
        else:
            arm = t
        r = 1.0 if np.random.random() < mu[arm] else 0.0  # noqa: NPY002
        counts[arm] += 1
        phase_sum[arm] += r
        if counts[arm] >= next_end[arm]:
            private_sum[arm] += phase_sum[arm] + _laplace(np.random.random()) / epsilon  # noqa: NPY002
            phase_sum[arm] = 0.0
            est[arm] = private_sum[arm] / counts[arm]
            w[arm] = counts[arm]
            k[arm] += 1
            next_end[arm] = max(counts[arm] + 1, math.ceil(RATIO * counts[arm]))
            dirty = True
    return budget, -1


@numba.njit(cache=True)
def _reference_runs(mu: np.ndarray, runs: int, budget: int, epsilon: float) -> np.ndarray:
    tau = np.empty(runs, np.int64)
    for i in range(runs):
        tau[i] = reference_run(mu, i + 1, budget, epsilon)[0]
    return tau


def reference(mu: np.ndarray, runs: int, epsilon: float) -> dict[str, float]:
    _reference_runs(mu, 1, 100, epsilon)  # compile (or load)
    settle()
    start = time.perf_counter()
    tau = _reference_runs(mu, runs, 10**9, epsilon)
    wall = time.perf_counter() - start
    return {"tau_mean": float(tau.mean()), "ns": 1e9 * wall / tau.sum()}


def fast(instance: str, runs: int, epsilon: float, seed: int = 0) -> dict[str, float]:
    kw = {"epsilon": epsilon, "delta": DELTA, "ratio": RATIO}
    env_kwargs = {"instance": instance}
    simulate("dp-top-two", ENV_ID, n_runs=1, horizon=50, seed=seed, env_kwargs=env_kwargs,
             agent_kwargs=kw)  # load (or compile) before timing
    settle()
    with _LoopTimer() as loop:
        res = simulate("dp-top-two", ENV_ID, n_runs=runs, seed=seed, horizon=10**9,
                       env_kwargs=env_kwargs, agent_kwargs=kw)
    tau = res.episode["stopping_time"]
    return {"tau_mean": float(tau.mean()), "errors": int((~res.episode["correct"]).sum()),
            "ns": 1e9 * res.wall_s / tau.sum(), "loop_ns": 1e9 * loop.seconds / tau.sum()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--instance", default="mu4")
    parser.add_argument("--repeat", type=int, default=3,
                        help="timings of each, alternated; the fastest is reported (3)")
    args = parser.parse_args(argv)
    mu = instance_means(args.instance)
    print(machine_line())
    print(f"\n{ENV_ID} {args.instance}, δ = {DELTA}, ε = {args.epsilon}, η = {RATIO}; "
          f"{args.runs} runs each; ns per run-step, the fastest of {args.repeat}")
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        f = fast(args.instance, args.runs, args.epsilon)
        ref = reference(mu, args.runs, args.epsilon)
        for key, value in (("fast", f["ns"]), ("loop", f["loop_ns"]), ("ref", ref["ns"])):
            best[key] = min(best.get(key, math.inf), value)
    header = (f"{'agent':<11} {'mean τ':>9} {'err':>4} {'fast ns':>8} {'loop ns':>8} "
              f"{'reference ns':>13} {'fast/ref':>9} {'loop/ref':>9}")
    print(header)
    print("-" * len(header))
    print(f"{'dp-top-two':<11} {f['tau_mean']:>9.0f} {f['errors']:>4} {best['fast']:>8.0f} "
          f"{best['loop']:>8.0f} {best['ref']:>13.0f} {best['fast'] / best['ref']:>8.2f}× "
          f"{best['loop'] / best['ref']:>8.2f}×  (reference mean τ {ref['tau_mean']:.0f})")
    print("target: fast/ref ≤ 1.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
