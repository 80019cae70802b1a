"""``sampler="exact"`` on the LPLR agent (agents/lplr.py) and on the learners behind the linear
message wrappers (the wrappers' own exact tests are in tests/wrappers/test_ldp_linear.py).

Deterministic checks with fixed seeds (no false-alarm probability), except the noise-mean check,
whose 6-standard-error tolerance gives a false alarm below 10⁻⁸.
"""

from __future__ import annotations

import math
from fractions import Fraction

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv.agents.lplr import LPLRExact, LPLRRegCB
from privenv.privacy import exact as ex
from privenv.privacy.accounting import rho_for_epsilon
from privenv.privacy.wishart import gram_gaussian_sigma
from privenv.seeding import RunNoise
from privenv.simulation import simulate, system_env

ENV = "LinearContextualBandit-v0"
SMALL = {"d": 3, "A": 4}


# -- LPLR ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("eps", "delta", "d"), [(1.0, 1e-6, 2), (3.0, 1e-5, 3), (0.1, 1e-7, 1)])
def test_lplr_exact_guarantee_composes_the_parts(eps, delta, d):
    agent = LPLRRegCB(d=d, A=3, horizon=1000, epsilon=eps, delta=delta, sampler="exact")
    x = agent.exact
    assert isinstance(x, LPLRExact)
    third = Fraction(eps) / 3
    assert x.count.params.epsilon_exact <= third and x.lam.params.epsilon_exact <= third
    assert x.epsilon_gram <= third
    total = x.count.params.epsilon_exact + x.lam.params.epsilon_exact + Fraction(x.epsilon_gram)
    assert Fraction(x.epsilon_update) >= total
    assert x.ci.params.epsilon_exact <= Fraction(eps)
    g = agent.privacy
    assert (g.sampler, g.delta) == ("exact", delta)
    assert g.epsilon == max(x.epsilon_update, x.ci.epsilon) <= eps
    assert g.epsilon > 0.99 * eps
    assert x.gram.sigma >= gram_gaussian_sigma(eps / 3, delta, d)  # the float σ is the floor
    assert x.gram.rho(math.sqrt(2), d * (d + 1)) <= rho_for_epsilon(float(third), delta)
    flt = LPLRRegCB(d=d, A=3, horizon=1000, epsilon=eps, delta=delta)
    assert flt.exact is None and flt.privacy.sampler == "float" and flt.privacy.epsilon == eps


def test_lplr_exact_run_i_alone_equals_run_i_in_a_batch_and_float_unchanged():
    T = 700
    kw = dict(d=2, A=10, horizon=T, epsilon=1e6, n0=8)
    env_kw = {"d": 2}

    def regret(sampler, runs, first_run=0):
        agent = LPLRRegCB(**kw, sampler=sampler, n_runs=runs)
        return simulate(agent, ENV, n_runs=runs, horizon=T, seed=11, first_run=first_run,
                        env_kwargs=env_kw).regret_curve

    batch = regret("exact", 3)
    np.testing.assert_array_equal(batch[2], regret("exact", 1, first_run=2)[0])
    assert not np.array_equal(batch[0], batch[1])
    default = simulate(LPLRRegCB(**kw, n_runs=3), ENV, n_runs=3, horizon=T, seed=11,
                       env_kwargs=env_kw).regret_curve
    np.testing.assert_array_equal(default, regret("float", 3))
    assert not np.array_equal(default, batch)


def test_lplr_exact_releases_are_grid_points_and_the_ledger_charges_the_declared_epsilon():
    T, R = 900, 2
    agent = LPLRRegCB(d=2, A=4, horizon=T, epsilon=0.5, n0=8, sampler="exact", n_runs=R)
    seen: list[dict[str, np.ndarray]] = []
    cls = agent.users_class

    class Recording(cls):
        def release(self):
            out = super().release()
            seen.append(out)
            return out

    agent.users_class = Recording
    simulate(agent, ENV, n_runs=R, horizon=T, seed=1, ledger=True, env_kwargs={"d": 2, "A": 4})
    x = agent.exact
    grids = {"count": x.count, "lam": x.lam, "gram": x.gram, "eps": x.ci}
    assert {k for out in seen for k in out} == set(grids)
    for out in seen:
        for k, v in out.items():
            g = grids[k].grid.granularity
            assert np.all(v / g == np.round(v / g)), k
        if "gram" in out:
            np.testing.assert_array_equal(out["gram"], np.swapaxes(out["gram"], -1, -2))
    released = agent.phase_start
    mask = np.zeros((R, T), dtype=bool)
    mask[:, :released] = True
    agent.ledger.assert_each_user_charged_exactly(agent.privacy.epsilon, users_mask=mask)


def test_lplr_exact_noise_sum_is_every_users_noise():
    """The phase's noise on a bin is the sum of its n users' own draws, in order."""
    from privenv.agents.lplr import LPLRUsers

    x = LPLRExact.calibrate(1.0, 1e-6, 2)
    seeds = [np.random.SeedSequence(4)]
    users = LPLRUsers(2, 1, [np.random.default_rng(0)], 1.0, "gaussian", 1e-6, x,
                      RunNoise(seeds))
    users.start_phase("ci", 1, 3, 5, np.array([[[True, False, True]]]))
    out = users.release()["eps"][0, 0]
    z = ex.run_discrete(RunNoise(seeds), np.array([0]), 10, x.ci.params)[0].reshape(5, 2)
    np.testing.assert_array_equal(out, np.array([z[:, 0].sum(), 0, z[:, 1].sum()])
                                  * x.ci.grid.granularity)


def test_lplr_exact_bad_input():
    with pytest.raises(ValueError, match="sampler"):
        LPLRRegCB(d=2, A=3, horizon=100, sampler="bogus")
    with pytest.raises(ValueError, match="wishart='gaussian'"):
        LPLRRegCB(d=2, A=3, horizon=100, sampler="exact", wishart="paper")


@pytest.mark.parametrize("name", ["ldp-linucb", "input-perturbation-ols"])
def test_the_message_learners_pass_their_sampler_to_their_users(name):
    """``sampler="exact"`` on the learner reaches the wrapper it applies (its declared guarantee
    and its messages on the grid), and run i alone equals run i in a batch."""
    from privenv.agents import make

    kw = {"sampler": "exact"}
    batch = simulate(name, "LinearContextualBandit-v0", n_runs=3, horizon=30, seed=4,
                     agent_kwargs=kw)
    alone = simulate(name, "LinearContextualBandit-v0", n_runs=1, first_run=1, horizon=30,
                     seed=4, agent_kwargs=kw)
    np.testing.assert_array_equal(batch.regret_curve[1], alone.regret_curve[0])
    assert batch.privacy.sampler == "exact"
    env = gym.make("LinearContextualBandit-v0")
    agent = make(name, env, 1, **kw)
    wrapped = system_env(agent, env)
    assert wrapped.privacy.sampler == "exact" and wrapped.randomizer.sampler == "exact"
