"""Sizes checked before a run allocates (privenv._memory): the memory estimate from sizes is a
lower bound of what every registered agent and env really allocate (so refusing a batch whose
estimate exceeds memory never refuses one that fits), it is computed without building anything,
and the refusals come before any env is built (the command-line cases are in
tests/test_bad_input.py)."""

from __future__ import annotations

import tracemalloc

import gymnasium as gym
import pytest

import privenv  # noqa: F401
from privenv import agents
from privenv._memory import SIZE_LIMITS, check_runs_fit, run_bytes
from privenv.envs import ENV_IDS, env_family, env_sizes
from privenv.simulation import estimate_run_bytes, make_vector_env, simulate, system_env

#: sizes large enough that the per-run arrays dominate what a run holds, small enough to build
#: three runs of each agent in a fraction of a second
SIZES = {
    "huber": {"K": 3000},
    "bai": {"means": [0.9] + [0.5] * 2999},
    "bernoulli": {"means": [0.9] + [0.5] * 2999},
    "linear": {"d": 40, "A": 30},
    "federated": {"M": 6, "K": 20, "d": 12},
}
RUNS = 3
#: agents that need other sizes or env arguments (LPLR: d ≤ 6 at its defaults; the super
#: agent's central protocol: bounded rewards)
OVERRIDES = {"lplr-regcb": {"d": 6, "A": 60}, "super-agent": {"noise": "bounded"}}


def _first_id(family: str) -> str:
    return next(e for e in ENV_IDS if env_family(e) == family)


CASES = [(name, family) for name in sorted(agents.REGISTRY)
         for family in agents.agent_class(name).families]


def _measured_per_run(name: str, env_id: str, env_kwargs: dict) -> float:
    """Bytes per run that the env and agent of ``n`` runs hold after reset (tracemalloc, which
    numpy reports its buffers to; memory mapped by privenv.seeding.sparse_empty is not seen, so
    this is itself at most what a run holds), from builds of 1 and 1 + RUNS runs."""
    kept = []
    held = [_build(name, env_id, env_kwargs, 1)]  # (once first: one-time caches and imports)
    tracemalloc.start()
    try:
        for n in (1, 1 + RUNS):
            before = tracemalloc.get_traced_memory()[0]
            held.append(_build(name, env_id, env_kwargs, n))
            kept.append(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()
    return (kept[1] - kept[0]) / RUNS


def _build(name: str, env_id: str, env_kwargs: dict, n: int) -> tuple:
    venv = make_vector_env(env_id, n, 100, **agents.env_kwargs_for(name, env_kwargs))
    agent = agents.make(name, venv, n)
    venv = system_env(agent, venv)
    venv.reset(seed=0)
    agent.reset(seed=0)
    return venv, agent


@pytest.mark.parametrize("name,family", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_the_estimate_is_a_lower_bound_of_every_agents_run(name, family):
    env_id = _first_id(family)
    env_kwargs = {**SIZES[family], **OVERRIDES.get(name, {})}
    sizes = env_sizes(env_id, agents.env_kwargs_for(name, env_kwargs))
    keys = {p.problem for p in agents.agent_class(name).parameters.values() if p.problem}
    estimate = run_bytes(family, sizes, keys)
    measured = _measured_per_run(name, env_id, env_kwargs)
    assert 0 < estimate <= measured, (sizes, estimate, measured)


@pytest.mark.parametrize("env_id", list(ENV_IDS))
def test_env_sizes_are_the_built_instances_sizes_without_building_it(env_id, monkeypatch):
    family = env_family(env_id)
    variants = {
        "huber": [{}, {"K": 7}, {"means": [1.0, 2.0, 3.0]}],
        "bai": [{}, {"instance": "mu4"}, {"means": [0.9, 0.5, 0.1]}],
        "bernoulli": [{}, {"instance": "mu2"}, {"means": [0.9, 0.5, 0.1]}],
        "linear": [{}, {"d": 3, "A": 4}, {"contexts": "disjoint", "A": 3},
                   {"contexts": "hard"}, {"contexts": "dataset", "dataset": "digits"}],
        "federated": [{}, {"M": 3, "K": 4, "d": 5}],
    }[family]
    for kwargs in variants:
        built = gym.make(env_id, disable_env_checker=True, **kwargs).unwrapped.public_info()
        with monkeypatch.context() as m:
            m.setattr(gym, "make", _no_build)
            m.setattr(gym, "make_vec", _no_build)
            sizes = env_sizes(env_id, kwargs)
        assert sizes and sizes == {k: built[k] for k in sizes}, kwargs


def _no_build(*args, **kwargs):
    raise AssertionError("an env was built before the sizes were checked")


def test_the_must_show_sizes_are_refused_before_anything_is_built(monkeypatch):
    """K = 10⁸ (it ran > 150 s at 6.4 GB), LinUCB's d = 10⁵ (9 GB before its MemoryError), a
    horizon of 10¹², a disjoint instance whose derived d is 5·10⁴, A·d beyond memory for one run
    and n_runs · d² beyond it for a batch: each a ValueError naming the size, no env built."""
    monkeypatch.setattr(gym, "make", _no_build)
    monkeypatch.setattr(gym, "make_vec", _no_build)
    cases = [
        (dict(agent="ucb1", env="HuberBandit-v0", env_kwargs={"K": 10**8}, horizon=50),
         r"^K must be at most 10\*\*6 for a run .*got 100000000$"),
        (dict(agent="linucb", env="LinearContextualBandit-v0", env_kwargs={"d": 10**5},
              horizon=50), r"^d must be at most 10\*\*4 for a run .*got 100000$"),
        (dict(agent="ucb1", env="HuberBandit-v0", horizon=10**12),
         r"^horizon must be at most 10\*\*10 for a run .*got 1000000000000$"),
        (dict(agent="linucb", env="LinearContextualBandit-v0", horizon=10,
              env_kwargs={"contexts": "disjoint", "A": 10**4}),
         r"^d must be at most 10\*\*4 for a run .*got 50000$"),
        (dict(agent="linucb", env="LinearContextualBandit-v0", horizon=10,
              env_kwargs={"A": 10**6, "d": 10**4}),
         r"^one run \(A=1000000, d=10000, horizon=10\) needs at least .* GB of memory"),
        (dict(agent="linucb", env="LinearContextualBandit-v0", horizon=10, n_runs=10**6,
              env_kwargs={"d": 1000}), r"^n_runs=1000000 \(.* per run\) needs at least .* TB"),
        (dict(agent="ucb1", env="HuberBandit-v0", horizon=50, n_checkpoints=10**8),
         r"^n_checkpoints must be an integer in \[1, 50\] .*got 100000000$"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            simulate(kwargs.pop("agent"), kwargs.pop("env"), **kwargs)


def test_checkpoints_up_to_the_horizon_or_the_default_are_accepted():
    assert simulate("ucb1", horizon=50, n_checkpoints=50).checkpoint_times[-1] == 50
    assert len(simulate("ucb1", horizon=5).checkpoint_times) == 5  # the default 40: every step


def test_the_ranges_are_the_documented_ones():
    assert {k: v[0] for k, v in SIZE_LIMITS.items()} == {
        "K": 10**6, "A": 10**6, "d": 10**4, "M": 10**4, "horizon": 10**10}
    # at the limits, a run is accepted (K = 10⁶ arms: 48 MB per run at least)
    per_run, sizes = estimate_run_bytes("HuberBandit-v0", "ucb1", 40, 10**10, {"K": 10**6})
    assert sizes == {"K": 10**6, "horizon": 10**10} and 48 * 10**6 <= per_run < 10**8
    check_runs_fit(2, per_run, sizes=sizes)
