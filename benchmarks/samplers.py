"""Cost per draw of the exact samplers against the float ones, and of constant work against
CKS20's variable-work loops. Run: ``python benchmarks/samplers.py`` (``--draws N``, default 10⁶).

Prints, measured in one run (median of 3 repetitions each, after a warm-up that compiles):

1. numpy-facing batch draws on a seeded Generator: float Laplace (``mechanisms.laplace``), float
   Gaussian (``mechanisms.gaussian``, numpy's ziggurat) and its inverse-CDF form
   (``gaussian_from_uniform``), against the exact discrete Laplace and Gaussian
   (``exact.discrete_laplace`` / ``discrete_gaussian``, constant work) at the scales the exact
   mechanisms use for ε = 1 on rewards in [0, 1] (t = 1024 grid units; σ² = 3 697 716 grid
   units² at δ = 10⁻²), and Mironov's snapping (``exact.snap``);
2. the same inside a compiled (numba) loop, the way the agents' kernels consume noise: the
   float samplers read a block of pre-drawn uniforms / standard normals and transform them, the
   exact ones read a block of raw 64-bit words — CKS20's loops as written (variable work,
   ``privenv.privacy.variable_work``: the sampler before constant work, now the side-channel
   audits' mutant) and the constant-work kernels (``privenv.privacy.constant_work``, each draw its
   budget of words: 167 and 467 here); the block's numpy fill is included in the time;
3. end to end, private agents with ``sampler="float"`` and ``sampler="exact"`` on the same seeds
   (``simulate``, the compiled fast path; ``--runs``, default 100): AdaP-TT on μ1 at ε = 1 (a
   Laplace release per phase), DP-SE (BAI) on μ4 at ε = 1 (one per epoch), and the Gaussian-LDP
   TTUCB on μ4 at ε = 5 (a randomizer release per pull: the worst case); the time per run-step
   (median of 3, alternating the two samplers) and the ratio;
4. the same for the batched numpy agents whose exact releases are vector draws
   (``exact.run_discrete``), at a fixed horizon: central-DP LinUCB (both trees), LDP-LinUCB and
   input-perturbation OLS (their users' messages), and FedLinUCB with silo-level LDP (the silos'
   trees); ``--skip-bai`` runs this part alone;

5. the timing side channel (``--timing``, alone with ``--skip-draws --skip-bai``): per-draw time
   (the CPU's cycle counter around each draw, inside compiled code) of the exact Laplace
   mechanism (ε = 1, inputs 0 and 1 on the grid 2⁻¹⁰, t = 1024 grid units) and of the exact
   Gaussian at (1, 10⁻²), the two inputs' draws interleaved so that the machine's load falls on
   both alike, for CKS20's variable-work loops and for constant work: given the release (bins of
   a quarter of the noise scale), the median time under each input, and the ε lower bound of the
   joint events {release ∈ b, time > τ_b} (τ_b chosen on the first half of the draws, evaluated
   on the second; Clopper–Pearson, 10⁻⁶) against the declared ε = 1 — the timing counterpart
   of ``privenv audit --targets side-channel-*``, measured here because a timing is no test;

and the ratio exact/float of each pair. The machine is shared and noisy: compare the ratios.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable

import numba
import numpy as np
from common import machine_line
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from privenv import seeding
from privenv.privacy import exact as ex
from privenv.privacy import mechanisms as mech
from privenv.privacy import variable_work as vw
from privenv.privacy.side_channel import discrete_draw

SCALE = 1024  # the exact Laplace's scale in grid units at ε = 1, range [0, 1] (grid 2⁻¹⁰)
SIGMA2 = 3_697_716  # the exact Gaussian's σ² in grid units² at (1, 1e-2), sensitivity 1
REPEATS = 3


def timed(fn: Callable[[], object]) -> float:
    """Median wall time of ``fn`` over REPEATS calls, after one warm-up call."""
    fn()
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[REPEATS // 2]


@numba.njit(cache=True)
def _float_laplace_loop(u: np.ndarray, b: float) -> float:
    s = 0.0
    for i in range(u.shape[0]):
        x = u[i]
        t = x + 2.0**-54 if x < 0.5 else (1.0 - x) - 2.0**-54
        s += b * math.log(2.0 * t) if x < 0.5 else -b * math.log(2.0 * t)
    return s


@numba.njit(cache=True)
def _float_gaussian_loop(z: np.ndarray, sigma: float) -> float:
    s = 0.0
    for i in range(z.shape[0]):
        s += sigma * z[i]
    return s


@numba.njit(cache=True)
def _exact_laplace_loop(words: np.ndarray, n: int, t: int, budget: int) -> int:
    """Constant work (``budget`` words per draw); budget 0: CKS20's variable-work loops."""
    pos, s = 0, 0
    for _ in range(n):
        if budget:
            v, pos = ex.discrete_laplace_kernel(words, pos, t, 1, budget)
        else:
            v, pos = vw.discrete_laplace_kernel(words, pos, t, 1)
        if pos < 0:
            return -1
        s += v
    return s


@numba.njit(cache=True)
def _exact_gaussian_loop(words: np.ndarray, n: int, num: int, den: int, t: int,
                         budget: int) -> int:
    pos, s = 0, 0
    for _ in range(n):
        if budget:
            v, pos = ex.discrete_gaussian_kernel(words, pos, num, den, t, budget)
        else:
            v, pos = vw.discrete_gaussian_kernel(words, pos, num, den, t)
        if pos < 0:
            return -1
        s += v
    return s


@numba.njit(cache=True)
def _snapping_loop(words: np.ndarray, n: int, lam: float, bound: float, lam_pow2: float
                   ) -> float:
    pos, s = 0, 0.0
    for _ in range(n):
        v, pos = ex.snapping_kernel(words, pos, 0.5, lam, bound, lam_pow2)
        if pos < 0:
            return -1.0
        s += v
    return s


def words_needed(kernel_loop: Callable[[np.ndarray], object], n: int, per_draw: float) -> int:
    """A word block large enough for n draws (checked: the loops return −1 if it ran out)."""
    size = int(per_draw * n * 1.2) + 1000
    while kernel_loop(seeding.random_words(np.random.default_rng(0), size)) == -1:
        size *= 2
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10**6, help="draws per measurement")
    parser.add_argument("--runs", type=int, default=100, help="runs per end-to-end measurement")
    parser.add_argument("--skip-draws", action="store_true",
                        help="only the end-to-end measurements")
    parser.add_argument("--timing", type=int, default=0, metavar="N",
                        help="also measure the timing side channel on N draws per input")
    parser.add_argument("--skip-bai", action="store_true",
                        help="with --skip-draws: only the linear and federated agents")
    args = parser.parse_args()
    n = args.draws
    print(machine_line(), f"numba {numba.__version__}")
    if not args.skip_draws:
        print(f"{n} draws per measurement, median of {REPEATS}; ns per draw\n")

    sigma = math.sqrt(SIGMA2) * 2.0**-9
    snap = ex.SnappingParameters.calibrate(1.0, 1.0, 17.0)
    rng = np.random.default_rng

    def numpy_row() -> list[tuple[str, str, float, float]]:
        lap_f = timed(lambda: mech.laplace(1.0, rng(1), n))
        lap_e = timed(lambda: ex.discrete_laplace(SCALE, rng(1), n))
        gau_f = timed(lambda: mech.gaussian(sigma, rng(1), n))
        gau_u = timed(lambda: mech.gaussian_from_uniform(rng(1).random(n), sigma))
        gau_e = timed(lambda: ex.discrete_gaussian(SIGMA2, rng(1), n))
        snp = timed(lambda: ex.snap(np.full(n, 0.5), snap, rng(1)))
        return [("Laplace", "float mechanisms.laplace", lap_f, lap_e),
                ("Gaussian", "float mechanisms.gaussian (ziggurat)", gau_f, gau_e),
                ("Gaussian", "float gaussian_from_uniform (inverse CDF)", gau_u, gau_e),
                ("snapping", "float mechanisms.laplace", lap_f, snp)]

    def numba_rows() -> list[tuple[str, str, float, float, float]]:
        p = ex.DiscreteGaussianParameters(SIGMA2, 1)
        b_lap, b_gau = ex.DiscreteLaplaceParameters(ex.Grid(0), SCALE, 1, 1).budget, p.budget
        w_var_lap = words_needed(lambda w: _exact_laplace_loop(w, n, SCALE, 0), n, 9.0)
        w_var_gau = words_needed(lambda w: _exact_gaussian_loop(w, n, p.var_num, p.var_den,
                                                                p.t, 0), n, 13.0)
        w_snp = words_needed(lambda w: _snapping_loop(w, n, snap.lam, snap.bound,
                                                      snap.lam_pow2), n, 2.0)
        lap_f = timed(lambda: _float_laplace_loop(rng(1).random(n), 1.0))
        lap_v = timed(lambda: _exact_laplace_loop(seeding.random_words(rng(1), w_var_lap), n,
                                                  SCALE, 0))
        lap_c = timed(lambda: _exact_laplace_loop(seeding.random_words(rng(1), n * b_lap), n,
                                                  SCALE, b_lap))
        gau_f = timed(lambda: _float_gaussian_loop(rng(1).standard_normal(n), sigma))
        gau_v = timed(lambda: _exact_gaussian_loop(seeding.random_words(rng(1), w_var_gau), n,
                                                   p.var_num, p.var_den, p.t, 0))
        gau_c = timed(lambda: _exact_gaussian_loop(seeding.random_words(rng(1), n * b_gau), n,
                                                   p.var_num, p.var_den, p.t, b_gau))
        snp = timed(lambda: _snapping_loop(seeding.random_words(rng(1), w_snp), n, snap.lam,
                                           snap.bound, snap.lam_pow2))
        return [(f"Laplace ({b_lap} words)", "inverse CDF of a uniform block", lap_f, lap_v,
                 lap_c),
                (f"Gaussian ({b_gau} words)", "σ·z of a standard-normal block", gau_f, gau_v,
                 gau_c),
                ("snapping (2 words)", "inverse CDF of a uniform block", lap_f, snp, snp)]

    if not args.skip_draws:
        print("numpy-facing batch draws (exact: constant work)")
        print(f"  {'exact sampler':<10} {'float baseline':<44} {'float':>8} {'exact':>8} "
              f"{'exact/float':>11}")
        for name, base, f, e in numpy_row():
            print(f"  {name:<10} {base:<44} {1e9 * f / n:8.1f} {1e9 * e / n:8.1f} "
                  f"{e / f:10.1f}×")
        print("\ninside a numba loop (block fill included): float, CKS20's variable-work loops, "
              "constant work")
        print(f"  {'exact sampler':<22} {'float baseline':<32} {'float':>8} {'variable':>9} "
              f"{'constant':>9} {'const/var':>9} {'const/float':>11}")
        for name, base, f, v, c in numba_rows():
            print(f"  {name:<22} {base:<32} {1e9 * f / n:8.1f} {1e9 * v / n:9.1f} "
                  f"{1e9 * c / n:9.1f} {c / v:8.1f}× {c / f:10.1f}×")
        print()
    if args.timing:
        timing_side_channel(args.timing)
    if not args.skip_bai:
        end_to_end(args.runs)
    if not (args.timing and args.skip_draws and args.skip_bai):
        fixed_horizon(args.runs)


#: (agent, env kwargs, agent kwargs) of the end-to-end rows
AGENT_CASES = [
    ("adap-tt", {"instance": "mu1"}, {"epsilon": 1.0}),
    ("dp-se", {"instance": "mu4"}, {"epsilon": 1.0}),
    ("gaussian-ldp-ttucb", {"instance": "mu4", "reward_mode": "sample"}, {"epsilon": 5.0}),
]


def end_to_end(n_runs: int) -> None:
    from privenv.simulation import simulate

    print(f"end to end: {n_runs} runs each, ns per run-step (fast path), median of {REPEATS}")
    print(f"  {'agent':<20} {'instance':<8} {'float':>8} {'exact':>8} {'exact/float':>11} "
          f"{'mean τ float / exact':>24}")
    for name, env_kwargs, kw in AGENT_CASES:
        times: dict[str, list[float]] = {"float": [], "exact": []}
        steps: dict[str, float] = {}
        for rep in range(REPEATS + 1):  # the first pass compiles and is not timed
            for sampler in ("float", "exact"):
                start = time.perf_counter()
                res = simulate(name, "BestArmIdentification-v0", n_runs=n_runs, seed=1,
                               horizon=10**8, env_kwargs=env_kwargs,
                               agent_kwargs={**kw, "sampler": sampler})
                if rep:
                    times[sampler].append((time.perf_counter() - start) / res.steps.sum())
                steps[sampler] = float(res.steps.mean())
        f, e = (sorted(times[k])[REPEATS // 2] for k in ("float", "exact"))
        print(f"  {name:<20} {env_kwargs['instance']:<8} {1e9 * f:8.1f} {1e9 * e:8.1f} "
              f"{e / f:10.2f}× {steps['float']:>11.0f} / {steps['exact']:<11.0f}")



#: (agent, env, horizon, env kwargs, agent kwargs) of the linear and federated rows: batched numpy
#: agents whose exact releases are vector draws (privenv.privacy.exact.run_discrete)
FIXED_CASES = [
    ("central-dp-linucb", "LinearContextualBandit-v0", 2000, {}, {"epsilon": 1.0}),
    ("ldp-linucb", "LinearContextualBandit-v0", 2000, {}, {"epsilon": 1.0}),
    ("input-perturbation-ols", "LinearContextualBandit-v0", 2000, {}, {"epsilon": 1.0}),
    ("fed-linucb", "FederatedLinearBandit-v0", 500, {"M": 10, "K": 20, "d": 5},
     {"protocol": "ldp", "epsilon": 1.0, "delta": 1e-4, "reward_bound": 1.0, "batch": 5}),
]


def fixed_horizon(n_runs: int) -> None:
    from privenv.simulation import simulate

    print(f"\nlinear and federated agents: {n_runs} runs each, fixed horizon, ns per run-step, "
          f"median of {REPEATS}")
    print(f"  {'agent':<24} {'T':>6} {'float':>9} {'exact':>9} {'exact/float':>11}")
    for name, env, horizon, env_kwargs, kw in FIXED_CASES:
        times: dict[str, list[float]] = {"float": [], "exact": []}
        for rep in range(REPEATS + 1):  # the first pass compiles and is not timed
            for sampler in ("float", "exact"):
                start = time.perf_counter()
                simulate(name, env, n_runs=n_runs, seed=1, horizon=horizon,
                         env_kwargs=env_kwargs, agent_kwargs={**kw, "sampler": sampler})
                if rep:
                    times[sampler].append((time.perf_counter() - start) / (n_runs * horizon))
        f, e = (sorted(times[k])[REPEATS // 2] for k in ("float", "exact"))
        print(f"  {name:<24} {horizon:>6} {1e9 * f:9.0f} {1e9 * e:9.0f} {e / f:10.2f}×")



@intrinsic
def _cycles(typingctx: object) -> tuple:
    """The CPU's cycle counter (``llvm.readcyclecounter``: RDTSC on x86-64; 0 where none)."""

    def codegen(context: object, builder: object, signature: object, args: object) -> object:
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return types.uint64(), codegen


@numba.njit
def _read_cycles() -> int:
    """:func:`_cycles` for Python callers (an intrinsic is usable in compiled code only)."""
    return _cycles()


@numba.njit
def _timed_draws(words: np.ndarray, n: int, k: np.ndarray, gaussian: bool, a: int, b: int,
                 c: int, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Draws alternating between the inputs k[0], k[1] → (input index, release, cycles, words
    used); budget 0: CKS20's variable-work loops."""
    side = np.empty(2 * n, np.int64)
    y = np.empty(2 * n, np.int64)
    cyc = np.empty(2 * n, np.int64)
    pos = 0
    for i in range(2 * n):
        t0 = _cycles()
        z, p = discrete_draw(words, pos, gaussian, a, b, c, budget)
        t1 = _cycles()
        if p < 0:
            return side[:i], y[:i], cyc[:i], pos
        side[i] = i & 1
        y[i] = k[i & 1] + z
        cyc[i] = np.int64(t1 - t0)
        pos = p
    return side, y, cyc, pos


def _timing_bound(side: np.ndarray, y: np.ndarray, cyc: np.ndarray, edges: np.ndarray
                  ) -> tuple[float, float]:
    """(ε lower bound of {y ∈ b, time > τ_b}, largest |difference of the median times| given
    y ∈ b in cycles): τ_b the pooled median of bin b on the first half, evaluated on the second
    half (each of the 2·bins events and both directions in the Bonferroni count)."""
    from privenv.privacy import audit

    half = y.size // 2
    b = np.searchsorted(edges, y, side="right")
    counts = [np.zeros(2 * (edges.size + 1), np.int64) for _ in range(2)]
    n = [int(np.sum(side[half:] == s)) for s in (0, 1)]
    gap = 0.0
    for j in range(edges.size + 1):
        first = (b[:half] == j)
        if first.sum() < 200:
            continue
        tau = np.median(cyc[:half][first])
        for s in (0, 1):
            sel = (b[half:] == j) & (side[half:] == s)
            counts[s][2 * j] = int(np.sum(cyc[half:][sel] > tau))
            counts[s][2 * j + 1] = int(np.sum(cyc[half:][sel] <= tau))
        med = [np.median(cyc[(b == j) & (side == s)]) for s in (0, 1)]
        gap = max(gap, abs(med[0] - med[1]))
    res = audit.epsilon_lower_bound(counts[0], n[0], counts[1], n[1], alpha=1e-6)
    return res.epsilon_lb, gap


def timing_side_channel(n: int) -> None:
    ticks0, wall0 = _read_cycles(), time.perf_counter()
    time.sleep(0.2)
    ghz = (int(_read_cycles()) - int(ticks0)) / (time.perf_counter() - wall0) / 1e9
    if ghz <= 0:
        print("timing side channel: this CPU has no cycle counter readable here (skipped)")
        return
    lap = ex.LaplaceMechanism(epsilon=1.0, bounds=(0.0, 1.0), sampler="exact")
    gau = ex.GaussianMechanism(epsilon=1.0, delta=1e-2, sensitivity=1.0, sampler="exact")
    cases = [("Laplace", False, (lap.params.scale_num, lap.params.scale_den, 0),
              lap.params.budget, lap.params.sensitivity_grid, np.arange(-2048, 3073, 256)),
             ("Gaussian", True, (gau.params.var_num, gau.params.var_den, gau.params.t),
              gau.params.budget, gau.sensitivity_grid, np.arange(-4096, 5121, 512))]
    print(f"\ntiming side channel: {n} draws per input, interleaved; cycle counter "
          f"{ghz:.2f} GHz; given the release: the largest gap of the median times between the "
          "inputs, and the ε lower bound of {release ∈ b, time > τ_b} (declared ε = 1)")
    print(f"  {'sampler':<10} {'work':<22} {'median ns/draw':>14} {'gap ns':>8} {'ε_lb':>7}")
    for name, gaussian, ints, budget, dk, edges in cases:
        k = np.array([0, dk], np.int64)
        for label, b in (("variable (CKS20 loops)", 0), (f"constant ({budget} words)", budget)):
            words = seeding.random_words(np.random.default_rng(7), 2 * n * (b or 40) + 10_000)
            _timed_draws(words[:10_000], 50, k, gaussian, *ints, b)  # compile, warm up
            side, y, cyc, _ = _timed_draws(words, n, k, gaussian, *ints, b)
            eps_lb, gap = _timing_bound(side, y, cyc, edges)
            print(f"  {name:<10} {label:<22} {np.median(cyc) / ghz:14.0f} {gap / ghz:8.1f} "
                  f"{eps_lb:7.2f}")


if __name__ == "__main__":
    main()
