"""Designs of the Huber RL id's rewards and features tried against SB3's ``VecNormalize``.

Issue 34 asks that ``VecNormalize`` never make a learner worse than without it on the RL ids'
defaults. Each design here is applied by a wrapper *outside* the id (nothing in privenv changes),
then the stock learner trains 5·10⁴ steps on 4 sub-envs of the native vector path, with or without
SB3's default ``VecNormalize`` (statistics frozen for the evaluation), and its greedy policy is
scored by :func:`privenv.rl.evaluate` on 20 fresh episodes (seed 10 000 + i), the protocol of
``benchmarks/rl_learners.py``::

    python docs/results/measure/vecnormalize_designs.py dqn HuberBandit-RL-v0 \\
        base,vn,vnr,scale0.05,shift0.5,shift0.5+vn 0,1,2

A design is ``+``-separated parts:

* ``vn``: SB3's default ``VecNormalize``; ``vnr``: ``norm_obs=False``; ``vno``:
  ``norm_reward=False``;
* ``shiftC``: the learner's reward minus C (a constant, so the best policy is unchanged);
  ``scaleC``: the reward times C (``scale0.05`` is about what ``VecNormalize`` divides by, but
  fixed during training);
* ``perm``: the arms shown in a fresh random order every training episode (the score is taken on
  the id as it is, one of the orders);
* ``obs-frac``: pull counts N_a/t instead of N_a/T; ``obs-prior``: an unpulled arm's empirical
  mean observed as 0.5 instead of 0 (either, or ``obs-frac-prior``: both).

It prints one line per design: learner, id, design, the per-step score of each training seed.
Results are in docs/guides/rl.md ("Rewards: their scale").
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

import numpy as np


def _wrappers() -> tuple[type, type, type]:
    from stable_baselines3.common.vec_env import VecEnvWrapper

    class RewardAffine(VecEnvWrapper):  # type: ignore[misc]
        """The learner's reward (r − shift)·scale."""

        def __init__(self, venv: Any, shift: float = 0.0, scale: float = 1.0) -> None:
            super().__init__(venv)
            self.shift, self.scale = shift, scale

        def reset(self) -> Any:
            return self.venv.reset()

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            return obs, (rewards - self.shift) * self.scale, dones, infos

    class Features(VecEnvWrapper):  # type: ignore[misc]
        """The K-armed features [N_a/T, μ̂_a, t/T] transformed by :func:`transform`."""

        def __init__(self, venv: Any, mode: str) -> None:
            super().__init__(venv)
            self.mode = mode

        def reset(self) -> Any:
            return transform(self.venv.reset(), self.mode)

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            return transform(obs, self.mode), rewards, dones, infos

    class Permuted(VecEnvWrapper):  # type: ignore[misc]
        """The arms in a fresh uniformly random order every episode: position i of the action and
        of the [N_a/T, μ̂_a] blocks is arm ``order[i]`` (a prototype of ``permute_arms``)."""

        def __init__(self, venv: Any, seed: int) -> None:
            super().__init__(venv)
            self.rng = np.random.default_rng(seed)
            self.K = int(venv.action_space.n)
            self.orders = np.array([self.rng.permutation(self.K) for _ in range(venv.num_envs)])

        def _show(self, obs: np.ndarray) -> np.ndarray:
            out = np.array(obs, dtype=np.float32)
            rows = np.arange(len(out))[:, None]
            out[:, :self.K] = obs[rows, self.orders]
            out[:, self.K:2 * self.K] = obs[rows, self.K + self.orders]
            return out

        def reset(self) -> Any:
            return self._show(self.venv.reset())

        def step_async(self, actions: np.ndarray) -> None:
            self.venv.step_async(self.orders[np.arange(len(actions)), actions])

        def step_wait(self) -> Any:
            obs, rewards, dones, infos = self.venv.step_wait()
            for i in np.flatnonzero(dones):  # obs[i] is the next episode's first observation
                self.orders[i] = self.rng.permutation(self.K)
            return self._show(obs), rewards, dones, infos

    return RewardAffine, Features, Permuted


def transform(obs: np.ndarray, mode: str) -> np.ndarray:
    """``obs-frac``: N_a/t for N_a/T; ``obs-prior``: 0.5 for an unpulled arm's mean."""
    out = np.array(obs, dtype=np.float32)
    K = (out.shape[1] - 1) // 2
    counts, t = out[:, :K].copy(), out[:, 2 * K:]
    if "frac" in mode:
        out[:, :K] = counts / np.maximum(t, 1e-9)
    if "prior" in mode:
        out[:, K:2 * K] = np.where(counts > 0, out[:, K:2 * K], 0.5)
    return out


def train(algo: str, env_id: str, seed: int, design: str, steps: int = 50_000,
          env_kwargs: dict[str, Any] | None = None) -> Callable[[np.ndarray], np.ndarray]:
    """The greedy policy of ``algo`` trained on ``env_id`` with ``design`` (module docstring)."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.vec_env import VecNormalize

    from privenv.rl import make_sb3_vec_env

    RewardAffine, Features, Permuted = _wrappers()
    env = make_sb3_vec_env(env_id, n_envs=4, seed=seed, env_kwargs=env_kwargs)
    parts = design.split("+")
    features = next((p[4:] for p in parts if p.startswith("obs-")), "")
    for part in parts:
        if part.startswith("shift"):
            env = RewardAffine(env, shift=float(part[5:]))
        elif part.startswith("scale"):
            env = RewardAffine(env, scale=float(part[5:]))
    if features:
        env = Features(env, features)
    if "perm" in parts:
        env = Permuted(env, seed)
    norm = None
    normalize = {"vn": {}, "vnr": {"norm_obs": False}, "vno": {"norm_reward": False}}
    for part in parts:
        if part in normalize:
            norm = env = VecNormalize(env, **normalize[part])
    cls = {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[algo]
    model = cls("MlpPolicy", env, seed=seed, device="cpu").learn(steps)

    def policy(obs: np.ndarray) -> np.ndarray:
        x = transform(obs, features) if features else obs
        if norm is not None:
            x = norm.normalize_obs(x)
        return model.predict(x, deterministic=True)[0]

    if norm is not None:
        norm.training = False
    return policy


def main(argv: list[str] | None = None) -> int:
    import torch

    from privenv.rl import evaluate

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("learner", choices=("ppo", "a2c", "dqn"))
    parser.add_argument("env_id")
    parser.add_argument("designs", help="comma-separated designs (module docstring)")
    parser.add_argument("seeds", help="comma-separated training seeds")
    parser.add_argument("--env-kwargs", type=json.loads, default=None)
    parser.add_argument("--steps", type=int, default=50_000, help="training steps (5·10⁴)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    kwargs = args.env_kwargs or {}
    for design in args.designs.split(","):
        scores = []
        for seed in (int(s) for s in args.seeds.split(",")):
            policy = train(args.learner, args.env_id, seed, design, steps=args.steps,
                           env_kwargs=args.env_kwargs)
            scores.append(round(evaluate(policy, args.env_id, n_episodes=20, **kwargs).per_step, 3))
        print(args.learner, args.env_id, design, scores, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
