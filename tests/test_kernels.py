"""The compiled kernels: one algorithm, two drivers, the same numbers (privenv/agents/kernel.py).

Every scalar-state agent is driven three ways on the same seeds: the fast path (each run played to
its own end inside compiled code), the step-by-step runner (every run together through the vector
env, the kernels called once per step) and, for one run, the plain ``gym.make`` loop. All must
agree exactly. The fast path must not step a run after it has stopped, and compiled kernels must
load from the on-disk cache in a new process.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import privenv.seeding as seeding
import privenv.simulation as simulation
from privenv import _jit
from privenv.agents import env_kwargs_for, make
from privenv.simulation import fast_path, make_vector_env, play, simulate
from privenv.wrappers import LaplaceReward, VectorLaplaceReward

ROOT = Path(__file__).resolve().parents[1]
HUBER, BAI, BERNOULLI = "HuberBandit-v0", "BestArmIdentification-v0", "BernoulliBandit-v0"
EASY = {"means": [1.0, 0.6, 0.2], "inlier": "gaussian", "alpha": 0.05}

#: (agent, env, env kwargs, agent kwargs, horizon): every scalar-state agent and its branches
CASES = [
    ("ucb1", HUBER, EASY, {}, 3000),
    ("eps-greedy", HUBER, EASY, {"explore": 0.2}, 3000),
    ("robust-ucb", HUBER, {"alpha": 0.1, "contamination": "adversarial"}, {}, 4000),
    ("prae-r", HUBER, EASY, {"epsilon": 1.0, "first_phase": "round-random"}, 4000),
    ("prae-c", HUBER, {**EASY, "alpha": 0.0}, {"epsilon": 1.0, "first_phase": "greedy",
                                               "arm_order": "random"}, 4000),
    ("dprse", HUBER, EASY, {"epsilon": 1.0}, 4000),
    ("dp-se", HUBER, EASY, {"epsilon": 2.0, "arm_order": "random"}, 4000),
    ("ttucb", BAI, {"instance": "mu3"}, {}, 10**6),
    ("ttucb-dpa", BAI, {"instance": "mu3"}, {"threshold": "empirical"}, 10**6),
    ("ctb-tt", BAI, {"instance": "mu3"}, {"epsilon": 2.0}, 10**6),
    ("gaussian-ldp-ttucb", BAI, {"instance": "mu3"}, {"epsilon": 5.0}, 10**6),
    ("adap-tt", BAI, {"instance": "mu3"}, {"epsilon": 1.0}, 10**6),
    ("adap-tt-star", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "threshold": "empirical"}, 10**6),
    ("daf-wrapper", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "sampling": "lucb"}, 10**6),
    ("daf-wrapper", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "sampling": "uniform"}, 10**6),
    ("dp-se", BAI, {"instance": "mu3", "reward_mode": "cost"}, {"epsilon": 1.0}, 10**6),
    ("dp-top-two", BAI, {"instance": "mu3"}, {"epsilon": 1.0}, 10**6),
    ("dp-top-two", BAI, {"instance": "mu4", "reward_mode": "cost"},
     {"epsilon": 0.5, "ratio": 1.5, "challenger": "tc", "challenger_weights": "pulls"}, 10**6),
    ("kl-ucb", BERNOULLI, {"instance": "mu2"}, {}, 3000),
    ("thompson", BERNOULLI, {"instance": "mu2"}, {}, 3000),
    ("imed", BERNOULLI, {"instance": "mu2"}, {}, 3000),
    ("dp-ucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 2.0}, 3000),
    ("dp-ucb-hybrid", BERNOULLI, {"instance": "mu3"}, {"epsilon": 2.0}, 3000),
    ("adap-ucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("adap-klucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("dp-klucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("dp-imed", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("lazy-dp-ts", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("ldp-ucb-l", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("ldp-ucb-b", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
    ("ldp-se", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0}, 3000),
]
#: every agent with a sampler choice, with the exact sampler (privenv.privacy.exact)
EXACT_CASES = [
    ("prae-r", HUBER, EASY, {"epsilon": 1.0, "first_phase": "greedy", "sampler": "exact"}, 4000),
    ("prae-c", HUBER, {**EASY, "alpha": 0.0}, {"epsilon": 1.0, "first_phase": "greedy",
                                               "sampler": "exact"}, 4000),
    ("dprse", HUBER, EASY, {"epsilon": 4.0, "sampler": "exact"}, 20_000),
    ("dp-se", HUBER, EASY, {"epsilon": 2.0, "sampler": "exact"}, 4000),
    ("gaussian-ldp-ttucb", BAI, {"instance": "mu3"}, {"epsilon": 5.0, "sampler": "exact"}, 10**6),
    ("adap-tt", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "sampler": "exact"}, 10**6),
    ("adap-tt-star", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "threshold": "empirical",
                                                "sampler": "exact"}, 10**6),
    ("dp-se", BAI, {"instance": "mu3", "reward_mode": "cost"}, {"epsilon": 1.0,
                                                                 "sampler": "exact"}, 10**6),
    ("adap-klucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0, "sampler": "exact"}, 3000),
    ("dp-klucb", BERNOULLI, {"instance": "mu3"}, {"epsilon": 1.0, "sampler": "exact"}, 3000),
    ("dp-top-two", BAI, {"instance": "mu3"}, {"epsilon": 1.0, "sampler": "exact"}, 10**6),
]
CASES += EXACT_CASES
IDS = [f"{c[0]}-{c[1].split('-')[0]}" + ("-exact" if "sampler" in c[3] else "")
       + (f"-{c[3]['sampling']}" if "sampling" in c[3] else "") for c in CASES]
#: the exact-sampler cases driven both ways by default: one per kind of release (an elimination
#: agent of the Huber family, a central Top Two agent, a local-DP reward randomizer, a Bernoulli
#: regret agent). The others' fast path and step-by-step runs are ``slow`` (``make test-slow``):
#: an agent's sampler choice only selects the shared exact draws
#: (:mod:`privenv.privacy.draws`), which the kept cases cover in every driver, and
#: :func:`test_the_sampler_choice_reaches_the_kernel_record` checks by default that each agent's
#: choice reaches its compiled code. In a cold full run each case cost 10–25 s of CPU over this
#: file's tests, mostly compiling a fast path and a step-by-step runner of its own.
EXACT_BY_DEFAULT = ("prae-c-HuberBandit-exact", "adap-tt-BestArmIdentification-exact",
                    "gaussian-ldp-ttucb-BestArmIdentification-exact",
                    "dp-klucb-BernoulliBandit-exact")


#: ``pytest.param`` per case, ``slow`` for the exact cases not in :data:`EXACT_BY_DEFAULT`
PARAMS = [pytest.param(c, id=i, marks=[pytest.mark.slow] if i.endswith("-exact") and i not in
                       EXACT_BY_DEFAULT else []) for c, i in zip(CASES, IDS, strict=True)]
EXACT_PARAMS = [p for p in PARAMS if p.id.endswith("-exact")]


def _simulate(case, n_runs, first_run=0, **kw):
    name, env, env_kwargs, agent_kwargs, horizon = case
    return simulate(name, env, n_runs=n_runs, horizon=horizon, seed=7, first_run=first_run,
                    env_kwargs=env_kwargs_for(name, env_kwargs), agent_kwargs=agent_kwargs, **kw)


def _same(a, b):
    np.testing.assert_array_equal(a.steps, b.steps)
    np.testing.assert_array_equal(a.regret_curve, b.regret_curve)
    assert a.episode.keys() == b.episode.keys()
    for key in a.episode:
        np.testing.assert_array_equal(a.episode[key], b.episode[key], err_msg=key)


@pytest.mark.parametrize("case", PARAMS)
def test_fast_path_equals_the_step_by_step_runner(case, monkeypatch):
    fast = _simulate(case, 6)
    monkeypatch.setattr(simulation, "fast_path", lambda agent, venv: None)
    stepwise = _simulate(case, 6)
    _same(fast, stepwise)


@pytest.mark.parametrize("case", PARAMS[::3])
def test_fast_path_equals_the_gym_make_loop(case):
    """Run 0 and run 2 (a run that is not the batch's first) of one gym.make loop, step by step
    in Python, are those of the batch."""
    name, env_id, env_kwargs, agent_kwargs, horizon = case
    batch = _simulate(case, 3)
    env = gym.make(env_id, horizon=horizon, **env_kwargs_for(name, env_kwargs))
    agent = make(name, env, 1, **agent_kwargs)
    for run in (0, 2):
        out = play(agent, env, seed=7, run=run)
        assert out["steps"] == batch.steps[run]
        assert out["regret"] == pytest.approx(batch.regret[run], rel=1e-12, abs=1e-9)
        if env_id == BAI:
            assert out["info"]["stopping_time"] == batch.episode["stopping_time"][run]
            assert out["info"]["recommendation"] == batch.episode["recommendation"][run]


@pytest.mark.parametrize("case", PARAMS[::2])
def test_run_i_is_the_same_alone_or_in_a_batch(case):
    batch = _simulate(case, 5)
    alone = _simulate(case, 1, first_run=3)
    for key in ("steps", "regret_curve"):
        np.testing.assert_array_equal(getattr(alone, key)[0], getattr(batch, key)[3])
    for key, value in alone.episode.items():
        assert value[0] == batch.episode[key][3]


#: the horizon of :func:`test_the_block_lengths_change_no_number` (60 blocks of 512 steps)
BLOCK_HORIZON = 30_720


@pytest.mark.parametrize("case", [p for p in PARAMS if p.values[0][1] == BAI])
def test_the_block_lengths_change_no_number(case, monkeypatch):
    """Best-arm reward streams and every noise stream refill in blocks as long as the buffer
    budget allows (privenv.seeding.long_block); with no budget they keep the shortest block.
    Both give the same numbers (the laws draw value after value). On μ1 (τ ≫ a block), cut at
    :data:`BLOCK_HORIZON` steps: each run still refills its streams dozens of times in short
    blocks (the exact Gaussian-LDP runs to their stops took 21 s of CPU)."""
    case = (*case[:2], {**case[2], "instance": "mu1"}, case[3], BLOCK_HORIZON)
    long = _simulate(case, 2)
    monkeypatch.setattr(seeding, "BUFFER_BYTES", 0)
    assert seeding.long_block(2, 512) == 512
    short = _simulate(case, 2)
    assert short.steps.min() > 4 * 512
    _same(long, short)


def test_a_stopped_run_costs_nothing():
    """Best-arm identification: every run is played to its own stop and no further. The agent's
    counts add up to each run's own stopping time, not to the longest run's."""
    env = make_vector_env(BAI, 20, 10**6, instance="mu4")
    agent = make("ttucb", env, 20)
    res = simulate(agent, env, n_runs=20, seed=3)
    tau = res.episode["stopping_time"]
    assert len(np.unique(tau)) > 5 and res.episode["correct"].all()
    np.testing.assert_array_equal(agent.counts.sum(axis=1), tau)
    np.testing.assert_array_equal(agent.state.t, tau)  # no step after the stop
    np.testing.assert_array_equal(res.steps, tau + 1)  # the pulls and the stop


def test_the_fast_path_takes_only_what_it_can_run():
    env = make_vector_env(HUBER, 2, 100)
    agent = make("prae-r", env, 2)
    env.reset(seed=0)
    agent.reset(seed=0)
    assert fast_path(agent, env) is not None
    wrapped = VectorLaplaceReward(env, 1.0, (-200, 200), clip=True)
    wrapped.reset(seed=0)
    assert fast_path(agent, wrapped)[2][0] is wrapped.randomizer
    twice = VectorLaplaceReward(wrapped, 1.0, (-300, 300), clip=True)
    twice.reset(seed=0)
    assert fast_path(agent, twice) is None  # two randomizers: step by step

    class Recording(type(agent)):
        def observe_batch(self, actions, rewards, observations):
            super().observe_batch(actions, rewards, observations)

    assert fast_path(Recording(K=5, horizon=100, n_runs=2), env) is None


def test_writes_after_an_inlined_generic_call_are_kept():
    """numba's dead code elimination, after the IR inlining of a generic kernel function, once
    deleted a write into an array of a state ``NamedTuple`` reached through a local name (numba
    issue #10041): a compiled agent's ledger records were lost. ``privenv._jit`` makes the alias
    analysis independent of the block order (the pattern below failed without it)."""
    from typing import NamedTuple

    from privenv._jit import generic, jit

    class Rel(NamedTuple):
        count: np.ndarray
        users: np.ndarray

    class S(NamedTuple):
        rel: Rel

    class P(NamedTuple):
        q: float

    @generic
    def ingredient(p, x):
        raise NotImplementedError

    @ingredient.register(P)
    @jit(inline="always")
    def _ingredient(p, x):
        return x + p.q, 2.0

    @jit
    def step(p, s, run):
        m, _ = ingredient(p, 1.0)
        rel = s.rel
        if rel.users.shape[1] > 0:
            rel.count[run] = 7
        return m

    s = S(Rel(np.zeros(2, np.int64), np.zeros((2, 3), bool)))
    assert step(P(1.0), s, 1) == 2.0
    np.testing.assert_array_equal(s.rel.count, [0, 7])


def test_a_randomizer_on_the_fast_path_refuses_out_of_range_rewards_without_the_value():
    env = make_vector_env(HUBER, 3, 200)
    wrapped = VectorLaplaceReward(env, 1.0, (0.0, 1.0))
    with pytest.raises(ValueError, match=r"reward must lie in \[0, 1\].*clip=True") as err:
        simulate("ucb1", wrapped, n_runs=3)
    assert "run " in str(err.value) and "100" not in str(err.value)


@pytest.mark.parametrize("sampler", ["float", "exact"])
def test_single_env_randomizer_equals_the_fast_path(sampler):
    """A local-DP reward wrapper in front of a compiled agent: the fast path's releases are the
    wrapper's (run 0 through gym.make and LaplaceReward = run 0 of the fast path)."""
    kw = {"alpha": 0.0, "inlier": "gaussian", "means": [0.8, 0.2]}
    rng = (-4.0, 5.0)
    venv = VectorLaplaceReward(make_vector_env(HUBER, 2, 500, **kw), 2.0, rng, clip=True,
                               sampler=sampler)
    fast = simulate("ucb1", venv, n_runs=2, seed=5)
    env = LaplaceReward(gym.make(HUBER, horizon=500, **kw), 2.0, rng, clip=True, sampler=sampler)
    out = play(make("ucb1", env, 1), env, seed=5, run=0)
    assert out["regret"] == pytest.approx(fast.regret[0], abs=1e-9)
    assert fast.privacy.sampler == sampler


@pytest.mark.parametrize("case", [p.values[0] for p in EXACT_PARAMS],
                         ids=[p.id for p in EXACT_PARAMS])
def test_the_sampler_choice_reaches_the_kernel_record(case, request):
    """Each central agent's kernel parameters carry the chosen sampler's record, whose type the
    compiled code draws by (:mod:`privenv.privacy.samplers`; no compilation here: the runs of
    :func:`test_the_exact_sampler_is_the_one_that_releases` are ``slow`` beyond
    :data:`EXACT_BY_DEFAULT`). A local-DP system's sampler is its randomizer's: such a case runs
    by default."""
    from privenv.privacy.samplers import ExactSampler, FloatSampler

    name, env, env_kwargs, agent_kwargs, horizon = case
    for sampler, record in (("float", FloatSampler), ("exact", ExactSampler)):
        venv = make_vector_env(env, 2, horizon, **env_kwargs_for(name, env_kwargs))
        agent = make(name, venv, 2, **{**agent_kwargs, "sampler": sampler})
        venv.reset(seed=0)
        agent.reset(seed=0)
        params = agent.kernel_view().params
        if agent.local_randomizer() is not None:
            assert request.node.callspec.id in EXACT_BY_DEFAULT
            continue
        assert type(params.sampler) is record, (sampler, type(params.sampler))
        assert agent.privacy.sampler == sampler


@pytest.mark.parametrize("case", EXACT_PARAMS)
def test_the_exact_sampler_is_the_one_that_releases(case):
    """The sampler choice reaches the releases: the agents' released estimates (μ̃ of the Top Two
    agents, the elimination agents' estimates) differ from the float runs' on the same seeds
    (each case makes releases within its horizon), and the results record the exact guarantee
    (ε′ ≤ ε, "exact" in the metadata)."""
    name, env, env_kwargs, agent_kwargs, horizon = case
    released, results = {}, {}
    for sampler in ("float", "exact"):
        venv = make_vector_env(env, 4, horizon, **env_kwargs_for(name, env_kwargs))
        agent = make(name, venv, 4, **{**agent_kwargs, "sampler": sampler})
        results[sampler] = simulate(agent, venv, n_runs=4, seed=7)
        field = "estimates" if "estimates" in type(agent.state)._fields else "mu_tilde"
        released[sampler] = np.array(getattr(agent, field), dtype=float)
    assert not np.array_equal(released["float"], released["exact"], equal_nan=True)
    exact = results["exact"]
    assert exact.privacy.sampler == "exact" and results["float"].privacy.sampler == "float"
    assert exact.privacy.epsilon <= agent_kwargs["epsilon"]
    assert exact.privacy.as_dict()["privacy_sampler"] == "exact"


@pytest.mark.slow  # ~100 s: two fresh processes compile/load three families' kernels
def test_kernels_load_from_the_cache_in_a_new_process():
    """numba cannot load some compiled code from its cache (e.g. a recursive function): a new
    process loads every family's kernels (compiled by this test session) and gets the same
    numbers."""
    code = (
        "import numpy as np, json\n"
        "from privenv.simulation import simulate\n"
        "out = {}\n"
        "for name, env, kw in [('prae-c', 'HuberBandit-v0', {'first_phase': 'greedy'}),\n"
        "                      ('robust-ucb', 'HuberBandit-v0', {}),\n"
        "                      ('adap-tt', 'BestArmIdentification-v0', {})]:\n"
        "    r = simulate(name, env, n_runs=2, horizon=3000, seed=1, agent_kwargs=kw)\n"
        "    out[name] = r.regret.tolist() + r.steps.tolist()\n"
        "print(json.dumps(out))\n")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=900, cwd=ROOT) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout
    assert "compiling kernels" not in runs[1].stderr  # all loaded from the cache


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_kernel_record_is_cached(case):
    """A record type defined outside _jit.KERNEL_FILES makes every kernel it reaches
    uncacheable (compiled again in every process, tens of seconds): the agent's state and
    params and the problem's view hold only listed types."""
    from numba import typeof

    name, env_id, env_kwargs, agent_kwargs, horizon = case
    env = make_vector_env(env_id, 2, horizon, **env_kwargs_for(name, env_kwargs))
    agent = make(name, env, 2, **agent_kwargs)
    env.reset(seed=0)
    agent.reset(seed=0)
    view = agent.kernel_view()
    records = [view.state, view.params, view.noise, env.unwrapped.problem.kernel_view()]
    assert not [r for r in records if _jit._foreign(typeof(r))]


def test_kernel_records_are_built_by_name():
    """A kernel's constants and views (``…Params``, ``…View``, ``…Arms`` records) are built with
    keywords, never by position: a swapped pair of positional fields of the same type would
    still compile and run (issue 31)."""
    for folder in ("privenv", "agents", "wrappers"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                        node.func.id.endswith(("Params", "View", "Arms"))):
                    assert not node.args, f"{path}:{node.lineno} builds {node.func.id} by position"


def test_every_kernel_lives_in_a_listed_file():
    """The cache directory is keyed by a hash of _jit.KERNEL_FILES: a file that compiles kernels
    but is not listed would run against stale callees; and every kernel goes through
    privenv._jit.jit (its cache directory), never numba.njit directly; and every listed file
    exists (a stale name hides nothing, but says the list is not kept)."""
    missing = [name for name in _jit.KERNEL_FILES if not _jit._kernel_path(name).is_file()]
    assert not missing, f"privenv._jit.KERNEL_FILES lists missing files: {missing}"
    listed = {(_jit._kernel_path(name)).resolve() for name in _jit.KERNEL_FILES}
    for folder in ("privenv", "agents", "wrappers"):
        for path in (ROOT / folder).rglob("*.py"):
            tree = ast.parse(path.read_text())
            decorators = [ast.unparse(d) for node in ast.walk(tree)
                          if isinstance(node, ast.FunctionDef) for d in node.decorator_list]
            assert not any("njit" in d or d.startswith("numba.") for d in decorators), path
            if any(d.split("(")[0] in ("jit", "generic") for d in decorators):
                assert path.resolve() in listed, (
                    f"{path} defines kernels but is not in privenv._jit.KERNEL_FILES")
