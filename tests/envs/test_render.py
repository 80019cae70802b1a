"""Render modes of every registered env: ``"ansi"`` tables and ``"rgb_array"`` frames."""

from __future__ import annotations

import importlib.util

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import RenderCollection

import privenv  # noqa: F401  (registers the ids)
from privenv.envs import ENV_IDS
from privenv.envs.bai import pull, stop
from privenv.envs.render import FRAME_SHAPE, Board

SMALL = {
    "HuberBandit-v0": {},
    "BestArmIdentification-v0": {},
    "LinearContextualBandit-v0": {"d": 3, "A": 4},
    "FederatedLinearBandit-v0": {"M": 3, "K": 4, "d": 3},
    "BernoulliBandit-v0": {},
}
MODES = ("ansi", "rgb_array")


def _actions(env_id: str, env: gym.Env, n: int) -> list:
    if env_id == "BestArmIdentification-v0":  # pull arm t mod K, then stop on arm 0
        return [pull(t % 5) for t in range(n - 1)] + [stop(0, K=5)]
    env.action_space.seed(0)
    return [env.action_space.sample() for _ in range(n)]


def test_every_registered_env_is_covered() -> None:
    assert set(SMALL) == set(ENV_IDS)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_render_modes_are_declared(env_id: str) -> None:
    single = gym.make(env_id, **SMALL[env_id])
    vector = gym.make_vec(env_id, num_envs=2, **SMALL[env_id])
    for env in (single, vector):
        assert set(MODES) <= set(env.metadata["render_modes"])


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_ansi_table_counts_pulls(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi", **SMALL[env_id])
    env.reset(seed=0)
    actions = _actions(env_id, env, 20)
    for a in actions:
        env.step(a)
    text = env.render()
    assert isinstance(text, str)
    board = env.unwrapped._board
    # the table's pulls column equals the actions actually taken
    pulled = np.concatenate([np.ravel(a) for a in actions])
    if env_id == "BestArmIdentification-v0":
        pulled = pulled[pulled < 5]
        assert "recommends arm 0" in text
    else:
        assert "cumulative pseudo-regret" in text
    k = board.K
    assert np.array_equal(board.counts[0], np.bincount(pulled, minlength=k))
    rows = [line.split() for line in text.splitlines()[2:] if line.split()[0].isdigit()]
    assert [int(r[1]) for r in rows] == board.counts[0].tolist()
    env.reset(seed=1)  # a new episode clears the board
    assert board.counts.sum() == 0


def test_ansi_means_are_the_observed_sample_means() -> None:
    env = gym.make("HuberBandit-v0", render_mode="ansi")
    env.reset(seed=3)
    seen: dict[int, list[float]] = {0: [], 1: []}
    for t in range(10):
        _, r, *_ = env.step(t % 2)
        seen[t % 2].append(r)
    board = env.unwrapped._board
    assert np.allclose(board.means(0)[:2], [np.mean(seen[0]), np.mean(seen[1])])
    assert np.isnan(board.means(0)[2:]).all()


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_rgb_frames_have_constant_shape(env_id: str) -> None:
    env = RenderCollection(gym.make(env_id, render_mode="rgb_array", **SMALL[env_id]))
    env.reset(seed=0)
    for a in _actions(env_id, env, 6):
        env.step(a)
    frames = env.render()
    assert len(frames) == 7  # reset + 6 steps
    for f in frames:
        assert f.dtype == np.uint8 and f.shape == FRAME_SHAPE
    assert not np.array_equal(frames[0], frames[-1])  # the bars moved


@pytest.mark.parametrize("backend", ["numpy", "matplotlib"])
def test_both_backends_draw_the_same_frame_shape(backend: str) -> None:
    if backend == "matplotlib" and importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed")
    board = Board(1, 3, "test", backend=backend)
    empty = board.rgb(0)
    board.record(np.array([[0]]), np.array([[2.0]]), {"regret": np.array([0.5])})
    board.record(np.array([[2]]), np.array([[-1.0]]), {"regret": np.array([0.0])})
    frame = board.rgb(0)
    assert frame.shape == empty.shape == FRAME_SHAPE and frame.dtype == np.uint8
    assert not np.array_equal(frame, empty)


def test_board_history_stays_bounded() -> None:
    board = Board(1, 2, "test", backend="numpy")
    for _ in range(5000):
        board.record(np.array([[0]]), np.array([[1.0]]), {"regret": np.array([1.0])})
    assert len(board._history[0]) < 512
    assert board._history[0][-1][1] <= 5000.0 and board.regret[0] == 5000.0


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
@pytest.mark.parametrize("mode", MODES)
def test_vector_env_renders_one_per_run(env_id: str, mode: str) -> None:
    venv = gym.make_vec(env_id, num_envs=3, render_mode=mode,
                        autoreset_mode=AutoresetMode.DISABLED, **SMALL[env_id])
    venv.reset(seed=0)
    single = gym.make(env_id, render_mode=mode, **SMALL[env_id])
    for run in range(3):
        single.reset(seed=0, options={"first_run": run})
    for _ in range(4):
        venv.step(venv.action_space.sample() if env_id != "BestArmIdentification-v0"
                  else np.zeros(3, dtype=np.int64))
    out = venv.render()
    assert isinstance(out, tuple) and len(out) == 3
    if mode == "rgb_array":
        assert all(f.shape == FRAME_SHAPE for f in out)
    else:
        assert all(isinstance(s, str) for s in out)
    assert (venv.unwrapped._board.t == 4).all()


def test_vector_autoreset_clears_the_finished_run() -> None:
    venv = gym.make_vec("BestArmIdentification-v0", num_envs=2, render_mode="ansi")
    venv.reset(seed=0)
    venv.step(np.array([pull(1), pull(2)]))
    venv.step(np.array([stop(0, K=5), pull(2)]))  # run 0 stops
    board = venv.unwrapped._board
    assert board.recommendation.tolist() == [0, -1]
    venv.step(np.array([pull(1), pull(3)]))  # NEXT_STEP: run 0 is reset and sits out
    assert board.counts[0].sum() == 0 and board.counts[1].tolist() == [0, 0, 2, 1, 0]


def test_no_board_without_render_mode() -> None:
    env = gym.make("HuberBandit-v0")
    env.reset(seed=0)
    env.step(0)
    assert env.unwrapped._board is None and env.render() is None


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
@pytest.mark.parametrize("mode", MODES)
def test_checkers_pass_with_a_render_mode(env_id: str, mode: str) -> None:
    check_env(gym.make(env_id, render_mode=mode, **SMALL[env_id]).unwrapped)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    if env_id != "FederatedLinearBandit-v0":  # SB3 wants ≤ 2-D Box obs; covered in test_rl
        sb3.check_env(gym.make(env_id, render_mode=mode, **SMALL[env_id]).unwrapped, warn=False)


def test_render_does_not_change_the_run() -> None:
    plain, shown = gym.make("HuberBandit-v0"), gym.make("HuberBandit-v0", render_mode="rgb_array")
    plain.reset(seed=5)
    shown.reset(seed=5)
    for t in range(20):
        r1 = plain.step(t % 5)[1]
        r2 = shown.step(t % 5)[1]
        if t % 5 == 0:
            shown.render()
        assert r1 == r2


def test_record_video(tmp_path) -> None:
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(gym.make("HuberBandit-v0", render_mode="rgb_array", horizon=30),
                      str(tmp_path), episode_trigger=lambda e: True)
    env.reset(seed=0)
    done = False
    while not done:
        *_, term, trunc, _ = env.step(env.action_space.sample())
        done = term or trunc
    env.close()
    assert list(tmp_path.glob("*.mp4"))
