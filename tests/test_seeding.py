"""Per-run seeding: run i's numbers depend only on run i's seed (docs/design/architecture.md,
"The seeding contract")."""

import numpy as np
import pytest

from privenv.seeding import (
    AGENT,
    DrawStream,
    RunNoise,
    RunSeed,
    RunStreams,
    child,
    noise_for,
    run_seed_sequences,
)


def _fill(gen, n, row):
    return gen.random(n)


def test_run_seed_sequences_are_batch_size_independent():
    big = run_seed_sequences(7, 1000)
    alone = run_seed_sequences(7, 1, first_run=123)
    assert big[123].generate_state(4).tolist() == alone[0].generate_state(4).tolist()


def test_list_seeds_match_single_seed_run_zero():
    (a,) = run_seed_sequences(42, 1)
    b = run_seed_sequences([5, 42], 2)[1]
    assert a.generate_state(4).tolist() == b.generate_state(4).tolist()


def test_run_seed_sequences_rejects_bad_seeds():
    with pytest.raises(ValueError, match="seed"):
        run_seed_sequences(-1, 2)
    with pytest.raises(ValueError, match="seed"):
        run_seed_sequences([1, 2, 3], 2)


def test_children_are_distinct_streams():
    (s,) = run_seed_sequences(0, 1)
    x = np.random.default_rng(child(s, 0, 1)).random(4)
    y = np.random.default_rng(child(s, 0, 2)).random(4)
    z = np.random.default_rng(child(s, AGENT)).random(4)
    assert not np.allclose(x, y) and not np.allclose(x, z)


def test_run_streams_row_values_do_not_depend_on_other_rows_or_block():
    seeds = run_seed_sequences(3, 4)
    a = RunStreams(seeds, _fill, block=8)
    b = RunStreams(seeds[2:3], _fill, block=5)
    got_a = [a.take(np.array([2, 0]))[0] for _ in range(30)]
    got_b = [b.take(np.array([0]))[0] for _ in range(30)]
    np.testing.assert_array_equal(got_a, got_b)
    # take_many continues the same stream
    np.testing.assert_array_equal(a.take_many(2, 11), b.take_many(0, 11))


def test_run_streams_refill_only_when_a_value_is_needed():
    seeds = run_seed_sequences(3, 2)
    s = RunStreams(seeds, _fill, block=4)
    values, pos, end = s.view()
    for _ in range(4):
        s.take(np.array([1]))
    assert pos[1] == 4 and pos[0] == 0  # row 1 exhausted, not yet refilled
    again = RunStreams(seeds, _fill, block=4)
    expected = [again.take(np.array([1]))[0] for _ in range(5)][4]
    assert s.take(np.array([1]))[0] == expected and pos[1] == 1


def test_reseed_restarts_a_row():
    seeds = run_seed_sequences(3, 2)
    s = RunStreams(seeds, _fill, block=4)
    first = [s.take(np.array([1]))[0] for _ in range(6)]
    s.reseed(np.array([1]), [seeds[1]])
    np.testing.assert_array_equal([s.take(np.array([1]))[0] for _ in range(6)], first)


def _uniforms(gen: np.random.Generator, n: int) -> np.ndarray:
    return gen.random(n)


def test_draw_stream_values_do_not_depend_on_block_or_chunking():
    """A DrawStream row's k-th value is its generator's k-th draw, however it is taken."""
    seeds = run_seed_sequences(5, 3)
    a = DrawStream(seeds, _uniforms, block=7)
    b = DrawStream(seeds[1:2], _uniforms, block=64)
    got = np.concatenate([a.take(np.array([1, 2]))[:1], a.take_many(1, 20), a.take(np.array([1])),
                          a.take_many(1, 3)])
    np.testing.assert_array_equal(got, b.take_many(0, 25))
    np.testing.assert_array_equal(got, np.random.default_rng(seeds[1]).random(25))
    a.ensure(100, np.array([0]))  # grows the capacity of every row; values unchanged
    assert a.end[0] - a.pos[0] >= 100
    later = np.random.default_rng(seeds[1]).random(30)[25:]
    np.testing.assert_array_equal(a.take_many(1, 5), later)
    a.reseed(np.array([1]), [seeds[1]])
    np.testing.assert_array_equal(a.take_many(1, 4), got[:4])


def test_agent_noise_is_batch_size_independent():
    big = noise_for(11, 50, AGENT)
    alone = noise_for(11, 1, AGENT, first_run=17)
    np.testing.assert_array_equal(
        [big.uniform()[17] for _ in range(300)], [alone.uniform()[0] for _ in range(300)]
    )
    np.testing.assert_array_equal(big.normals(17, 40), alone.normals(0, 40))


def test_purpose_keys_are_distinct():
    """Every consumer of a run's seed has its own purpose key (a shared key would share a
    stream: membership coins once had the next-episode key)."""
    from privenv import seeding

    purposes = {name: value for name, value in vars(seeding).items()
                if name.isupper() and isinstance(value, int)}  # every module-level int constant
    assert {"ENV", "AGENT", "WRAPPER", "INSTANCE", "NEXT_EPISODE", "COIN"} <= set(purposes)
    assert len(set(purposes.values())) == len(purposes), purposes


def test_episode_seeds_do_not_grow_with_the_number_of_episodes():
    """Episode e of a run is child(root, NEXT_EPISODE, e): a constant-length key, so a reset costs
    the same after 10⁴ one-step episodes (an ever-longer chain of children once made resets
    O(episodes), RL training quadratic). Single env and vector env agree episode by episode."""
    import gymnasium as gym

    import privenv  # noqa: F401
    from privenv.seeding import NEXT_EPISODE, episode_seed

    env = gym.make("HuberBandit-v0", K=3, horizon=1)
    env.reset(seed=3, options={"first_run": 1})
    root = env.unwrapped.run_seeds[0]
    keys, rewards = set(), []
    for e in range(1, 2001):
        env.reset()
        seed = env.unwrapped.run_seeds[0]
        assert seed.spawn_key == (*root.spawn_key, NEXT_EPISODE, e)
        keys.add(seed.spawn_key)
        if e <= 5:
            rewards.append(env.step(0)[1])
    assert len(keys) == 2000
    assert episode_seed(root, 0) is root
    venv = gym.make_vec("HuberBandit-v0", num_envs=2, vectorization_mode="vector_entry_point",
                        K=3, horizon=1)
    venv.reset(seed=3)
    got = []
    for _ in range(12):  # next-step autoreset: every other step resets the runs that ended
        _, r, term, trunc, _ = venv.step(np.zeros(2, dtype=np.int64))
        if (term | trunc).all():
            got.append(r[1])
    assert got[1:] == rewards  # episodes 1 … 5 of run 1


# -- numpy's streams in compiled code (privenv._pcg64) --------------------------------------------

_ROOTS = [
    np.random.SeedSequence(0, spawn_key=(0,)),
    np.random.SeedSequence(20261129, spawn_key=(7,)),
    np.random.SeedSequence(2**100 + 7, spawn_key=(5, 2**40)),  # multi-word entropy and key
    np.random.SeedSequence([1, 2, 3, 4, 5, 6]),  # entropy longer than the pool
    np.random.SeedSequence([2**64, 0]),
    np.random.SeedSequence(),  # OS entropy (128 bits)
    np.random.SeedSequence(3),  # no spawn key
]
_KEYS = [(0, 0), (0, 4), (), (2**33, 1, 2, 3, 4, 5)]


def test_compiled_seeding_gives_numpys_pcg64_state():
    from privenv._pcg64 import stream_states

    states = stream_states(_ROOTS, _KEYS)
    for i, root in enumerate(_ROOTS):
        for j, key in enumerate(_KEYS):
            want = _numpy_state(np.random.SeedSequence(
                root.entropy, spawn_key=tuple(root.spawn_key) + key))
            hi, lo, inc_hi, inc_lo = (int(w) for w in states[i * len(_KEYS) + j])
            assert ((hi << 64) | lo, (inc_hi << 64) | inc_lo) == want


def _numpy_state(seed) -> tuple[int, int]:
    state = np.random.PCG64(seed).state["state"]
    return state["state"], state["inc"]


def _state(states: np.ndarray, row: int) -> tuple[int, int]:
    hi, lo, inc_hi, inc_lo = (int(w) for w in states[row])
    return (hi << 64) | lo, (inc_hi << 64) | inc_lo


@pytest.mark.parametrize("roots", [
    run_seed_sequences(20261204, 50, first_run=3),  # a batch: one shared entropy
    run_seed_sequences([5, 6, 7], 3),  # Gymnasium's per-sub-env seeds
    [RunSeed(9, (1,)), RunSeed(9, (1, 2))],  # spawn keys of two lengths
    [RunSeed(9, (2**32,)), RunSeed(9, (4,))],  # a two-word key
    [RunSeed(1, (0,)), RunSeed(2, (0,))],  # two entropies
], ids=["batch", "list", "key-lengths", "wide-key", "entropies"])
def test_seeding_of_batches_and_mixed_roots_gives_numpys_states(roots):
    from privenv._pcg64 import stream_states

    keys = [(0,), (1, 7), (), (2**35,)]
    states = stream_states(roots, keys)
    for i, root in enumerate(roots):
        for j, key in enumerate(keys):
            want = _numpy_state(np.random.SeedSequence(
                root.entropy, spawn_key=tuple(root.spawn_key) + key))
            assert _state(states, i * len(keys) + j) == want


def test_run_seed_is_its_seed_sequence():
    """A RunSeed draws, spawns and pickles as SeedSequence(entropy, spawn_key) does."""
    import pickle

    seed, twin = RunSeed(2**70 + 5, (3, 1)), np.random.SeedSequence(2**70 + 5, spawn_key=(3, 1))
    assert np.array_equal(np.random.default_rng(seed).random(5),
                          np.random.default_rng(twin).random(5))
    assert np.array_equal(seed.generate_state(6, np.uint64), twin.generate_state(6, np.uint64))
    for got, want in zip(seed.spawn(2) + seed.spawn(3), twin.spawn(5), strict=True):
        assert (got.entropy, got.spawn_key) == (want.entropy, want.spawn_key)
    assert seed.n_children_spawned == twin.n_children_spawned == 5
    assert seed.state == twin.state and np.array_equal(seed.pool, twin.pool)
    copy = pickle.loads(pickle.dumps(seed))
    assert (copy.entropy, copy.spawn_key) == (seed.entropy, seed.spawn_key)
    assert _numpy_state(copy) == _numpy_state(twin)
    assert child(twin, 4).spawn_key == child(seed, 4).spawn_key == (3, 1, 4)


def test_compiled_draws_are_numpys_draws():
    """random() and the raw 64-bit words of the compiled PCG64 are numpy's Generator's, value
    for value (the Bernoulli rewards of best-arm identification are drawn this way)."""
    from privenv._jit import jit
    from privenv._pcg64 import bernoulli, next64, next_double, stream_states

    @jit
    def draw(states, row, doubles, words, coins, p):
        for k in range(doubles.size):
            doubles[k] = next_double(states, row)
        for k in range(words.size):
            words[k] = next64(states, row)
        for k in range(coins.size):
            coins[k] = bernoulli(states, row, p)

    states = stream_states(_ROOTS, _KEYS)
    for row in range(states.shape[0]):
        root, key = _ROOTS[row // len(_KEYS)], _KEYS[row % len(_KEYS)]
        gen = np.random.Generator(np.random.PCG64(child(root, *key)))
        doubles, words, coins = np.empty(1000), np.empty(100, np.uint64), np.empty(1000)
        draw(states, row, doubles, words, coins, 0.3)
        np.testing.assert_array_equal(doubles, gen.random(1000))
        np.testing.assert_array_equal(words, gen.integers(0, 2**64, 100, dtype=np.uint64))
        np.testing.assert_array_equal(coins, (gen.random(1000) < 0.3).astype(float))


#: numpy's laws as privenv._pcg64 draws them: (name, the compiled draw's law code, its parameter,
#: numpy's draw). The shapes cover each branch of numpy's code: standard_gamma's exponential
#: (shape 1), its rejection method below 1 and Marsaglia–Tsang above; ν = 2.5 is the Huber
#: problem's Student-t.
LAWS = [
    ("standard_normal", 0, 0.0, lambda g, n: g.standard_normal(n)),
    ("standard_exponential", 1, 0.0, lambda g, n: g.standard_exponential(n)),
    ("standard_gamma(0.4)", 2, 0.4, lambda g, n: g.standard_gamma(0.4, n)),
    ("standard_gamma(1)", 2, 1.0, lambda g, n: g.standard_gamma(1.0, n)),
    ("standard_gamma(1.25)", 2, 1.25, lambda g, n: g.standard_gamma(1.25, n)),
    ("standard_t(2.5)", 3, 2.5, lambda g, n: g.standard_t(2.5, n)),
    ("pareto(2.5)", 4, 2.5, lambda g, n: g.pareto(2.5, n)),
]


@pytest.mark.parametrize("law", LAWS, ids=[law[0] for law in LAWS])
def test_compiled_laws_are_numpys_draws(law):
    """Each law drawn in compiled code (numpy's ziggurat with numpy's tables, its tail and wedge
    fallbacks, and the laws built on them) equals numpy's Generator value for value, and leaves
    the stream where numpy leaves it. 6·10⁵ draws per law on three streams reach the ziggurat's
    rare branches about 4·10³ times (the wedges, 0.7 % of normals and 1.1 % of exponentials)
    and its tail about 10² times; a table entry copied wrong would show."""
    from privenv._jit import jit
    from privenv._pcg64 import (
        next_double,
        next_exponential,
        next_gamma,
        next_normal,
        next_pareto,
        next_t,
        stream_states,
    )

    @jit
    def draw(states, row, law, param, out):
        for k in range(out.size):
            if law == 0:
                out[k] = next_normal(states, row)
            elif law == 1:
                out[k] = next_exponential(states, row)
            elif law == 2:
                out[k] = next_gamma(states, row, param)
            elif law == 3:
                out[k] = next_t(states, row, param)
            else:
                out[k] = next_pareto(states, row, param)

    _, code, param, numpy_draw = law
    states = stream_states(_ROOTS[:3], [(1,)])
    for row in range(states.shape[0]):
        gen = np.random.Generator(np.random.PCG64(child(_ROOTS[row], 1)))
        out = np.empty(200_000)
        draw(states, row, code, param, out)
        np.testing.assert_array_equal(out, numpy_draw(gen, out.size))
        assert next_double.py_func(states, row) == gen.random()  # the same place in the stream


def test_run_noise_normals_are_numpys_standard_normals():
    """A run's normals are numpy's standard_normal() on its stream child(seed, 1), drawn where
    they are used (never buffered), and do not depend on the batch."""
    seeds = run_seed_sequences(5, 3)
    noise = RunNoise(seeds)
    got = noise.normals(1, 500)
    want = np.random.Generator(np.random.PCG64(child(seeds[1], 1))).standard_normal(500)
    np.testing.assert_array_equal(got, want)
    again = RunNoise(seeds[1:2])
    np.testing.assert_array_equal(np.concatenate([again.normal(), again.normals(0, 499)]), want)


def test_bai_bernoulli_pulls_are_the_arm_streams_draws():
    """The k-th pull of arm a in run i is ``random() < μ_a`` on the stream (i, ENV, a), through
    the step-by-step problem as through the compiled driver's view."""
    from privenv.problems.bai import BAIProblem
    from privenv.seeding import ENV

    problem = BAIProblem(means=[0.2, 0.5, 0.7], reward_mode="sample", n_runs=3)
    seeds = run_seed_sequences(11, 3)
    problem.reset(seeds)
    got = np.array([problem.step(np.array([1, 2, 1]))[1] for _ in range(200)])
    for run, arm in enumerate([1, 2, 1]):
        gen = np.random.default_rng(child(seeds[run], ENV, arm))
        want = (gen.random(200) < problem.means[arm]).astype(float)
        np.testing.assert_array_equal(got[:, run], want)


def test_bai_gaussian_pulls_are_the_arm_streams_draws():
    """The Gaussian law is drawn where it is pulled too: the k-th pull of arm a in run i is
    μ_a + σ·standard_normal() on the stream (i, ENV, a) (numpy's ``mu + sigma * z``)."""
    from privenv.problems.bai import BAIProblem
    from privenv.seeding import ENV

    problem = BAIProblem(means=[0.2, -1.5, 0.7], law="gaussian", sigma=2.0,
                         reward_mode="sample", n_runs=2)
    seeds = run_seed_sequences(4, 2)
    problem.reset(seeds)
    got = np.array([problem.step(np.array([1, 2]))[1] for _ in range(300)])
    for run, arm in enumerate([1, 2]):
        gen = np.random.default_rng(child(seeds[run], ENV, arm))
        want = problem.means[arm] + 2.0 * gen.standard_normal(300)
        np.testing.assert_array_equal(got[:, run], want)


@pytest.mark.parametrize("K", [1, 2, 3, 5, 8, 9, 33, 300])
def test_compiled_permutation_is_numpys(K):
    """``permutations`` gives ``Generator.permutation(K)`` of each stream, entry for entry (its
    masked 32-bit rejection draws, half words included): K a power of two, one more, and K
    whose mask rejects often; every seeding case of ``_ROOTS``."""
    from privenv._pcg64 import permutations, stream_states

    roots = _ROOTS + [np.random.SeedSequence(s, spawn_key=(s,)) for s in range(200)]
    states = stream_states(roots, [(3,)])
    out = np.empty((len(roots), K), dtype=np.int64)
    permutations(states, np.arange(len(roots)), out)
    for i, root in enumerate(roots):
        np.testing.assert_array_equal(out[i], np.random.default_rng(child(root, 3)).permutation(K))
