"""The bad-input table of SPEC §1.1 in one place: every entry raises a clear ``ValueError`` (or a
Gymnasium error where Gymnasium defines one) naming the parameter. Each family's own tests have
longer tables; this one checks that every kind of mistake the SPEC lists is covered end to end,
through the public entry points a user calls (``gym.make``, ``privenv.agents.make``, wrappers,
``simulate``)."""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest

import privenv  # noqa: F401
from privenv import agents
from privenv.simulation import simulate
from privenv.wrappers import GaussianReward, LaplaceReward, RandomizedResponse


class _NaNLaw:
    """A user-supplied 'frozen law' that returns NaN rewards."""

    def rvs(self, size, random_state):
        return np.full(size, np.nan)

    def mean(self):
        return 0.0

    def var(self):
        return 1.0


def _step(env_id: str, action, wrap=None, **kwargs) -> Callable[[], object]:
    def call():
        env = gym.make(env_id, disable_env_checker=True, **kwargs)
        if wrap is not None:
            env = wrap(env)
        env.reset(seed=0)
        return env.step(action)

    return call


def _agent(name: str, **params) -> Callable[[], object]:
    return lambda: agents.make(name, "HuberBandit-v0", 1, **params)


BAD_INPUT: list[tuple[str, Callable[[], object], str]] = [
    # ε ≤ 0 or NaN
    ("agent ε = 0", _agent("prae-r", epsilon=0.0), "epsilon"),
    ("agent ε = NaN", _agent("prae-c", epsilon=float("nan")), "epsilon"),
    ("agent ε < 0", _agent("dp-se", epsilon=-1.0), "epsilon"),
    ("wrapper ε = 0", lambda: RandomizedResponse(gym.make("HuberBandit-v0"), epsilon=0.0),
     "epsilon"),
    # δ outside (0, 1)
    ("agent δ = 1", _agent("dprse", delta=1.0), "delta"),
    ("wrapper δ = 0",
     lambda: GaussianReward(gym.make("HuberBandit-v0"), epsilon=0.5, delta=0.0,
                            reward_range=(-200.0, 300.0)), "delta"),
    # contamination outside its allowed range (env) and beyond an agent's breakdown point
    ("env α = 1", lambda: gym.make("HuberBandit-v0", alpha=1.0), "alpha"),
    ("env α < 0", lambda: gym.make("HuberBandit-v0", alpha=-0.01), "alpha"),
    ("PRAE-C α ≥ 0.133", _agent("prae-c", alpha=0.2), "alpha"),
    # fewer than 2 arms
    ("Huber K = 1", lambda: gym.make("HuberBandit-v0", K=1), "K"),
    ("BAI one arm", lambda: gym.make("BestArmIdentification-v0", means=[0.5]), "means"),
    ("agent K = 1", lambda: agents.agent_class("ucb1")(K=1), "K"),
    # means outside the support of the reward law
    ("Bernoulli mean 1.2",
     lambda: gym.make("BestArmIdentification-v0", means=[1.2, 0.5]), "means"),
    # rewards outside [0, 1] for randomized response (never clipped silently)
    ("RR on unbounded rewards", _step("HuberBandit-v0", 0, lambda e: RandomizedResponse(e, 1.0)),
     "reward"),
    ("Laplace reward outside range",
     _step("HuberBandit-v0", 0, lambda e: LaplaceReward(e, 1.0, reward_range=(0.0, 1.0))),
     "reward"),
    # an action out of range
    ("Huber action K", _step("HuberBandit-v0", 5), "action"),
    ("BAI action 2K", _step("BestArmIdentification-v0", 10), "action"),
    ("linear action A", _step("LinearContextualBandit-v0", 10), "action"),
    # NaN rewards from a user-supplied law
    ("NaN inlier law", _step("HuberBandit-v0", 0, inlier=_NaNLaw()), "non-finite"),
    # mismatched shapes
    ("θ* of the wrong dimension",
     lambda: gym.make("LinearContextualBandit-v0", d=3, theta=[0.1, 0.2]), "theta"),
    ("vector actions of the wrong shape",
     lambda: _vector_step(np.zeros(3, dtype=np.int64)), "actions"),
    ("runner: agent built for other n_runs",
     lambda: simulate(agents.make("ucb1", "HuberBandit-v0", 2), n_runs=3, horizon=5), "n_runs"),
    # unknown names
    ("unknown agent", lambda: agents.make("no-such-agent", "HuberBandit-v0"), "agent"),
    ("unknown agent parameter", _agent("ucb1", epsilon=1.0), "parameter"),
]


def _vector_step(actions: np.ndarray) -> object:
    venv = gym.make_vec("HuberBandit-v0", num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    return venv.step(actions)


@pytest.mark.parametrize("case,call,param", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_raises_a_clear_error(case, call, param):
    with pytest.raises(ValueError, match=param):
        call()
