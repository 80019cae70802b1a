"""Leak tests for the local-DP wrappers (docs/design/threat-model.md, "Leak tests").

With a local-DP wrapper on, what an agent receives must depend on the raw rewards only through the
mechanism:

1. *coupling*: the released stream equals the randomizer applied to the raw rewards with noise
   rebuilt from the run seeds alone (so the noise cannot depend on the data), and instances with
   different raw rewards under the same seeds get the very same noise;
2. *sentinel*: with the raw rewards replaced by a constant sentinel r, the released stream has
   exactly the mechanism's law (i.i.d. Bernoulli(q(r)) for randomized response; r + Lap(b) /
   r + N(0, σ²)) — goodness of fit at a family-wise false-alarm probability of 1e-6;
3. ``info`` is identical with and without the wrapper and holds no raw reward;
4. no attribute reachable from the wrapper (other than the wrapped env itself: the simulated trust
   boundary, see :mod:`privenv.wrappers.ldp`) holds a raw reward;
5. the same four checks for the linear LDP wrappers (GaussianStatistics, LaplaceInput and their
   vector twins), whose feedback is a message about the chosen (φ, y) in the observation.

Each check is also run on a deliberately leaky wrapper and must flag it (mutation tests).
"""

import math
import types
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from scipy import special, stats

import privenv  # noqa: F401
from privenv import agents
from privenv.envs.bai import BestArmIdentificationEnv, BestArmIdentificationVectorEnv
from privenv.envs.base import ProblemVectorEnv
from privenv.envs.federated import FederatedLinearBanditEnv
from privenv.envs.huber import HuberBanditEnv, HuberBanditVectorEnv
from privenv.envs.linear import LinearContextualBanditEnv, LinearContextualBanditVectorEnv
from privenv.privacy.audit import goodness_of_fit, info_holds_values
from privenv.problems.base import Problem
from privenv.seeding import WRAPPER, RunNoise, child, generators
from privenv.simulation import play, simulate
from privenv.wrappers import (
    GaussianRandomizer,
    LaplaceLabel,
    LaplaceRandomizer,
    LaplaceReward,
    LocalDPRewardWrapper,
    LocalDPVectorRewardWrapper,
    RandomizedResponseRandomizer,
)
from privenv.wrappers.ldp import RAW_INFO_KEYS, public_step_info
from privenv.wrappers.ldp_linear import (
    GaussianStatistics,
    GaussianStatisticsRandomizer,
    LaplaceInput,
    LaplaceInputRandomizer,
    LinearMessageVectorWrapper,
    VectorGaussianStatistics,
    VectorLaplaceInput,
)

ALPHA = 1e-6  # family-wise false-alarm probability of each statistical test function


# -- environments ------------------------------------------------------------------------------


class SentinelProblem(Problem):
    """Every pull returns the same raw reward ``value`` (the sentinel)."""

    def __init__(self, value: float, K: int = 2, n_runs: int = 1) -> None:
        super().__init__(n_runs)
        self.value = float(value)
        self.single_observation_space = spaces.Discrete(1)
        self.single_action_space = spaces.Discrete(K)

    def _reset(self, run_seeds, runs):
        return np.zeros(self.n_runs, dtype=np.int64), {}

    def _step(self, actions, live):
        reward = np.full(self.n_runs, self.value)
        if live is not None:
            reward[~live] = 0.0
        return np.zeros(self.n_runs, dtype=np.int64), reward, np.zeros(self.n_runs, bool), {
            "regret": np.zeros(self.n_runs)
        }


def sentinel_env(value, n_runs, horizon):
    return ProblemVectorEnv(
        SentinelProblem(value, n_runs=n_runs), horizon, autoreset_mode=AutoresetMode.DISABLED
    )


# randomizers, with the envs (bare vector env factory) whose raw rewards fit them
HUBER = (-50.0, 150.0)
CASES = {
    "rr-bai": (
        lambda: RandomizedResponseRandomizer(0.7),
        lambda n, T: _bai_vec(n, T, law="beta"),
    ),
    "laplace-bai": (lambda: LaplaceRandomizer(0.7, (0, 1)), lambda n, T: _bai_vec(n, T)),
    "laplace-huber-clip": (
        lambda: LaplaceRandomizer(1.0, HUBER, clip=True),
        lambda n, T: HuberBanditVectorEnv(n, horizon=T, autoreset_mode=AutoresetMode.DISABLED),
    ),
    "gaussian-huber-clip": (
        lambda: GaussianRandomizer(0.5, 1e-5, HUBER, clip=True),
        lambda n, T: HuberBanditVectorEnv(n, horizon=T, autoreset_mode=AutoresetMode.DISABLED),
    ),
    "label-bai": (
        lambda: LaplaceRandomizer(1.0, (-1, 1), unit="label"),
        lambda n, T: _bai_vec(n, T, law="beta"),
    ),
    "label-linear": (
        lambda: LaplaceRandomizer(1.0, (-1, 1), unit="label"),
        lambda n, T: LinearContextualBanditVectorEnv(
            n, horizon=T, d=3, A=5, autoreset_mode=AutoresetMode.DISABLED
        ),
    ),
}


def _bai_vec(n, T, **kw):
    return BestArmIdentificationVectorEnv(
        num_envs=n, horizon=T, reward_mode="sample", wrong_penalty=0.0,
        autoreset_mode=AutoresetMode.DISABLED, **kw,
    )


def _actions(n, t, K):
    return (np.arange(n) + t) % K


def _rollout(venv, seed, T, K):
    venv.reset(seed=seed)
    out = [venv.step(_actions(venv.num_envs, t, K)) for t in range(T)]
    return np.array([o[1] for o in out]), [o[4] for o in out]  # rewards (T, n), infos


# -- 1. coupling: release = mechanism(raw, seed-only noise) -------------------------------------


def release_is_mechanism_of_raw(wrapped, bare, randomizer, seed: int, T: int, K: int) -> bool:
    """Whether the wrapper's stream equals ``randomizer(raw, noise)`` with the noise rebuilt from
    the run seeds only (child(run_seed, WRAPPER, 0)), run by run and step by step."""
    released, _ = _rollout(wrapped, seed, T, K)
    raw, _ = _rollout(bare, seed, T, K)
    noise = RunNoise([child(s, WRAPPER, 0) for s in bare.unwrapped.run_seeds])
    expected = np.array([randomizer(raw[t], noise) for t in range(T)])
    return bool(np.array_equal(released, expected))


@pytest.mark.parametrize("case", list(CASES))
def test_release_is_the_mechanism_of_the_raw_reward(case):
    make_randomizer, make_env = CASES[case]
    n, T = 200, 40
    wrapped = LocalDPVectorRewardWrapper(make_env(n, T), make_randomizer())
    assert release_is_mechanism_of_raw(wrapped, make_env(n, T), make_randomizer(), 13, T, 5)


def test_same_seeds_different_raw_rewards_get_the_same_noise():
    """Two instances with different raw rewards (μ1 vs μ4, Beta laws), same seeds: the Laplace
    noise (release − raw) is identical, so the noise carries nothing about the data."""
    n, T = 100, 30
    noises = []
    for instance in ("mu1", "mu4"):
        kw = dict(law="beta", instance=instance)
        rel, _ = _rollout(_laplace01(_bai_vec(n, T, **kw)), 3, T, 5)
        raw, _ = _rollout(_bai_vec(n, T, **kw), 3, T, 5)
        noises.append((rel - raw, raw))
    assert not np.allclose(noises[0][1], noises[1][1])  # the raw rewards differ
    np.testing.assert_allclose(noises[0][0], noises[1][0], rtol=0, atol=1e-12)


def _laplace01(env):
    return LocalDPVectorRewardWrapper(env, LaplaceRandomizer(1.0, (0, 1)))


class _RawScaledLaplace(LaplaceRandomizer):
    """Mutant: the noise scale depends on the raw reward (a data-dependent mechanism)."""

    def perturb(self, x, noise, runs):
        return x + (1.0 + 0.01 * x) * (super().perturb(x, noise, runs) - x)


class _ReusedNoise(RandomizedResponseRandomizer):
    """Mutant: draws a fresh uniform only every other step (noise reused across two users)."""

    _last = None

    def perturb(self, x, noise, runs):
        if self._last is None:
            self._last = noise.uniform(runs)
            u = self._last
        else:
            u, self._last = self._last, None
        return (u < special.expit(-self.epsilon) + x * (1 - 2 * special.expit(-self.epsilon))) * 1.0


def test_coupling_check_flags_a_data_dependent_mechanism():
    n, T = 50, 20
    mutant = LocalDPVectorRewardWrapper(_bai_vec(n, T, law="beta"), _RawScaledLaplace(1.0, (0, 1)))
    assert not release_is_mechanism_of_raw(
        mutant, _bai_vec(n, T, law="beta"), LaplaceRandomizer(1.0, (0, 1)), 13, T, 5
    )


# -- 2. sentinel: the released stream has exactly the mechanism's law ---------------------------


def rr_stream_fits(released: np.ndarray, q: float, alpha: float) -> bool:
    """Whether a (T, n) array of reports is i.i.d. Bernoulli(q): exact two-sided binomial test of
    the frequency of ones, and χ² independence tests on disjoint pairs within runs (steps 2k,
    2k+1) and across runs (runs 2j, 2j+1 at the same step). Bonferroni: each test at α/3."""
    y = released.astype(bool)
    m, k = y.size, int(y.sum())
    p_freq = stats.binomtest(k, m, q).pvalue
    pvals = [p_freq]
    half_t, half_n = y.shape[0] // 2, y.shape[1] // 2
    pairs = ((y[0:2 * half_t:2], y[1::2]), (y[:, 0:2 * half_n:2], y[:, 1::2]))
    for a, b in pairs:
        table = np.array(
            [[np.sum(~a & ~b), np.sum(~a & b)], [np.sum(a & ~b), np.sum(a & b)]], dtype=float
        )
        pvals.append(stats.chi2_contingency(table, correction=False).pvalue)
    return min(pvals) > alpha / 3


def _sentinel_release(randomizer, value, n=1000, T=1000, seed=0):
    venv = LocalDPVectorRewardWrapper(sentinel_env(value, n, T), randomizer)
    released, _ = _rollout(venv, seed, T, 2)
    return released


def test_randomized_response_of_a_sentinel_is_exactly_bernoulli_q():
    """Raw rewards fixed at r ∈ {0, 0.3, 1}, ε = 1: 10⁶ reports per r (1000 runs × 1000 steps) are
    i.i.d. Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)). Family-wise false alarm 1e-6 (Bonferroni over
    the three sentinels)."""
    eps = 1.0
    for r in (0.0, 0.3, 1.0):
        q = (r * (math.e**eps - 1) + 1) / (math.e**eps + 1)
        y = _sentinel_release(RandomizedResponseRandomizer(eps), r)
        assert set(np.unique(y)) <= {0.0, 1.0}
        assert rr_stream_fits(y, q, ALPHA / 3), r


@pytest.mark.parametrize(
    "mutant",
    [RandomizedResponseRandomizer(1.3), _ReusedNoise(1.0)],
    ids=["wrong-epsilon", "reused-noise"],
)
def test_sentinel_check_flags_a_wrong_or_correlated_randomized_response(mutant):
    q = 1 / (math.e + 1)  # r = 0, ε = 1
    assert not rr_stream_fits(_sentinel_release(mutant, 0.0), q, ALPHA)


@pytest.mark.parametrize(
    "randomizer,law",
    [
        (LaplaceRandomizer(0.5, (-1, 1)), stats.laplace(scale=4.0)),
        (GaussianRandomizer(0.5, 1e-5, (-1, 1), calibration="classical"),
         stats.norm(scale=2 * math.sqrt(2 * math.log(1.25e5)) / 0.5)),
    ],
    ids=["laplace", "gaussian"],
)
def test_additive_release_of_a_sentinel_is_sentinel_plus_the_noise_law(randomizer, law):
    """Raw rewards fixed at r = 0.25: release − r over 10⁶ values fits Lap(2/ε) / N(0, σ²)
    (KS + variance test, false alarm 1e-6). A noise scale × 0.97 is flagged."""
    y = _sentinel_release(randomizer, 0.25) - 0.25
    assert goodness_of_fit(y, law, ALPHA).passed
    assert not goodness_of_fit(0.97 * y, law, ALPHA).passed


# -- 3. info: identical with and without the wrapper --------------------------------------------


SINGLE_CASES = {
    "huber-laplace": (
        lambda: HuberBanditEnv(horizon=50),
        lambda e: LaplaceReward(e, 1.0, HUBER, clip=True),
    ),
    "bai-rr": (
        lambda: BestArmIdentificationEnv(law="beta", reward_mode="sample", wrong_penalty=0.0,
                                         horizon=50),
        lambda e: LocalDPRewardWrapper(e, RandomizedResponseRandomizer(1.0)),
    ),
}


def _info_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """``a`` (behind a wrapper) is ``b`` (the bare env's) without :data:`RAW_INFO_KEYS`."""
    b = public_step_info(b)
    return (not any(k in a for k in RAW_INFO_KEYS) and a.keys() == b.keys()
            and all(np.array_equal(a[k], b[k]) for k in a))



class _InfoLeak(gym.Wrapper):
    """Mutant: copies the raw reward into ``info`` (below the local-DP wrapper)."""

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        return obs, r, term, trunc, {**info, "raw_reward": r}


@pytest.mark.parametrize("case", list(SINGLE_CASES))
def test_info_is_identical_with_and_without_the_wrapper_single(case):
    make_env, wrap = SINGLE_CASES[case]
    bare, wrapped = make_env(), wrap(make_env())
    bare.reset(seed=1)
    wrapped.reset(seed=1)
    for t in range(50):
        _, raw, _, _, info_bare = bare.step(t % 5)
        _, _, _, _, info = wrapped.step(t % 5)
        assert _info_equal(info, info_bare)
        if case.startswith("huber"):
            assert not info_holds_values(info, np.array([raw]))


@pytest.mark.parametrize(
    "case", ["laplace-huber-clip", "gaussian-huber-clip", "rr-bai", "label-linear"]
)
def test_info_is_identical_with_and_without_the_wrapper_vector(case):
    make_randomizer, make_env = CASES[case]
    n, T = 64, 30
    raw, info_bare = _rollout(make_env(n, T), 2, T, 5)
    _, infos = _rollout(LocalDPVectorRewardWrapper(make_env(n, T), make_randomizer()), 2, T, 5)
    assert all(_info_equal(a, b) for a, b in zip(infos, info_bare, strict=True))
    if "huber" in case:
        assert not any(info_holds_values(i, raw.ravel()) for i in infos)


def test_info_holds_no_raw_label_on_the_dataset_linear_env():
    """On a data set instance the label is a function of the context, so every evaluation
    quantity (regret, expected rewards, the optimal action) determines it: ``info`` holds none of
    them — bare, behind a local-DP wrapper, as a vector env and a federated one — and the runner
    still measures regret, through ``env.unwrapped.evaluation()`` (the same numbers)."""
    kw = dict(contexts="dataset", dataset="wine", horizon=20)
    bare = LinearContextualBanditEnv(**kw)
    wrapped = LaplaceLabel(LinearContextualBanditEnv(**kw), 1.0)
    bare.reset(seed=0)
    wrapped.reset(seed=0)
    regret = 0.0
    for t in range(20):
        _, raw, _, _, info_bare = bare.step(t % 3)
        _, _, _, _, info = wrapped.step(t % 3)
        assert info == {} and info_bare == {}
        ev = bare.unwrapped.evaluation()
        assert ev["expected_reward"] == raw and ev["regret"] == (0.0 if raw == 1.0 else 2.0)
        ev_w = wrapped.unwrapped.evaluation()
        assert ev_w["regret"] == ev["regret"] and ev_w["optimal_action"] == ev["optimal_action"]
        np.testing.assert_array_equal(ev_w["expected_rewards"], ev["expected_rewards"])
        regret += ev["regret"]
    venv = LinearContextualBanditVectorEnv(num_envs=3, **kw)
    venv.reset(seed=0)
    _, _, _, _, info = venv.step(np.zeros(3, dtype=np.int64))
    assert not set(info) & {"regret", "expected_reward", "optimal_action", "expected_rewards"}
    assert venv.evaluation()["regret"].shape == (3,)
    fed = FederatedLinearBanditEnv(M=4, contexts="dataset", horizon=5)
    fed.reset(seed=0)
    assert fed.step(np.zeros(4, dtype=np.int64))[4] == {}
    assert set(fed.unwrapped.evaluation()) >= {"silo_regret", "optimal_action"}
    # the runner's regret comes through that channel: play() of the loop above, and simulate()
    assert play(_Cycle(), LinearContextualBanditEnv(**kw), seed=0)["regret"] == regret > 0
    res = simulate("linucb", "LinearContextualBandit-v0", n_runs=2, seed=3, horizon=30,
                   env_kwargs={"contexts": "dataset", "dataset": "wine"})
    env = LinearContextualBanditEnv(contexts="dataset", dataset="wine", horizon=30)
    one = play(agents.make("linucb", env), env, seed=3, run=1)
    assert res.regret[1] == one["regret"] and res.regret.max() > 0


class _Cycle:
    """A one-run agent that plays t mod 3 (the loop above)."""

    def __init__(self) -> None:
        self.t = 0

    def act(self, obs: np.ndarray) -> int:
        return self.t % 3

    def observe(self, action: int, reward: float, obs: np.ndarray) -> None:
        self.t += 1


def test_info_check_flags_a_raw_reward_in_info():
    env = LaplaceReward(_InfoLeak(HuberBanditEnv(horizon=5)), 1.0, HUBER, clip=True)
    bare = HuberBanditEnv(horizon=5)
    env.reset(seed=0)
    bare.reset(seed=0)
    _, raw, _, _, info_bare = bare.step(0)
    _, _, _, _, info = env.step(0)
    assert not _info_equal(info, info_bare) and info_holds_values(info, np.array([raw]))


# -- 4. attributes reachable from the wrapper ---------------------------------------------------


_OPAQUE = (type, types.ModuleType, types.FunctionType, types.MethodType,
           types.BuiltinFunctionType, str, bytes)


def reachable_floats(wrapper: Any) -> np.ndarray:
    """Every float stored in objects reachable from ``wrapper`` (its ``__dict__``, containers,
    arrays, nested objects), except through the wrapped env (``.env``: the simulated trust
    boundary)."""
    env = getattr(wrapper, "env", None)
    seen, stack, found = {id(env)}, [wrapper], []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, _OPAQUE):
            continue
        seen.add(id(obj))
        if isinstance(obj, (float, np.floating)):
            found.append(float(obj))
        elif isinstance(obj, np.ndarray):
            if obj.dtype.kind == "f":
                found.extend(obj.ravel().tolist())
            elif obj.dtype == object:
                stack.extend(obj.ravel().tolist())
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return np.array(found)


class _KeepsRaw(LaplaceRandomizer):
    """Mutant: remembers the last raw rewards it randomized."""

    def perturb(self, x, noise, runs):
        self.last = x.copy()
        return super().perturb(x, noise, runs)


@pytest.mark.parametrize("mutant", [False, True])
def test_no_raw_reward_is_reachable_from_the_wrapper(mutant):
    """Huber raw rewards are continuous: any stored copy would show up exactly."""
    n, T = 32, 20
    cls = _KeepsRaw if mutant else LaplaceRandomizer
    wrapped = LocalDPVectorRewardWrapper(
        HuberBanditVectorEnv(n, horizon=T, autoreset_mode=AutoresetMode.DISABLED),
        cls(1.0, HUBER, clip=True),
    )
    raw, _ = _rollout(
        HuberBanditVectorEnv(n, horizon=T, autoreset_mode=AutoresetMode.DISABLED), 4, T, 5
    )
    _rollout(wrapped, 4, T, 5)
    stored = np.isin(raw, reachable_floats(wrapped)).any()
    assert stored == mutant


# -- 5. the linear LDP wrappers (GaussianStatistics, LaplaceInput and their vector twins) -------
#
# The learner's observation is {"features": φ(x_{t+1}, ·), message_t}. Checks: (a) coupling — the
# message equals the randomizer applied to the raw chosen (φ, y) with draws rebuilt from the run
# seeds alone, the features are the bare env's observation, the reward is 0.0, and two instances
# with different raw labels get the very same noise; (b) sentinel — with (φ, y) fixed, message −
# statistic has exactly the mechanism's law; (c) info identical with and without the wrapper, no
# raw label in it; (d) no raw label reachable from the wrapper. Mutants must be flagged.

LIN_D, LIN_A = 3, 4
LINEAR = {
    "gaussian-statistics": lambda: GaussianStatisticsRandomizer(1.0, 1e-5, LIN_D),
    "laplace-input": lambda: LaplaceInputRandomizer(1.0, LIN_D),
}


def _linear_vec(n, T, **kw):
    return LinearContextualBanditVectorEnv(
        n, horizon=T, d=LIN_D, A=LIN_A, autoreset_mode=AutoresetMode.DISABLED, **kw
    )


def _statistic(randomizer, phi, y):
    """The message without noise (what the randomizer perturbs)."""
    if isinstance(randomizer, GaussianStatisticsRandomizer):
        return {"gram": phi[:, :, None] * phi[:, None, :], "moment": phi * y[:, None]}
    return {"phi_tilde": phi, "y_tilde": y[:, None]}


def _linear_rollout(venv, seed, T):
    """Observations before each step, the step outputs (obs, reward, info), actions."""
    obs, _ = venv.reset(seed=seed)
    before, steps, acts = [], [], []
    for t in range(T):
        a = _actions(venv.num_envs, t, LIN_A)
        before.append(obs)
        out = venv.step(a)
        steps.append((out[0], out[1], out[4]))
        acts.append(a)
        obs = out[0]
    return before, steps, acts


def message_is_mechanism_of_raw(wrapped, bare, randomizer, seed, T):
    """Whether every message equals ``randomizer(raw φ_chosen, raw y, draws)`` with the draws of
    run i rebuilt from child(child(run_seed_i, WRAPPER, 0), 0) only; also checks the features
    pass through unchanged and the reward is 0. Returns the noise (message − statistic)."""
    _, steps, acts = _linear_rollout(wrapped, seed, T)
    before, raw_steps, _ = _linear_rollout(bare, seed, T)
    n = bare.num_envs
    gens = generators([child(child(s, WRAPPER, 0), 0) for s in bare.unwrapped.run_seeds])
    m = randomizer.n_draws()
    fill = (lambda g: g.random((T, m))) if randomizer.draw_kind == "uniform" else (
        lambda g: g.standard_normal((T, m)))
    draws = np.stack([fill(g) for g in gens], axis=1)  # (T, n, m): a prefix of the buffer
    ok, noise = True, []
    for t in range(T):
        (obs, reward, _), (raw_obs, raw_y, _) = steps[t], raw_steps[t]
        phi = np.asarray(before[t], dtype=float)[np.arange(n), acts[t]]
        expected = randomizer(phi, np.asarray(raw_y), draws[t])
        ok &= np.array_equal(obs["features"], raw_obs) and not np.any(reward)
        ok &= all(np.allclose(obs[k], v, rtol=0, atol=1e-12) for k, v in expected.items())
        clean = _statistic(randomizer, *randomizer.validate(phi, np.asarray(raw_y)))
        noise.append(np.concatenate([(obs[k] - clean[k]).reshape(n, -1) for k in clean], axis=1))
    return bool(ok), np.stack(noise)


@pytest.mark.parametrize("case", list(LINEAR))
def test_linear_message_is_the_mechanism_of_the_raw_pair(case):
    n, T = 50, 30
    noises, labels = [], []
    for theta_seed in (0, 1):  # other θ*: other raw labels, same contexts, same seeds
        wrapped = LinearMessageVectorWrapper(_linear_vec(n, T, theta_seed=theta_seed),
                                             LINEAR[case]())
        bare = _linear_vec(n, T, theta_seed=theta_seed)
        ok, noise = message_is_mechanism_of_raw(wrapped, bare, LINEAR[case](), 7, T)
        assert ok
        noises.append(noise)
        labels.append(np.array([s[1] for s in _linear_rollout(bare, 7, T)[1]]))
    assert not np.array_equal(labels[0], labels[1])  # the raw labels differ
    np.testing.assert_allclose(noises[0], noises[1], rtol=0, atol=1e-12)  # the noise does not


class _LabelScaledGaussian(GaussianStatisticsRandomizer):
    """Mutant: the noise grows with the raw label (a data-dependent mechanism)."""

    def perturb(self, phi, y, draws):
        out = super().perturb(phi, y, draws)
        clean = _statistic(self, phi, y)
        return {k: clean[k] + (1.0 + 0.01 * y.reshape(-1, *[1] * (v.ndim - 1))) * (v - clean[k])
                for k, v in out.items()}


def test_linear_coupling_check_flags_a_data_dependent_mechanism():
    n, T = 20, 10
    mutant = LinearMessageVectorWrapper(_linear_vec(n, T), _LabelScaledGaussian(1.0, 1e-5, LIN_D))
    ok, _ = message_is_mechanism_of_raw(mutant, _linear_vec(n, T),
                                        GaussianStatisticsRandomizer(1.0, 1e-5, LIN_D), 7, T)
    assert not ok


class SentinelLinearProblem(Problem):
    """Every round shows the same features ``phi`` for every action; every label is ``y``."""

    def __init__(self, phi, y, n_runs):
        super().__init__(n_runs)
        self.phi, self.y = np.asarray(phi, dtype=float), float(y)
        self.single_observation_space = spaces.Box(-1.0, 1.0, (LIN_A, LIN_D), np.float64)
        self.single_action_space = spaces.Discrete(LIN_A)

    def _obs(self):
        return np.broadcast_to(self.phi, (self.n_runs, LIN_A, LIN_D)).copy()

    def _reset(self, run_seeds, runs):
        return self._obs(), {}

    def _step(self, actions, live):
        return self._obs(), np.full(self.n_runs, self.y), np.zeros(self.n_runs, bool), {}

    def public_info(self):
        return {"d": LIN_D, "A": LIN_A, "reward_bound": 1.0, "feature_bound": 1.0}


def _sentinel_noise(randomizer, n=400, T=250, phi=(0.6, 0.0, -0.48), y=0.3):
    venv = LinearMessageVectorWrapper(
        ProblemVectorEnv(SentinelLinearProblem(phi, y, n), T,
                         autoreset_mode=AutoresetMode.DISABLED), randomizer)
    venv.reset(seed=1)
    clean = _statistic(randomizer, np.array([phi]), np.array([y]))
    out = []
    for t in range(T):
        obs, *_ = venv.step(_actions(n, t, LIN_A))
        if isinstance(randomizer, GaussianStatisticsRandomizer):
            assert np.array_equal(obs["gram"], np.swapaxes(obs["gram"], 1, 2))  # mirrored copy
            iu = np.triu_indices(LIN_D)
            out.append((obs["gram"] - clean["gram"])[:, iu[0], iu[1]])
            out.append(obs["moment"] - clean["moment"])
        else:
            out.extend(obs[k] - clean[k] for k in clean)
    return np.concatenate([o.ravel() for o in out])


@pytest.mark.parametrize("case", list(LINEAR))
def test_linear_release_of_a_sentinel_is_statistic_plus_the_noise_law(case):
    """(φ, y) fixed: every released coordinate minus the statistic (upper triangle of φφᵀ and φy,
    or φ and y) over 10⁵ messages (9·10⁵ / 4·10⁵ values) fits N(0, σ²) / Lap(b) (KS + variance
    test, false alarm 1e-6); the noise scaled by 0.97 is flagged (power)."""
    randomizer = LINEAR[case]()
    law = (stats.norm(scale=randomizer.sigma) if case == "gaussian-statistics"
           else stats.laplace(scale=randomizer.scale))
    noise = _sentinel_noise(randomizer)
    assert goodness_of_fit(noise, law, ALPHA).passed
    assert not goodness_of_fit(0.97 * noise, law, ALPHA).passed


LINEAR_SINGLE = {
    "gaussian-statistics": lambda e: GaussianStatistics(e, 1.0, 1e-5, clip=True),
    "laplace-input": lambda e: LaplaceInput(e, 1.0, clip=True),
}
LINEAR_VECTOR = {
    "gaussian-statistics": lambda e: VectorGaussianStatistics(e, 1.0, 1e-5, clip=True),
    "laplace-input": lambda e: VectorLaplaceInput(e, 1.0, clip=True),
}


@pytest.mark.parametrize("case", list(LINEAR_SINGLE))
def test_linear_info_is_identical_and_reward_is_zero_single(case):
    """Gaussian label noise (continuous raw labels, clip=True): info equals the bare env's, holds
    no raw label, and the reward is 0.0 — the feedback is only the message."""
    kw = dict(d=LIN_D, A=LIN_A, noise="gaussian", horizon=40)
    bare = LinearContextualBanditEnv(**kw)
    wrapped = LINEAR_SINGLE[case](LinearContextualBanditEnv(**kw))
    bare.reset(seed=1)
    wrapped.reset(seed=1)
    for t in range(40):
        _, raw, _, _, info_bare = bare.step(t % LIN_A)
        obs, reward, _, _, info = wrapped.step(t % LIN_A)
        assert _info_equal(info, info_bare) and not info_holds_values(info, np.array([raw]))
        assert reward == 0.0
        assert not any(np.isin(np.asarray(v), [raw]).any() for v in obs.values())


@pytest.mark.parametrize("case", list(LINEAR_VECTOR))
def test_linear_info_is_identical_and_reward_is_zero_vector(case):
    n, T = 32, 30
    bare = _linear_vec(n, T, noise="gaussian")
    wrapped = LINEAR_VECTOR[case](_linear_vec(n, T, noise="gaussian"))
    _, raw_steps, _ = _linear_rollout(bare, 2, T)
    _, steps, _ = _linear_rollout(wrapped, 2, T)
    raw = np.concatenate([np.ravel(s[1]) for s in raw_steps])
    for (obs, reward, info), (_, _, info_bare) in zip(steps, raw_steps, strict=True):
        assert _info_equal(info, info_bare) and not info_holds_values(info, raw)
        assert not np.any(reward)
        assert not any(np.isin(np.asarray(v), raw).any() for v in obs.values())


class _KeepsRawLabel(GaussianStatisticsRandomizer):
    """Mutant: remembers the last labels it randomized."""

    def perturb(self, phi, y, draws):
        self.last = y.copy()
        return super().perturb(phi, y, draws)


@pytest.mark.parametrize("mutant", [False, True])
def test_no_raw_label_is_reachable_from_the_linear_wrapper(mutant):
    """Gaussian label noise, clip=True: raw labels inside (−1, 1) are continuous and kept as they
    are by the clipping, so any stored copy would show up exactly."""
    n, T = 32, 20
    cls = _KeepsRawLabel if mutant else GaussianStatisticsRandomizer
    wrapped = LinearMessageVectorWrapper(_linear_vec(n, T, noise="gaussian"),
                                         cls(1.0, 1e-5, LIN_D, clip=True))
    _, raw_steps, _ = _linear_rollout(_linear_vec(n, T, noise="gaussian"), 4, T)
    raw = np.concatenate([np.ravel(s[1]) for s in raw_steps])
    raw = raw[np.abs(raw) < 1.0]
    _linear_rollout(wrapped, 4, T)
    assert np.isin(raw, reachable_floats(wrapped)).any() == mutant
