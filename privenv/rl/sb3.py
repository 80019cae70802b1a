"""A native Gymnasium ``VectorEnv`` as Stable-Baselines3's ``VecEnv``.

SB3 cannot read a Gymnasium ``VectorEnv`` (its ``VecEnv`` resets within the step, returns one info
dict per sub-env and seeds through ``seed(s)``); :class:`SB3VecEnv` adapts one to the other, so
SB3 trains on the native vector envs of the RL ids (:mod:`privenv.rl.envs`) or of a
:class:`~privenv.rl.views.VectorSufficientStatistics` stack.

Stable-Baselines3 is an optional extra (``pip install 'privenv[sb3]'``): this module imports
without it (and without torch); the class subclasses SB3's ``VecEnv`` and is built on first
access (module ``__getattr__``), which raises ``ImportError`` naming the extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

# SB3VecEnv is public too, but built lazily (module __getattr__), so not in __all__: a star-import
# must work without Stable-Baselines3.
__all__ = ["make_sb3_vec_env"]

_SB3_MISSING = (
    "{what} needs Stable-Baselines3, an optional extra of privenv: pip install 'privenv[sb3]' "
    "(install a CPU torch first to avoid the multi-GB CUDA build)"
)


def _require_sb3(what: str) -> Any:
    try:
        import stable_baselines3
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(_SB3_MISSING.format(what=what)) from err
    return stable_baselines3


def _unbatch_info(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Gymnasium's batched info (arrays with ``_key`` masks) → one dict per sub-env."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        mask = info.get(f"_{key}")
        if isinstance(value, dict):
            nested = _unbatch_info(value, n)
            rows = range(n) if mask is None else np.flatnonzero(mask)
            for i in rows:
                out[i][key] = nested[i]
            continue
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype != object:
            items = value.tolist()  # Python scalars, as v.item() gives
        else:
            items = [v.item() if isinstance(v, np.generic) else v for v in value]
        if mask is None or bool(np.all(mask)):
            for d, v in zip(out, items, strict=True):
                d[key] = v
        else:
            for i in np.flatnonzero(mask):
                out[i][key] = items[i]
    return out


def _sb3_vec_env_class() -> type:
    VecEnv: Any = _require_sb3("SB3VecEnv").common.vec_env.VecEnv  # (an optional dependency)

    class SB3VecEnv(VecEnv):
        """A native Gymnasium ``VectorEnv`` as Stable-Baselines3's ``VecEnv``.

        SB3's protocol: ``reset()`` returns only observations; ``step_wait()`` returns
        ``(obs, rewards, dones, infos)`` with one info dict per sub-env, and a sub-env that ends
        is reset at once, its last observation in ``info["terminal_observation"]`` and
        ``info["TimeLimit.truncated"]`` telling truncation from termination. The vector env must
        use ``autoreset_mode`` ``SAME_STEP`` (its ``final_obs`` is used) or ``DISABLED`` (the
        adapter resets ended runs with ``options={"reset_mask": …}``); ``NEXT_STEP`` would inject
        a dummy step per episode and is refused.

        Seeding follows SB3: ``seed(s)`` then ``reset()`` seeds sub-env i with ``s + i``, i.e.
        run i is what a single env reset with seed ``s + i`` gives — exactly what
        ``DummyVecEnv([make] * n)`` produces, so the two are interchangeable (tested).

        Attribute access (``get_attr``/``set_attr``/``env_method``) reaches the one vector env
        shared by all sub-envs; ``env_is_wrapped`` is False (single-env wrappers do not apply).

        Args:
            venv: the native vector env, e.g. ``gym.make_vec(id, num_envs=n,
                vectorization_mode="vector_entry_point", autoreset_mode=AutoresetMode.SAME_STEP)``.
        """

        def __init__(self, venv: VectorEnv) -> None:
            if not isinstance(venv, VectorEnv):
                raise TypeError(f"venv must be a gymnasium.vector.VectorEnv, got {venv!r}")
            mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
            if mode not in (AutoresetMode.SAME_STEP, AutoresetMode.DISABLED):
                raise ValueError(
                    "venv must use autoreset_mode SAME_STEP or DISABLED (NEXT_STEP spends a dummy "
                    f"step on every reset), got {mode!r}"
                )
            self.venv = venv
            self.autoreset_mode = AutoresetMode(mode)
            self._actions: np.ndarray | None = None
            super().__init__(venv.num_envs, venv.single_observation_space,
                             venv.single_action_space)

        def reset(self) -> np.ndarray:
            seed = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]
            options = self._options[0] if self._options and self._options[0] else None
            if any(o != self._options[0] for o in self._options):
                raise ValueError("options must be the same for every sub-env of a vector env")
            # (Gymnasium annotates VectorEnv.reset's seed as an int; a list seeds each sub-env)
            obs, info = self.venv.reset(seed=seed, options=options)  # type: ignore[arg-type]
            self._reset_seeds()
            self._reset_options()
            self.reset_infos = _unbatch_info(info, self.num_envs)
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            if self._actions is None:
                raise RuntimeError("call step_async() before step_wait()")
            obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
            self._actions = None
            dones = np.asarray(terminated | truncated, dtype=bool)
            infos = _unbatch_info(info, self.num_envs)
            if dones.any():
                ended = np.flatnonzero(dones)
                if self.autoreset_mode == AutoresetMode.SAME_STEP:
                    final = info["final_obs"]
                    if "final_info" in info:  # the ending step's info (Gymnasium convention)
                        finals = _unbatch_info(info["final_info"], self.num_envs)
                        for i in ended:
                            infos[i] = finals[i]
                else:
                    final = np.array(obs, copy=True)
                    obs, _ = self.venv.reset(options={"reset_mask": dones})
                for i in ended:
                    infos[i]["terminal_observation"] = final[i]
                    infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            return obs, np.asarray(rewards, dtype=np.float32), dones, infos

        def close(self) -> None:
            self.venv.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            env = self.venv  # walk the vector wrapper chain (no get_wrapper_attr there)
            while not hasattr(env, attr_name) and hasattr(env, "env"):
                env = env.env
            value = getattr(env, attr_name)
            return [value for _ in self._get_indices(indices)]

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *args: Any, indices: Any = None,
                       **kwargs: Any) -> list[Any]:
            result = getattr(self.venv, method_name)(*args, **kwargs)
            return [result for _ in self._get_indices(indices)]

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False for _ in self._get_indices(indices)]

    return SB3VecEnv


_LAZY: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``SB3VecEnv`` subclasses SB3's ``VecEnv``: built on first access (SB3 is optional)."""
    if name == "SB3VecEnv":
        if name not in _LAZY:
            _LAZY[name] = _sb3_vec_env_class()
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_sb3_vec_env(env_id: str, n_envs: int = 1, seed: int | None = None,
                     env_kwargs: dict[str, Any] | None = None, monitor: bool = True) -> Any:
    """SB3's ``make_vec_env`` on the native vector path: ``n_envs`` runs of ``env_id`` in one
    native ``VectorEnv`` (``gym.make_vec(..., vectorization_mode="vector_entry_point",
    autoreset_mode=SAME_STEP)``) behind :class:`SB3VecEnv`, and SB3's ``VecMonitor`` (episode
    returns in ``ep_rew_mean``), seeded as ``make_vec_env(env_id, n_envs, seed)`` seeds (sub-env
    i: ``seed + i``) — the same numbers, one numpy call per step for all sub-envs instead of one
    Python env per sub-env.

    Args:
        env_id: an id with a native vector entry point (every privenv id; the RL ids are the ones
            to train on).
        n_envs: number of sub-envs.
        seed: the first sub-env's seed (None: unseeded).
        env_kwargs: the env's keyword arguments.
        monitor: wrap in ``VecMonitor`` (as ``make_vec_env`` wraps each env in ``Monitor``).
    """
    import gymnasium as gym

    import privenv  # noqa: F401  (registers the ids)

    venv = gym.make_vec(env_id, num_envs=n_envs, vectorization_mode="vector_entry_point",
                        autoreset_mode=AutoresetMode.SAME_STEP, **(env_kwargs or {}))
    env = __getattr__("SB3VecEnv")(venv)
    if monitor:
        env = _require_sb3("make_sb3_vec_env").common.vec_env.VecMonitor(env)
    if seed is not None:
        env.seed(seed)
    return env
