"""End-to-end audits of the private agents: tiny instances, many runs at once.

Every agent is driven through its own act/observe protocol on a reward table (runs, T, K) of
*potential* rewards: user t's reward for each arm. D and D′ differ only in user t₀'s rewards
(all arms). The first half of the agent's runs sees D, the second half D′; the agent is one
batched object, so its per-run noise streams are those of ordinary runs.

Released output audited. For the elimination agents (PRAE-R, PRAE-C, DPRSE, DP-SE) the
privacy proof is about the *sequence of private estimates* (each reward enters one Laplace
release; actions are post-processing), and at the tiny horizons an audit can afford the action
trajectory carries almost nothing (elimination needs a gap > 2β, which never happens in a few
batches), so the audited output is the vector of each arm's last released estimate at the
horizon — chosen so that the release containing user t₀ is the last one of its arm. For the Top
Two agents (AdaP-TT, AdaP-TT*, CTB-TT) the audited output is the action sequence itself: the
public output of the agent. Events: a linear score fitted on one half of the runs, a threshold
event chosen on that half and evaluated on the other
(:func:`~privenv.privacy.audit_scores.fitted_holdout_lower_bound`), except AdaP-TT(*)'s pre-declared
events {a_t = arm 0}. CTB-TT and the linear agents (LDP-LinUCB with its user-side wrapper,
central-DP LinUCB) play a table env behind their declared local randomizer, as the runner puts it
(:func:`privenv.simulation.system_env`).

Mutants run the agent's own code with wrong noise, through the agent's audit hooks: class
attributes a mutant subclass overrides (``noise_multiplier``, ``forget``, ``tree_class``) or, for
a local-DP system, its :meth:`~privenv.agents.base.Agent.local_randomizer`, the randomizer the
runner puts in front of the learner.
None re-implements an agent. The machinery and the score
statistics are those of :mod:`privenv.privacy.harness` and :mod:`privenv.privacy.audit_scores`;
the cases are registered in :data:`CASES`, which :mod:`privenv.audits` merges into the registry
of ``privenv audit``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from privenv.privacy import audit
from privenv.privacy.accounting import gaussian_epsilon
from privenv.privacy.audit_composite import tree_mutant_classes, tree_s2_sd
from privenv.privacy.audit_scores import (
    GDP_AUDIT_DELTA,
    best_bound,
    fitted_holdout_lower_bound,
    gaussian_projection_bound,
)
from privenv.privacy.harness import ALPHA, AuditCase, Measurement, Sampler, register

__all__ = ["AGENT_CHUNK", "CASES"]

#: the cases of this module, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}
_register = functools.partial(register, cases=CASES)


#: runs per batch of the end-to-end agent audits (a batch's reward table and the agents' per-run
#: state and noise buffers take O(runs) memory, so a full-size audit streams its runs in batches
#: and keeps only each run's audited output). Results do not depend on it: run i always owns
#: run i's streams (``first_run``), whatever the batch.
AGENT_CHUNK = 4096

#: rows(lo, hi) -> the reward table (hi − lo, T, K) of runs lo … hi − 1
TableRows = Callable[[int, int], np.ndarray]


def _drive(make_agent: Callable[[int], Any], rows: TableRows, n_runs: int, seed: int,
           record: Callable[[Any, np.ndarray], np.ndarray]) -> np.ndarray:
    """Play ``make_agent(m)`` (an agent for m runs) on the reward tables ``rows(lo, hi)``
    (m, T, K), :data:`AGENT_CHUNK` runs at a time: run i's pull t of arm a < K yields
    table[i, t, a] (actions ≥ K — a BAI stop — yield 0). Returns ``record(agent, actions)``
    (one row per run; ``actions`` (m, T)) of every batch after its last step, stacked."""
    out = []
    for lo in range(0, n_runs, AGENT_CHUNK):
        hi = min(lo + AGENT_CHUNK, n_runs)
        table = rows(lo, hi)
        m, horizon, K = table.shape
        agent = make_agent(m)
        agent.reset(seed=seed, first_run=lo)
        idx = np.arange(m)
        obs = np.zeros((m, 1))
        actions = np.empty((m, horizon), dtype=np.int64)
        for t in range(horizon):
            a = np.asarray(agent.act_batch(obs))
            actions[:, t] = a
            agent.observe_batch(a, np.where(a < K, table[idx, t, np.minimum(a, K - 1)], 0.0),
                                obs)
        out.append(record(agent, actions))
    return np.concatenate(out)


def _neighbour_table(n: int, horizon: int, K: int, base: float | np.ndarray, t0: int,
                     value_d: float, value_dp: float,
                     fixed: dict[tuple[int, int], float] | None = None) -> TableRows:
    """Runs < n see D, runs ≥ n see D′: all users get ``base`` (per arm), user t₀ gets
    ``value_d`` (D) or ``value_dp`` (D′) for every arm; ``fixed[(t, a)]`` overrides user t's
    reward for arm a in every run. Returns the rows of any batch of runs."""

    def rows(lo: int, hi: int) -> np.ndarray:
        table = np.empty((hi - lo, horizon, K))
        table[:] = base
        d = np.arange(lo, hi) < n
        table[d, t0, :] = value_d
        table[~d, t0, :] = value_dp
        for (t, a), value in (fixed or {}).items():
            table[:, t, a] = value
        return table

    return rows


def _estimates(agent: Any, actions: np.ndarray) -> np.ndarray:
    return np.array(agent.estimates, dtype=float)


def _release_audit(make_agent: Callable[[int], Any], n: int, seed: int, rows: TableRows,
                   epsilon: float) -> Measurement:
    out = _drive(make_agent, rows, 2 * n, seed, _estimates)
    return Measurement(fitted_holdout_lower_bound(out[:n], out[n:]), epsilon, 0.0)


# -- DP-SE (Sajed & Sheffet 2019) -----------------------------------------------------------------

_DPSE_EPS, _DPSE_BETA = 1.0, 0.9


def _dp_se(sampler: str) -> Sampler:
    return functools.partial(_dp_se_sample, sampler)


def _dp_se_sample(sampler: str, mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.agents.dp_se import DPSE

    class HalfNoise(DPSE):
        """Mutant: Laplace scale 1/(2εR_e) (the sensitivity 1/R_e halved)."""

        noise_multiplier = 0.5

    class Reused(DPSE):
        """Mutant: the epoch sum is not reset between arms (arm 0's rewards enter arm 1's
        release too)."""

        forget = False

    cls = {"noise x 0.5": HalfNoise, "reward reused": Reused}.get(mutation or "", DPSE)
    probe = DPSE(K=2, horizon=10**6, epsilon=_DPSE_EPS, beta=_DPSE_BETA)
    R = int(probe.epoch_length(np.array([1]), np.array([2]))[0])
    horizon = 2 * R  # epoch 1: arm 0 then arm 1, both released
    rows = _neighbour_table(n, horizon, 2, 0.5, 0, 1.0, 0.0)
    return _release_audit(
        lambda m: cls(K=2, horizon=horizon, epsilon=_DPSE_EPS, beta=_DPSE_BETA, sampler=sampler,
                      n_runs=m), n, seed, rows, _DPSE_EPS)


_register(AuditCase(
    "dp-se", "DP-SE (regret version), K = 2, ε = 1, β = 0.9 (R₁ = 369 pulls per arm, T = 2R₁): "
    "user 0's reward 1 vs 0 (Δ = 1/R₁, the sensitivity); output: both arms' released epoch "
    "means; mutants: Laplace scale halved, epoch sum not reset between arms (a reward reused)",
    _dp_se("float"), 20_000, ("noise x 0.5", "reward reused"), power_floor=0.5))
_register(AuditCase(
    "dp-se-exact", "DP-SE as dp-se with the exact sampler (the discrete Laplace on a grid, "
    "privenv.privacy.exact); same mutants", _dp_se("exact"), 20_000,
    ("noise x 0.5", "reward reused"), power_floor=0.5))


# -- PRAE-R, DPRSE, PRAE-C (paper 1) --------------------------------------------------------------

_HUBER_EPS = 1.0


def _prae_r_family(name: str, sampler: str = "float") -> Sampler:
    """PRAE-R (α = 0.25, δ = 0.5: first phase of 30 random pulls, then batch τ = 5 of 32 pulls
    per arm, T = 94, t₀ = 30) or DPRSE (no first phase, batch τ = 1 of 2 pulls per arm, T = 4,
    t₀ = 0). User t₀'s reward is ±0.999·M_τ (Algorithm 2's truncation): Δ ≈ 2M/B, the
    sensitivity."""

    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.agents.huber import DPRSE, PRAER, batch_delta, raw_moment_parameters

        base = PRAER if name == "prae-r" else DPRSE

        class HalfSensitivity(base):  # type: ignore[valid-type, misc]
            """Mutant: Laplace scale M/(Bε) (the sensitivity 2M/B halved)."""

            noise_multiplier = 0.5

        cls = HalfSensitivity if mutation == "sensitivity halved" else base
        kw: dict[str, Any] = {"alpha": 0.25, "delta": 0.5} if name == "prae-r" else \
            {"delta": 0.5}
        probe = base(K=2, horizon=10**6, epsilon=_HUBER_EPS, **kw)
        tau = probe.first_elimination_batch
        t0, B = probe.first_phase_rounds, 2**tau
        horizon = t0 + 2 * B
        M, _ = raw_moment_parameters(B, _HUBER_EPS, batch_delta(probe.delta, tau, 2),
                                     probe.alpha, probe.moment_order)
        rows = _neighbour_table(n, horizon, 2, 0.0, t0, 0.999 * float(M), -0.999 * float(M))
        return _release_audit(
            lambda m: cls(K=2, horizon=horizon, epsilon=_HUBER_EPS, sampler=sampler, n_runs=m,
                          **kw), n, seed, rows, _HUBER_EPS)

    return sample


_register(AuditCase(
    "prae-r", "PRAE-R (Algorithm 1 + 2), K = 2, ε = 1, α = 0.25, δ = 0.5: first phase 30 "
    "random pulls (no reward used), then batch τ = 5 (32 pulls per arm, T = 94); user 30's "
    "reward ±0.999M; output: both arms' released PRM estimates; mutant: Laplace scale M/(Bε)",
    _prae_r_family("prae-r"), 20_000, ("sensitivity halved",), power_floor=0.5))
_register(AuditCase(
    "dprse", "DPRSE (PRAE-R's estimator with α = 0 thresholds), K = 2, ε = 1, δ = 0.5: batch "
    "τ = 1 (2 pulls per arm, T = 4); user 0's reward ±0.999M; output: both released "
    "estimates; mutant: Laplace scale M/(Bε)", _prae_r_family("dprse"), 20_000,
    ("sensitivity halved",), power_floor=0.5))
_register(AuditCase(
    "dprse-exact", "DPRSE as dprse with the exact sampler (Algorithm 2's release through "
    "privenv.privacy.exact.laplace_release); mutant: Laplace scale M/(Bε)",
    _prae_r_family("dprse", "exact"), 20_000, ("sensitivity halved",), power_floor=0.5))


def _prae_c(sampler: str) -> Sampler:
    return functools.partial(_prae_c_sample, sampler)


def _prae_c_sample(sampler: str, mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.agents.huber import PRAEC, batch_delta, central_moment_parameters

    class HalfSensitivity(PRAEC):
        """Mutant: both Laplace scales of Algorithm 3 halved (ε doubled in the noise only)."""

        noise_multiplier = 0.5

    cls = HalfSensitivity if mutation == "sensitivity halved" else PRAEC
    # Remark 5.1's greedy first phase releases every batch through Algorithm 3 (the default
    # random first phase uses no reward for ~10⁴ pulls). Batches: arm 0 (t = 0, 1), arm 1
    # (t = 2…5), then 8 pulls of the greedy arm (t = 6…13: fold 1 = 6…9, fold 2 = 10…13).
    horizon, t0, fold = 14, 10, 4
    kw: dict[str, Any] = {"alpha": 0.0, "mean_range": 1.0, "first_phase": "greedy",
                          "sampler": sampler}
    probe = PRAEC(K=2, horizon=horizon, epsilon=_HUBER_EPS, **kw)
    _, M, _ = central_moment_parameters(fold, _HUBER_EPS, batch_delta(probe.delta, 3, 2), 0.0,
                                        probe.moment_order)
    centre = probe.r / 2  # the centre of bin [0, r): fold 1's rewards put J = 0
    rows = _neighbour_table(n, horizon, 2, centre, t0, 0.999 * float(M), -0.999 * float(M))

    def last_release(agent: Any, actions: np.ndarray) -> np.ndarray:
        # which arm batch 3 pulls is public (the actions) and noise-driven: that arm's release
        return agent.estimates[np.arange(agent.n_runs), actions[:, -1]][:, None]

    out = _drive(lambda m: cls(K=2, horizon=horizon, epsilon=_HUBER_EPS, n_runs=m, **kw), rows,
                 2 * n, seed, last_release)
    return Measurement(fitted_holdout_lower_bound(out[:n], out[n:]), _HUBER_EPS, 0.0)


_register(AuditCase(
    "prae-c", "PRAE-C (Algorithm 1 + 3), K = 2, ε = 1, α = 0, Remark 5.1's greedy first phase "
    "(every batch released), T = 14: all rewards at the centre of bin [0, r) except user 10 "
    "(fold 2 of batch 3) at ±0.999M; output: the release of batch 3's (public, noise-chosen) arm; "
    "mutant: both Laplace "
    "scales halved", _prae_c("float"), 20_000, ("sensitivity halved",), power_floor=0.3))
_register(AuditCase(
    "prae-c-exact", "PRAE-C as prae-c with the exact sampler (the histogram's counts plus "
    "Lap_ℤ, the mean through privenv.privacy.exact.laplace_release); mutant: both scales halved",
    _prae_c("exact"), 20_000, ("sensitivity halved",), power_floor=0.3))


# -- AdaP-TT, AdaP-TT* (paper 3) ------------------------------------------------------------------

_ADAP_EPS, _ADAP_T, _ADAP_STEPS = 2.0, 8, (2, 3, 4)


def _adap(star: bool, sampler: str = "float", sampling: str | None = None) -> Sampler:
    """AdaP-TT (Algorithm 9) / AdaP-TT* (Algorithm 10), K = 2, T = 8: user 0's rewards 1 (D) vs
    0 (D′) enter only arm 0's first release μ̃₀ = x₀ + Lap(1/ε); arm 1's first reward (user 1)
    is 1, the others 0.5. The first adaptive pull goes to arm 0 iff μ̃₀ > μ̃₁. Pre-declared
    events E_t = {a_t = arm 0}, t = 2, 3, 4 (all 3, both directions, Bonferroni). With
    ``sampling``, the generic wrapper (``daf-wrapper``) with that sampling rule instead: with
    K = 2 its LUCB rule also pulls arm 0 first iff μ̃₀ > μ̃₁."""

    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from functools import partial

        from privenv.agents.adap_tt import AdaPTT, AdaPTTStar, DAFWrapper

        base = DAFWrapper if sampling else AdaPTTStar if star else AdaPTT
        extra: dict[str, Any] = {"sampling": sampling} if sampling else {}

        class HalfNoise(base):  # type: ignore[valid-type, misc]
            """Mutant: Laplace scale 1/(2εÑ) — a 2ε-DP release declared as ε."""

            noise_multiplier = 0.5

        cls = HalfNoise if mutation == "noise x 0.5" else base
        rows = _neighbour_table(n, _ADAP_T, 2, 0.5, 0, 1.0, 0.0, fixed={(1, 1): 1.0})
        build = partial(cls, K=2, epsilon=_ADAP_EPS, sampler=sampler, **extra)
        events = _drive(lambda m: build(n_runs=m), rows,
                        2 * n, seed,
                        lambda agent, actions: np.stack([actions[:, t] == 0 for t in _ADAP_STEPS],
                                                        axis=1))
        res = audit.epsilon_lower_bound(events[:n].sum(axis=0), n, events[n:].sum(axis=0), n,
                                        alpha=ALPHA)
        return Measurement(res, _ADAP_EPS, 0.0)

    return sample


_register(AuditCase(
    "adap-tt", "AdaP-TT, K = 2, ε = 2, T = 8: user 0's rewards 1 vs 0; events {a_t = 0}, "
    "t = 2, 3, 4 (true log-ratio ≈ 1.3); mutant: Laplace scale halved (≈ 2.9)", _adap(False),
    6_000, ("noise x 0.5",), power_floor=0.5))
_register(AuditCase(
    "adap-tt-star", "AdaP-TT* (private transportation cost and threshold), the same instance "
    "and events as adap-tt; mutant: Laplace scale halved", _adap(True), 6_000,
    ("noise x 0.5",), power_floor=0.5))
_register(AuditCase(
    "daf-wrapper", "the generic wrapper of the NeurIPS 2023 version (App. D.1) with the LUCB "
    "sampling rule, the same instance and events as adap-tt; mutant: Laplace scale halved",
    _adap(False, sampling="lucb"), 6_000, ("noise x 0.5",), power_floor=0.5))
_register(AuditCase(
    "adap-tt-exact", "AdaP-TT as adap-tt with the exact sampler (each phase mean through "
    "privenv.privacy.exact.laplace_release); mutant: Laplace scale halved",
    _adap(False, "exact"), 6_000, ("noise x 0.5",), power_floor=0.5))


# -- CTB-TT (paper 3, Algorithm 7): randomized response wrapper + TTUCB, end to end -------------


def _table_problem_class() -> type:
    from gymnasium import spaces

    from privenv.problems.base import Problem

    class TableProblem(Problem):
        """A BAI-shaped problem replaying a fixed table of potential rewards (runs, T, K):
        actions a < K pull arm a (reward table[i, t, a], in the reward: ``reward_mode`` "sample"),
        a ≥ K stop. Used only by the audits."""

        def __init__(self, table: np.ndarray) -> None:
            super().__init__(table.shape[0])
            self.table = table
            self.K = table.shape[2]
            self.single_observation_space = spaces.Discrete(1)
            self.single_action_space = spaces.Discrete(2 * self.K)
            self.t = np.zeros(self.n_runs, dtype=np.int64)

        def _reset(self, run_seeds: Any, runs: Any) -> tuple[np.ndarray, dict]:
            self.t[:] = 0
            return np.zeros(self.n_runs, dtype=np.int64), {}

        def _step(self, actions: np.ndarray, live: Any) -> tuple:
            rows = np.arange(self.n_runs)
            t = np.minimum(self.t, self.table.shape[1] - 1)
            pull = actions < self.K
            reward = np.where(pull, self.table[rows, t, np.minimum(actions, self.K - 1)], 0.0)
            self.t += 1
            if live is not None:
                reward[~live] = 0.0
            return np.zeros(self.n_runs, dtype=np.int64), reward, ~pull, {}

        def public_info(self) -> dict[str, Any]:
            return {"K": self.K, "law": "bernoulli", "reward_mode": "sample", "task": "bai"}

    return TableProblem


def _ctb_tt(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.agents.top_two import CTBTT

    eps, horizon = 1.0, 10

    class DoubleEpsilon(CTBTT):
        """Mutant: the randomizer of a CTB-TT at 2ε in front of this learner (declared ε): the
        wrapper flips with the probability of 2ε."""

        def local_randomizer(self) -> Any:
            return CTBTT(K=self.K, epsilon=2 * self.epsilon).local_randomizer()

    class RawReward(CTBTT):
        """Mutant: the learner is given the bare env (no randomizer between it and the data)."""

        def local_randomizer(self) -> Any:
            return None

    cls = {"epsilon x 2 in the wrapper": DoubleEpsilon,
           "no randomizer": RawReward}.get(mutation or "", CTBTT)
    rows = _neighbour_table(n, horizon, 2, 0.5, 0, 1.0, 0.0, fixed={(1, 1): 1.0})
    out = drive_wrapped(lambda m: cls(K=2, epsilon=eps, n_runs=m), rows, 2 * n, horizon, seed,
                        lambda agent, actions: (actions[:, :, None] == np.arange(4))
                        .reshape(len(actions), -1))
    return Measurement(fitted_holdout_lower_bound(out[:n], out[n:]), eps, 0.0)


def drive_wrapped(make_agent: Callable[[int], Any], rows: TableRows, n_runs: int, horizon: int,
                  seed: int, record: Callable[[Any, np.ndarray], np.ndarray]) -> np.ndarray:
    """As :func:`_drive`, but through a table env behind the agent's own
    :meth:`~privenv.agents.base.Agent.local_randomizer` (a local-DP system's randomizer in front
    of its learner, as the runner builds it: :func:`privenv.simulation.system_env`); the env's
    reward (the released value) is what the agent observes."""
    from gymnasium.vector import AutoresetMode

    from privenv.envs.base import ProblemVectorEnv
    from privenv.simulation import system_env

    out = []
    for lo in range(0, n_runs, AGENT_CHUNK):  # in batches of runs, as _drive
        hi = min(lo + AGENT_CHUNK, n_runs)
        agent = make_agent(hi - lo)
        problem = _table_problem_class()(rows(lo, hi))
        env = system_env(agent, ProblemVectorEnv(problem, horizon,
                                                 autoreset_mode=AutoresetMode.DISABLED))
        obs, _ = env.reset(seed=seed, options={"first_run": lo})
        agent.reset(seed=seed, first_run=lo)
        actions = np.empty((hi - lo, horizon), dtype=np.int64)
        for t in range(horizon):
            a = np.asarray(agent.act_batch(obs))
            actions[:, t] = a
            obs, reward, *_ = env.step(a)
            agent.observe_batch(a, np.asarray(reward, dtype=float), obs)
        out.append(record(agent, actions))
    return np.concatenate(out)


_register(AuditCase(
    "ctb-tt", "CTB-TT end to end: the agent's own randomized-response wrapper (wrap_env) on a "
    "table env, TTUCB behind it; K = 2, ε = 1, T = 10; user 0's rewards 1 vs 0 (user 1's arm-1 "
    "reward 1, the others 0.5); output: the action sequence (one-hot, incl. stops); mutants: "
    "the wrapper at 2ε, no randomizer", _ctb_tt, 20_000,
    ("epsilon x 2 in the wrapper", "no randomizer")))


# -- Linear contextual bandits end to end: LDP-LinUCB (wrapper + learner), central-DP LinUCB ----
#
# A table env replays, per run, a fixed feature matrix φ(x_t, ·) ∈ ℝ^{A×d} and labels y_t(a) of
# every user t (:func:`_linear_table_problem_class`). D and D′ differ only in user t₀: in D both
# actions' features are φ and in D′ φ′ (so φ_{t₀} = φ or φ′ whichever action is played), label 1
# — the worst pair of the Gaussian statistics (φ·φ′ = −½: ‖Δ(triu φφᵀ, φy)‖₂ = 3/√2 of the
# declared 2√2), also the worst pair of the central agent's two trees. Every other user has the
# same features (0.6, 0) for both actions and label 0, so the data that enter the statistics do
# not depend on the (noise-driven) actions and the scores below are exact likelihood-ratio
# statistics. The audited output is what the learner keeps — its statistic after every round
# (LDP-LinUCB: the sums V, u of the released messages; central-DP LinUCB: the trees' private
# prefix sums G̃, ũ): later actions are post-processing of it and of public contexts, and the
# action of round t₀ itself may use the raw context (paper 4's non-anticipating Definition 1.1;
# Shariff & Sheffet's joint DP), so it is not part of the output. Scores are declared from the
# instance before sampling (projections on the unit difference of the pair's (triu φφᵀ, φy));
# all runs count (no held-out half), so 10⁴–2·10⁴ runs per side suffice.

_LIN_D = 2  # d = A = 2
_LIN_PAIR = (np.array([math.cos(math.pi / 12), math.sin(math.pi / 12)]),
             np.array([-math.sin(math.pi / 12), -math.cos(math.pi / 12)]))
_LIN_OTHER = np.array([0.6, 0.0])  # every other user's features (both actions), label 0


def _linear_table_problem_class() -> type:
    from gymnasium import spaces

    from privenv.problems.base import Problem

    class LinearTableProblem(Problem):
        """A linear-contextual-shaped problem replaying fixed per-run features (runs, T, A, d)
        and labels (runs, T, A): round t shows features[i, t], action a yields labels[i, t, a].
        Used only by the audits."""

        def __init__(self, features: np.ndarray, labels: np.ndarray) -> None:
            super().__init__(features.shape[0])
            self.features, self.labels = features, labels
            _, self.T, self.A, self.d = features.shape
            self.single_observation_space = spaces.Box(-1.0, 1.0, (self.A, self.d), np.float64)
            self.single_action_space = spaces.Discrete(self.A)
            self.t = 0

        def _reset(self, run_seeds: Any, runs: Any) -> tuple[np.ndarray, dict]:
            self.t = 0
            return self.features[:, 0].copy(), {}

        def _step(self, actions: np.ndarray, live: Any) -> tuple:
            reward = self.labels[np.arange(self.n_runs), self.t, actions]
            self.t += 1
            obs = self.features[:, min(self.t, self.T - 1)].copy()
            return obs, reward, np.zeros(self.n_runs, dtype=bool), {}

        def public_info(self) -> dict[str, Any]:
            return {"d": self.d, "A": self.A, "noise": "bounded", "sigma": 1.0,
                    "reward_bound": 1.0, "feature_bound": 1.0, "theta_bound": 1.0}

    return LinearTableProblem


def _linear_neighbours(n: int, horizon: int, t0: int
                       ) -> Callable[[int, int], tuple[np.ndarray, np.ndarray]]:
    """rows(lo, hi) -> features (hi − lo, T, A = 2, d = 2) and labels (hi − lo, T, 2) of runs
    lo … hi − 1: runs < n see D, runs ≥ n see D′."""

    def rows(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        features = np.broadcast_to(_LIN_OTHER, (hi - lo, horizon, 2, _LIN_D)).copy()
        labels = np.zeros((hi - lo, horizon, 2))
        d = np.arange(lo, hi) < n
        features[d, t0] = _LIN_PAIR[0]
        features[~d, t0] = _LIN_PAIR[1]
        labels[:, t0] = 1.0
        return features, labels

    return rows


def _triu_and_vector(G: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Rows (triu G, u) of a batch of (d×d, d) statistics."""
    iu = np.triu_indices(G.shape[-1])
    return np.concatenate([G[:, iu[0], iu[1]], u], axis=1)


def _pair_statistics() -> tuple[np.ndarray, np.ndarray]:
    """(triu φφᵀ, φ·1) of the pair's two users: the mean of their contribution."""
    first, second = (_triu_and_vector(np.outer(p, p)[None], p[None])[0] for p in _LIN_PAIR)
    return first, second


#: runs per batch of the linear end-to-end audits (the wrapper's and the agent's per-run
#: buffers take ~50 KB per run; results do not depend on it: run i always owns run i's streams)
_LIN_CHUNK = 5_000


def _play_vector_env(make_agent: Callable[[int], Any],
                     rows: Callable[[int, int], tuple[np.ndarray, np.ndarray]], n_runs: int,
                     horizon: int, seed: int, record: Callable[[Any], np.ndarray],
                     reduce: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Play ``make_agent(m)`` on the tables ``rows(lo, hi)`` (features, labels) through a native
    vector env behind the agent's local randomizer, if any, as the runner does
    (:func:`privenv.simulation.system_env`), in batches of runs (run i of the seed is run i
    whatever the batch: ``first_run``). ``record(agent)`` after every step, stacked (m, T, …),
    is reduced to each run's audited output by ``reduce``; returns those, stacked over batches."""
    from gymnasium.vector import AutoresetMode

    from privenv.envs.base import ProblemVectorEnv
    from privenv.simulation import system_env

    out = []
    for lo in range(0, n_runs, _LIN_CHUNK):
        hi = min(lo + _LIN_CHUNK, n_runs)
        agent = make_agent(hi - lo)
        problem = _linear_table_problem_class()(*rows(lo, hi))
        env = system_env(agent, ProblemVectorEnv(problem, horizon,
                                                 autoreset_mode=AutoresetMode.DISABLED))
        obs, _ = env.reset(seed=seed, options={"first_run": lo})
        agent.reset(seed=seed, first_run=lo)
        kept = []
        for _ in range(horizon):
            a = np.asarray(agent.act_batch(obs))
            obs, reward, *_ = env.step(a)
            agent.observe_batch(a, np.asarray(reward, dtype=float), obs)
            kept.append(record(agent))
        out.append(reduce(np.stack(kept, axis=1)))
    return np.concatenate(out)


_LDPLIN_EPS, _LDPLIN_DELTA, _LDPLIN_T, _LDPLIN_T0 = 4.0, 1e-5, 3, 1


def _ldp_linucb(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.agents.linear import LDPLinUCB
    from privenv.wrappers.ldp_linear import GaussianStatisticsRandomizer

    correct = GaussianStatisticsRandomizer(_LDPLIN_EPS, _LDPLIN_DELTA, _LIN_D)
    declared = gaussian_epsilon(GDP_AUDIT_DELTA, correct.sensitivity / correct.sigma)

    class HalfNoise(LDPLinUCB):
        """Mutant: the user-side wrapper's σ × 0.5 (the same σ as a calibration for the
        add/remove sensitivity √2 instead of the replace-one 2√2)."""

        def local_randomizer(self) -> Any:
            randomizer = super().local_randomizer()
            randomizer.sigma *= 0.5
            return randomizer

    cls = HalfNoise if mutation == "noise x 0.5 in the wrapper" else LDPLinUCB
    # score: the learner's statistic gained in round t₀, projected on the pair's difference
    step = _play_vector_env(
        lambda runs: cls(d=_LIN_D, horizon=_LDPLIN_T, epsilon=_LDPLIN_EPS, delta=_LDPLIN_DELTA,
                         n_runs=runs),
        _linear_neighbours(n, _LDPLIN_T, _LDPLIN_T0), 2 * n, _LDPLIN_T, seed,
        lambda a: _triu_and_vector(a.V, a.u), lambda kept: kept[:, _LDPLIN_T0]
        - kept[:, _LDPLIN_T0 - 1])
    res = gaussian_projection_bound(step[:n], step[n:], *_pair_statistics(), correct.sigma)
    return Measurement(res, declared, GDP_AUDIT_DELTA)


_register(AuditCase(
    "ldp-linucb", "LDP-LinUCB end to end: the agent's own GaussianStatistics wrapper (wrap_env) "
    "on a table env, the learner behind it; d = A = 2, (ε, δ) = (4, 1e-5), T = 3; user 1's "
    "features φ vs φ′ (φ·φ′ = −½), label 1; output: the learner's statistic (V, u) after every "
    "round, score: its round-1 increment projected on the pair's difference; audited at "
    "δ = 0.05 of the message's μ-GDP profile (declared 1.39; true ε of the pair 0.88, of the "
    "mutant 2.60); mutant: the wrapper's σ × 0.5 (the σ of a calibration for the add/remove "
    "sensitivity)",
    _ldp_linucb, 10_000, ("noise x 0.5 in the wrapper",), power_floor=0.4))


_CDPLIN_EPS, _CDPLIN_DELTA, _CDPLIN_T, _CDPLIN_AUDIT_DELTA = 2.0, 1e-2, 32, 0.05


def _central_dp_linucb(mutation: str | None, n: int, seed: int,
                       sampler: str = "float") -> Measurement:
    from privenv.agents.central_linucb import CentralDPLinUCB
    from privenv.privacy.accounting import rho_to_epsilon_cks

    _, redraw, _ = tree_mutant_classes()

    class RedrawNoise(CentralDPLinUCB):
        """Mutant: both trees redraw their node noise at every release."""

        tree_class = redraw

    class HalfNoise(CentralDPLinUCB):
        """Mutant: the trees' node noise σ × 0.5. (One level missing from the budget is not
        visible here: the worst pair attains only √(4.5/6) of the declared sensitivity, which
        hides a factor √(m/(m − 1)); the "tree" and "fed-linucb-silo" cases, whose pairs attain
        it, catch that bug.)"""

        noise_multiplier = 0.5

    kw: dict[str, Any] = {"d": _LIN_D, "horizon": _CDPLIN_T, "epsilon": _CDPLIN_EPS,
                          "delta": _CDPLIN_DELTA, "sampler": sampler}
    probe = CentralDPLinUCB(**kw)
    # the float sampler is exactly μ-GDP; the exact one ρ-zCDP (CKS20's conversion at the audit δ)
    declared = gaussian_epsilon(_CDPLIN_AUDIT_DELTA, math.sqrt(2 * probe.rho)) \
        if sampler == "float" else rho_to_epsilon_cks(probe.rho, _CDPLIN_AUDIT_DELTA)
    cls = {"node noise redrawn": RedrawNoise, "noise x 0.5": HalfNoise}.get(mutation or "",
                                                                            CentralDPLinUCB)
    # prefix sums projected on the unit difference of the pair (both trees' node noise is
    # isotropic N(0, σ²) on (triu G, u)); scores as in the "tree" case: S₁ = Σ_j p_{2^j} (the
    # LR statistic of memoised node noise), S₂ = Σ_t p_t/popcount(t) (that of redrawn noise)
    a, b = _pair_statistics()
    w = (a - b) / np.linalg.norm(a - b)
    ts = np.arange(1, _CDPLIN_T + 1)
    coef = [(ts & (ts - 1) == 0).astype(float),  # t = 2^j
            1.0 / np.array([bin(t).count("1") for t in ts])]
    both = _play_vector_env(lambda runs: cls(n_runs=runs, **kw),
                            _linear_neighbours(n, _CDPLIN_T, 0), 2 * n, _CDPLIN_T, seed,
                            lambda a: _triu_and_vector(a.G, a.u),
                            lambda kept: np.stack([(kept @ w) @ c for c in coef], axis=1))
    scores = [both[:, 0], both[:, 1]]
    # the thresholds: 13 points from D′'s exact mean, in sd units of the correct agent, towards D
    other = _triu_and_vector(np.outer(_LIN_OTHER, _LIN_OTHER)[None], 0 * _LIN_OTHER[None])[0] @ w
    prefix_mean = [(b @ w + other * (ts - 1)), (a @ w + other * (ts - 1))]
    sds = (probe.noise_sigma * math.sqrt(probe.levels),
           tree_s2_sd(probe.noise_sigma, _CDPLIN_T))
    res = []
    for j in range(2):
        m_dp, m_d = (float(m @ coef[j]) for m in prefix_mean)
        grid = m_dp + math.copysign(1.0, m_d - m_dp) * np.linspace(-1.0, 5.0, 13) * sds[j]
        res.append(audit.threshold_epsilon_lower_bound(
            scores[j][:n], scores[j][n:], grid, delta=_CDPLIN_AUDIT_DELTA, alpha=ALPHA / 2))
    return Measurement(best_bound(*res), declared, _CDPLIN_AUDIT_DELTA)


_register(AuditCase(
    "central-dp-linucb", "central-DP LinUCB end to end (two binary trees, T = 32: 6 levels), "
    "d = A = 2, (ε, δ) = (2, 1e-2); user 0's features φ vs φ′ (φ·φ′ = −½), label 1; output: the "
    "private prefix sums (G̃, ũ) after every round, projected on the pair's difference; scores "
    "S₁, S₂ of the tree case; audited at δ = 0.05 of the μ-GDP profile (declared 1.32; true ε "
    "of the pair 1.05, of the redrawing mutant 2.24); mutants: node noise redrawn, σ × 0.5",
    _central_dp_linucb, 20_000, ("node noise redrawn", "noise x 0.5"), power_floor=0.6))

_register(AuditCase(
    "central-dp-linucb-exact", "central-DP LinUCB as central-dp-linucb with sampler='exact' (items "
    "on the grid, discrete Gaussian node noise from each run's words, σ calibrated through zCDP); "
    "declared: CKS20's conversion of the exact ρ at δ = 0.05 (1.43: looser than the float case's "
    "exact GDP value, so the redrawing mutant's 1.34 stays below it at this size and is audited "
    "in the float case, whose tree code it shares); mutant: σ × 0.5",
    lambda mutation, n, seed: _central_dp_linucb(mutation, n, seed, "exact"), 20_000,
    ("noise x 0.5",), power_floor=0.45))
