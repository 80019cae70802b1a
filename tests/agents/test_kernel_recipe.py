"""The recipe for a compiled agent (docs/design/contributing.md, "Recipe: a compiled agent"),
followed step by step by a toy agent defined here and nowhere else: explore-then-commit, m
uniformly random pulls per arm's worth of rounds, then the best empirical mean.

Registered under a name, it runs on the fast path and step by step to the same numbers, like
every zoo agent. Its kernels are defined in this file, outside ``privenv._jit.KERNEL_FILES``, so
they and the drivers compiled for its classes are compiled in this process and never cached
(``privenv._jit``, "Cache"): a test cannot leave stale machine code behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import gymnasium as gym
import numpy as np
import pytest

import privenv.simulation as simulation
from privenv._jit import jit
from privenv.agents import REGISTRY, make
from privenv.agents.kernel import KernelAgent, agent_act, agent_observe
from privenv.parameters import Integer, Param
from privenv.seeding import NoiseView, take_uniform
from privenv.simulation import fast_path, make_vector_env, play, simulate

ROOT = Path(__file__).resolve().parents[2]


# 1. the state: arrays, one row per run
class ToyState(NamedTuple):
    t: np.ndarray
    counts: np.ndarray
    sums: np.ndarray

    @classmethod
    def start(cls, n_runs: int, K: int) -> ToyState:
        return cls(t=np.zeros(n_runs, np.int64), counts=np.zeros((n_runs, K), np.int64),
                   sums=np.zeros((n_runs, K)))


# 2. the constants
class ToyParams(NamedTuple):
    K: int
    explore: int  # rounds of uniform exploration: explore·K
    words_per_step: int = 0


# 3. the kernels, registered for the state class
@agent_act.register(ToyState)
@jit(inline="always")
def toy_act(s: ToyState, p: ToyParams, noise: NoiseView, run: int) -> int:
    if s.t[run] < p.explore * p.K:  # explore: a uniformly random arm
        return min(int(take_uniform(noise, run) * p.K), p.K - 1)
    best, top = 0, -np.inf  # commit: the best empirical mean (untried arms first)
    for a in range(p.K):
        mean = s.sums[run, a] / s.counts[run, a] if s.counts[run, a] else np.inf
        if mean > top:
            best, top = a, mean
    return best


@agent_observe.register(ToyState)
@jit(inline="always")
def toy_observe(s: ToyState, p: ToyParams, noise: NoiseView, run: int, action: int,
                value: float) -> None:
    s.counts[run, action] += 1
    s.sums[run, action] += value
    s.t[run] += 1


# 4. the class
class ExploreThenCommit(KernelAgent):
    """Explore-then-commit (a toy).

    Args:
        K: number of arms.
        explore: rounds of uniform exploration per arm.
        n_runs: number of runs.
    """

    name = "toy-etc"
    families = ("huber",)
    parameters = {"K": Param(Integer(low=2), problem="K"), "explore": Param(Integer(low=1))}
    State = ToyState

    def __init__(self, K: int, explore: int = 20, n_runs: int = 1) -> None:
        self.set_params(locals())
        super().__init__(n_runs)

    def kernel_params(self) -> ToyParams:
        return ToyParams(K=self.K, explore=self.explore)

    def new_state(self) -> ToyState:
        return ToyState.start(self.n_runs, self.K)


# 6. the registry (5., the cache key, is for files of the package: see the module docstring)
@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(REGISTRY, "toy-etc", (__name__, "ExploreThenCommit"))
    return "toy-etc"


ENV, KW, T = "HuberBandit-v0", {"means": [1.0, 0.5, 0.0], "inlier": "gaussian"}, 2000


def test_the_toy_runs_fast_and_step_by_step_to_the_same_numbers(registered, monkeypatch):
    venv = make_vector_env(ENV, 4, T, **KW)
    agent = make(registered, venv, 4, explore=30)
    assert agent.K == 3  # the env's, through the declaration
    venv.reset(seed=0)
    agent.reset(seed=0)
    assert fast_path(agent, venv) is not None  # 7. what the runner drives inside compiled code
    fast = simulate(registered, ENV, n_runs=4, horizon=T, seed=9, env_kwargs=KW,
                    agent_kwargs={"explore": 30})
    monkeypatch.setattr(simulation, "fast_path", lambda agent, venv: None)
    stepwise = simulate(registered, ENV, n_runs=4, horizon=T, seed=9, env_kwargs=KW,
                        agent_kwargs={"explore": 30})
    np.testing.assert_array_equal(fast.regret_curve, stepwise.regret_curve)
    env = gym.make(ENV, horizon=T, **KW)
    one = play(make(registered, env, 1, explore=30), env, seed=9, run=2)
    assert one["regret"] == pytest.approx(fast.regret[2], rel=1e-12)
    assert 0 < fast.regret.mean() < 0.2 * T  # it learns: uniform play costs 0.5·T


def test_a_subclass_that_overrides_observe_in_python_runs_step_by_step():
    class Recording(ExploreThenCommit):
        def observe_batch(self, actions, rewards, observations) -> None:
            super().observe_batch(actions, rewards, observations)

    assert ExploreThenCommit.compiled and not Recording.compiled
    assert Recording(K=3, n_runs=2).kernel_view() is None


def test_the_recipe_names_every_step():
    recipe = (ROOT / "docs/design/contributing.md").read_text().split(
        "## Recipe: a compiled agent")[1].split("\n## ")[0]
    for step in ("NamedTuple", "words_per_step", "agent_act", "agent_observe", "agent_init",
                 "agent_ready", "inline=\"always\"", "KernelAgent", "State =", "kernel_params",
                 "new_state", "by name", "KERNEL_FILES", "REGISTRY", "tests/test_kernels.py",
                 "take_uniform"):
        assert step in recipe, step
