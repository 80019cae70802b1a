"""The RL ids' envs: every family as an env that any Gymnasium learner takes as it is.

``HuberBandit-RL-v0``, ``BestArmIdentification-RL-v0``, ``LinearContextualBandit-RL-v0`` and
``FederatedLinearBandit-RL-v0`` (:data:`~privenv.rl.ids.RL_IDS`; the research id with ``-RL``
before the version) are the views (:mod:`privenv.rl.views`) of the research ids, registered
(:mod:`privenv.rl.ids`) so that code which only knows an
id string — ``gym.make("privenv:HuberBandit-RL-v0")``, ``gym.make_vec`` in every vectorization
mode, SB3's ``make_vec_env``, a single-file PPO script — needs no privenv-specific code:

* **observations**: a flat ``Box`` of float32, the run's sufficient statistics (pull counts,
  empirical means, t/T, …; linear families: the current features and the ridge estimates; see
  :mod:`privenv.rl.features`), so ``np.array(env.observation_space.shape).prod()`` sizes an MLP;
* **episodes**: one episode is one whole bandit run (T pulls; best-arm identification: until the
  learner stops or the budget runs out), ended with ``terminated=True`` — t/T is observed, so the
  end of a run is a terminal state (:func:`~privenv.rl.views.episode_end`); ``truncated`` only
  comes from an outside ``TimeLimit``. Gymnasium's next-step autoreset costs one reset step per
  run (``examples/README-rl.md``); γ = 0 gives the learner a contextual bandit over the
  statistics;
* **a curriculum**: the default instance (``level=0``) is one a generic learner learns in at
  most 5·10⁴ steps; ``level=1, 2, …`` climb to the research instance
  (:data:`~privenv.rl.ids.FAMILIES`; keyword arguments override a level);
* **rewards**: the (released) reward of the pull divided by the family's public scale
  (:func:`reward_scale`; ``normalize_reward=False``: as is) — the silos' mean for the federated
  id; best-arm identification's own design (:func:`bai_reward`: +1 right, −wrong_penalty wrong
  or budget exhausted, −pull_cost per pull; underneath the env runs ``reward_mode="sample"``, so
  the samples reach the statistics through the reward channel, where the local-DP wrappers act;
  the verdict on a recommendation is the env's, never a sample).
  ``BestArmIdentification-RL-v0`` shows the arms in a fresh order every episode
  (``permute_arms=True``: a distribution of instances, without which a learner memorises the
  best arm);
* **actions**: the research id's, except the federated id's — one joint ``Discrete(K^M)``
  action by default (every learner takes it), ``actions="per-silo"`` for ``MultiDiscrete`` — and
  best-arm identification's — ``Discrete(K + 1)`` by default, whose stop recommends the empirical
  best arm, ``actions="any-arm"`` for the research id's ``Discrete(2K)``;
* **local DP by a keyword**: ``gym.make(id, ldp="laplace", epsilon=1.0, reward_range=(-50, 150),
  clip=True)`` puts the wrapper of :data:`~privenv.rl.ids.LDP_WRAPPERS` between the bandit and
  the statistics, with its own parameters; ``env.unwrapped.privacy`` is its guarantee (none
  without ``ldp``).

The research ids keep their faithful observations and the papers' defaults: use them to run and
compare the zoo's algorithms (and trained models, :class:`privenv.rl.agent.SB3Agent`) with
:func:`privenv.simulation.simulate`; use the RL ids to train RL learners.

**Seeding.** ``reset(seed=s)`` of a single RL env is run 0 of seed ``s`` (``options={"first_run":
i}``: run i), as for the research ids. The vector entry point follows Gymnasium's vector
convention, sub-env i gets seed ``s + i``, so ``gym.make_vec(id, n, vectorization_mode=m)`` gives
the same numbers for m = ``"sync"``, ``"async"`` and ``"vector_entry_point"`` and for every
autoreset mode (tested) — unlike the research ids, whose native vector env makes sub-env i run i
of seed ``s``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from privenv._validation import check_choice, check_int, check_real
from privenv.envs.base import FamilyVectorEnv, ProblemEnv
from privenv.privacy.guarantee import PrivacyGuarantee
from privenv.rl.ids import (
    FAMILIES,
    LDP_PARAMETERS,
    LDP_REFUSED,
    LDP_WRAPPERS,
    Family,
    load_entry_point,
)
from privenv.rl.views import SufficientStatistics, VectorSufficientStatistics
from privenv.seeding import Seed

__all__ = [
    "BernoulliBanditRLEnv",
    "BernoulliBanditRLVectorEnv",
    "BestArmIdentificationRLEnv",
    "BestArmIdentificationRLVectorEnv",
    "FederatedLinearBanditRLEnv",
    "FederatedLinearBanditRLVectorEnv",
    "HuberBanditRLEnv",
    "HuberBanditRLVectorEnv",
    "LinearContextualBanditRLEnv",
    "LinearContextualBanditRLVectorEnv",
    "RLBanditEnv",
    "RLBanditVectorEnv",
    "bai_reward",
    "reward_scale",
]


#: the most joint actions ``actions="joint"`` encodes (K^M); beyond, use ``actions="per-silo"``
JOINT_ACTIONS_MAX = 4096
#: the action encodings of the RL ids that have a choice, the first the default (the federated
#: id's one round of M silos, best-arm identification's stop)
ACTION_ENCODINGS: dict[str, tuple[str, ...]] = {
    "FederatedLinearBandit": ("joint", "per-silo"),
    "BestArmIdentification": ("stop-best", "any-arm"),
}


@dataclass(frozen=True)
class _Build:
    """A validated RL id configuration: research-env kwargs, the ldp wrapper and its kwargs."""

    env_kwargs: dict[str, Any]
    ldp: str | None
    ldp_kwargs: dict[str, Any]

    def wrap(self, env: Any, vector: bool) -> Any:
        if self.ldp is None:
            return env
        return load_entry_point(f"privenv.wrappers:{LDP_WRAPPERS[self.ldp][1 if vector else 0]}")(
            env, **self.ldp_kwargs)


def _configure(family: Family, ldp: str | None, level: int, kwargs: dict[str, Any]) -> _Build:
    """Split and check the keyword arguments of an RL id (over the instance of ``level``);
    ``ValueError`` naming the problem."""
    rl_id = family.rl_id
    kwargs = family.level(level) | kwargs
    ldp_kwargs = {k: kwargs.pop(k) for k in LDP_PARAMETERS if k in kwargs}
    for key, (value, why) in family.fixed.items():
        if key in kwargs:
            raise ValueError(f"{key} is fixed by {rl_id} ({key}={value!r}: {why}), got "
                             f"{key}={kwargs[key]!r}")
    env_kwargs = {**kwargs, **{k: v for k, (v, _) in family.fixed.items()}}
    if ldp is None:
        if ldp_kwargs:
            raise ValueError(
                f"{next(iter(ldp_kwargs))} is a parameter of a local-DP wrapper: pass ldp= too "
                f"(one of {_choices(family)})"
            )
        return _Build(env_kwargs, None, {})
    if isinstance(ldp, str) and ldp in LDP_REFUSED:
        raise ValueError(f"ldp must be one of {_choices(family)} for {rl_id}, got {ldp!r}: "
                         f"{LDP_REFUSED[ldp]}")
    if isinstance(family.ldp, str):
        raise ValueError(f"ldp must be None for {rl_id}, got {ldp!r}: {family.ldp}")
    if ldp not in family.ldp:
        known = "" if ldp not in LDP_WRAPPERS else f" ({ldp!r} does not apply to {rl_id})"
        raise ValueError(f"ldp must be one of {_choices(family)} for {rl_id}, got {ldp!r}{known}")
    cls = load_entry_point(f"privenv.wrappers:{LDP_WRAPPERS[ldp][0]}")
    params = {k: p for k, p in inspect.signature(cls.__init__).parameters.items()
              if k not in ("self", "env")}
    unknown = [k for k in ldp_kwargs if k not in params]
    if unknown:
        raise ValueError(f"{unknown[0]} is not a parameter of ldp={ldp!r} ({cls.__name__} takes "
                         f"{', '.join(params)})")
    missing = [k for k, p in params.items() if p.default is p.empty and k not in ldp_kwargs]
    if missing:
        raise ValueError(f"ldp={ldp!r} needs {' and '.join(missing)} ({cls.__name__} takes "
                         f"{', '.join(params)})")
    return _Build(env_kwargs, ldp, ldp_kwargs)


def _choices(family: Family) -> list[Any]:
    return [None] if isinstance(family.ldp, str) else [None, *family.ldp]


def bai_reward(actions: np.ndarray, correct: np.ndarray, exhausted: np.ndarray, K: int,
               pull_cost: float, wrong_penalty: float, right_reward: float) -> np.ndarray:
    """The learner's reward in ``BestArmIdentification-RL-v0``: −pull_cost for a pull,
    +right_reward for a right recommendation, −wrong_penalty for a wrong one, and −wrong_penalty
    more on the pull that exhausts the budget (no answer is scored as a wrong one). With
    pull_cost × budget ≤ right_reward + wrong_penalty (checked), stopping right beats stopping
    wrong and exhausting the budget whatever the stopping times (docs/guides/rl.md)."""
    stops = np.asarray(actions) >= K
    reward = np.where(stops, np.where(correct, right_reward, -wrong_penalty), -pull_cost)
    return reward - np.where(exhausted & ~stops, wrong_penalty, 0.0)


def reward_scale(info: dict[str, Any], normalize: bool) -> float:
    """The divisor of the learner's reward: 1 without normalization; with it, the family's public
    scale — max|μ_a| (``mean_range``) of a Huber bandit, the number of silos M of the federated
    bandit (the reward is the silos' mean), 1 for the linear bandit (±1 labels) and best-arm
    identification (whose reward is designed on that scale)."""
    if not normalize:
        return 1.0
    if "mean_range" in info:
        return float(info["mean_range"]) or 1.0
    return float(info.get("M", 1))


class _RLView:
    """What the single and vector RL envs share: the view, the guarantee, the public info, the
    reward (normalized; best-arm identification's own) and the federated action encoding."""

    family: ClassVar[Family]
    view: Any

    def _build(self, build: _Build, inner: Any, vector: bool, normalize_reward: bool,
               actions: str | None, right_reward: float | None) -> None:
        if not isinstance(normalize_reward, (bool, np.bool_)):
            raise ValueError(f"normalize_reward must be True or False, got {normalize_reward!r}")
        self._inner = inner
        wrapped = build.wrap(inner, vector)
        self.privacy: PrivacyGuarantee = getattr(wrapped, "privacy", PrivacyGuarantee.none())
        self.ldp = build.ldp
        view = VectorSufficientStatistics(wrapped) if vector else SufficientStatistics(wrapped)
        self.view = view
        self.statistics_spec = view.statistics_spec
        self.horizon = inner.horizon
        info = inner.public_info()
        self.normalize_reward = bool(normalize_reward)
        #: the divisor of the learner's reward (:func:`reward_scale`)
        self.reward_scale = reward_scale(info, self.normalize_reward)
        self._bai = info.get("task") == "bai"
        if self._bai:
            right = check_real("right_reward", 1.0 if right_reward is None else right_reward,
                               low=0.0)
            self._cost = (int(info["K"]), float(info["pull_cost"]), float(info["wrong_penalty"]),
                          right)
            if self._cost[1] * self.horizon > (right + self._cost[2]) * (1 + 1e-12):
                raise ValueError(
                    f"pull_cost × horizon must be ≤ right_reward + wrong_penalty (so that a right "
                    f"answer beats a wrong one and an exhausted budget), got {self._cost[1]!r} × "
                    f"{self.horizon} > {right!r} + {self._cost[2]!r}")
        elif right_reward is not None:
            raise ValueError(f"right_reward applies to best-arm identification only, got "
                             f"{right_reward!r}")
        self._silos = int(info.get("M", 1))
        self._per_silo = inner.single_action_space if vector else inner.action_space
        encodings = next((v for k, v in ACTION_ENCODINGS.items() if self.family is FAMILIES[k]),
                         None)
        self.actions = None
        if encodings is not None:
            self.actions = check_choice("actions", encodings[0] if actions is None else actions,
                                        encodings)
        elif actions is not None:
            raise ValueError(f"actions applies to {', '.join(ACTION_ENCODINGS)} only, got "
                             f"{actions!r}")
        if self.actions == "joint":
            K = int(info["K"])
            if K ** self._silos > JOINT_ACTIONS_MAX:
                raise ValueError(
                    f"actions must be 'per-silo' for K^M = {K}^{self._silos} > "
                    f"{JOINT_ACTIONS_MAX} joint actions, got 'joint'")

    def _action_space(self) -> spaces.Space:
        """The learner's action space: the research env's, one joint action for all silos, or
        best-arm identification's K pulls and one stop."""
        if self.actions == "joint":
            return spaces.Discrete(int(self._per_silo.nvec[0]) ** self._silos)
        if self.actions == "stop-best":
            return spaces.Discrete(self._cost[0] + 1)
        return self._per_silo

    def _decode(self, actions: Any) -> Any:
        """The research env's actions: joint actions i → each silo's a_m = ⌊i / K^m⌋ mod K (silo
        0 the least significant); best-arm identification's stop K → stop and recommend the
        empirical best arm â of the run's statistics (K + â)."""
        if self.actions == "stop-best":
            K = self._cost[0]
            a = np.asarray(actions, dtype=np.int64)
            if np.any((a < 0) | (a > K)):
                raise ValueError(f"action must be in [0, {K}] (a pull a < {K}, or {K}: stop with "
                                 f"the empirical best arm), got {actions!r}")
            best = self.view.statistics.empirical_best()
            return np.where(a == K, K + best.reshape(a.shape), a)
        if self.actions != "joint":
            return actions
        K = int(self._per_silo.nvec[0])
        i = np.asarray(actions, dtype=np.int64)
        if np.any((i < 0) | (i >= K ** self._silos)):
            raise ValueError(f"action must be in [0, {K ** self._silos}) (a joint action of "
                             f"{self._silos} silos), got {actions!r}")
        return (i[..., None] // K ** np.arange(self._silos)) % K

    def _reward(self, actions: Any, rewards: Any, info: dict[str, Any], ended: Any) -> Any:
        if self._bai:
            return bai_reward(actions, np.asarray(info["correct"], dtype=bool),
                              np.asarray(ended, dtype=bool), *self._cost)
        return np.asarray(rewards, dtype=float) / self.reward_scale

    def public_info(self) -> dict[str, Any]:
        """The research env's public description (what agents may know; no data)."""
        return self._inner.public_info()

    @property
    def run_seeds(self) -> list[Seed]:
        """The root seed of each run's current episode (as the research env's)."""
        return self._inner.run_seeds


class RLBanditEnv(_RLView, gym.Env):
    """Base of the RL ids' single envs: the research env, an optional local-DP wrapper and the
    :class:`~privenv.rl.views.SufficientStatistics` view (whole-run episodes), as one
    ``gymnasium.Env``.

    Args:
        level: the rung of the family's curriculum (:data:`~privenv.rl.ids.FAMILIES`; 0, the
            default instance, … the research instance); keyword arguments override it.
        normalize_reward: divide the learner's reward by the family's public scale
            (:func:`reward_scale`; default True).
        ldp: ``None`` or a name of :data:`~privenv.rl.ids.LDP_WRAPPERS` that applies to the
            family.
        render_mode: ``"ansi"`` or ``"rgb_array"`` (the research env's board).
        actions: the action encoding (:data:`ACTION_ENCODINGS`): the federated id's
            ``"joint"`` or ``"per-silo"``, best-arm identification's ``"stop-best"`` or
            ``"any-arm"``.
        right_reward: best-arm identification's reward for a right answer (default 1;
            :func:`bai_reward`).
        **kwargs: the research env's keyword arguments (``horizon``, ``K``, …) and the ``ldp``
            wrapper's (``epsilon``, ``delta``, ``reward_range``, ``clip``, ``calibration``).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, level: int = 0, normalize_reward: bool = True, ldp: str | None = None,
                 render_mode: str | None = None, actions: str | None = None,
                 right_reward: float | None = None, **kwargs: Any) -> None:
        family = self.family
        build = _configure(family, ldp, level, kwargs)
        inner: ProblemEnv = family.research_class(vector=False)(render_mode=render_mode,
                                                                  **build.env_kwargs)
        self._build(build, inner, vector=False, normalize_reward=normalize_reward,
                    actions=actions, right_reward=right_reward)
        self.level = level
        self.observation_space = self.view.observation_space
        self.action_space = self._action_space()
        self.render_mode = render_mode

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return self.view.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        decoded = self._decode(action)
        obs, reward, terminated, truncated, info = self.view.step(
            decoded.item() if self.actions == "stop-best" else decoded)
        reward = self._reward(np.asarray(decoded).reshape(1, -1)[:, 0], np.asarray(reward)[None],
                              info, np.array([terminated or truncated]))
        return obs, float(reward[0]), terminated, truncated, info

    def render(self) -> str | np.ndarray | None:
        """The research env's render (raw data: a human view only)."""
        return self._inner.render()

    def close(self) -> None:
        self.view.close()


class RLBanditVectorEnv(_RLView, VectorEnv):
    """Base of the RL ids' native vector envs: ``num_envs`` runs of :class:`RLBanditEnv` at once.

    Sub-env i of ``reset(seed=s)`` is what :class:`RLBanditEnv` reset with seed ``s + i`` gives
    (Gymnasium's vector convention; a list of seeds: ``seed[i]``), and the three autoreset modes
    behave as in ``SyncVectorEnv``, so every vectorization mode gives the same numbers.

    Args:
        num_envs: number of runs.
        level, normalize_reward, ldp: as :class:`RLBanditEnv`.
        autoreset_mode: Gymnasium's ``AutoresetMode`` (``NEXT_STEP`` by default, as
            ``SyncVectorEnv``).
        max_episode_steps: what ``gym.make_vec`` passes; the horizon unless ``horizon`` is given.
        render_mode: as :class:`RLBanditEnv`.
        **kwargs: as :class:`RLBanditEnv`.
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        level: int = 0,
        normalize_reward: bool = True,
        ldp: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        actions: str | None = None,
        right_reward: float | None = None,
        **kwargs: Any,
    ) -> None:
        family = self.family
        if max_episode_steps is not None and "horizon" not in kwargs:
            kwargs["horizon"] = max_episode_steps
        build = _configure(family, ldp, level, kwargs)
        mode = AutoresetMode(autoreset_mode)
        inner: FamilyVectorEnv = family.research_class(vector=True)(
            num_envs=num_envs, autoreset_mode=mode, render_mode=render_mode, **build.env_kwargs
        )
        self._build(build, inner, vector=True, normalize_reward=normalize_reward,
                    actions=actions, right_reward=right_reward)
        self.level = level
        self.num_envs = inner.num_envs
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.render_mode = render_mode
        self.single_observation_space = self.view.single_observation_space
        self.single_action_space = self._action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        options = dict(options or {})
        roots: list[Seed] | None = None
        if seed is not None:  # sub-env i: run `first_run` of seed s + i (or of seed[i])
            seeds = ([seed + i for i in range(self.num_envs)] if isinstance(seed, (int, np.integer))
                     else list(seed))
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed must have one entry per sub-env ({self.num_envs}), got "
                                 f"{len(seeds)}")
            first = check_int("options['first_run']", options.pop("first_run", 0), low=0)
            roots = [np.random.SeedSequence(check_int("seed", s, low=0), spawn_key=(first,))
                     for s in seeds]
        return self.view.reset(seed=roots, options=options or None)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        decoded = self._decode(actions)
        obs, rewards, terminated, truncated, info = self.view.step(decoded)
        rewards = self._reward(decoded, rewards, info, terminated | truncated)
        rewards = np.where(self.view.stepped, rewards, 0.0)
        return obs, rewards, terminated, truncated, info

    def render(self) -> tuple[str, ...] | tuple[np.ndarray, ...] | None:
        """The research env's render, one per run (raw data: a human view only)."""
        return self._inner.render()

    def close(self, **kwargs: Any) -> None:
        self.view.close()


class HuberBanditRLEnv(RLBanditEnv):
    """``HuberBandit-RL-v0``: :class:`~privenv.envs.huber.HuberBanditEnv` for RL learners.

    Observation ``Box((2K + 1,), float32)``: N_a/T, μ̂_a/max|μ| (clipped to ±10), t/T. Reward: the
    (released) reward of the pull, divided by max|μ_a| (``normalize_reward=False``: as is).
    ``ldp``: ``"laplace"``, ``"gaussian"`` (``reward_range`` and, for heavy-tailed rewards,
    ``clip=True``), ``"randomized-response"`` (rewards in [0, 1]). Terminated at ``horizon``
    (default 1000).
    """

    family = FAMILIES["HuberBandit"]


class HuberBanditRLVectorEnv(RLBanditVectorEnv):
    """``HuberBandit-RL-v0``'s native vector env (see :class:`RLBanditVectorEnv`)."""

    family = FAMILIES["HuberBandit"]


class BestArmIdentificationRLEnv(RLBanditEnv):
    """``BestArmIdentification-RL-v0``: :class:`~privenv.envs.bai.BestArmIdentificationEnv` for
    RL learners.

    Observation ``Box((4K + 3,), float32)``: the K-armed features plus the empirical best arm, the
    transportation costs and the GLR statistic (:mod:`privenv.rl.features`). Actions
    (``actions=``): ``"stop-best"`` (default) ``Discrete(K + 1)``, pull a < K or stop with K and
    recommend the empirical best arm â of the run; ``"any-arm"`` ``Discrete(2K)``, the research
    id's (pull a < K; stop and recommend a − K). Reward (:func:`bai_reward`):
    −pull_cost per pull, +right_reward for a right recommendation, −wrong_penalty for a wrong
    one or an exhausted budget. Terminated on a stop or at the budget ``horizon`` (level 0:
    μ = (0.9, 0.2, 0.1), budget 20, pull_cost 0.1, right_reward 1 and wrong_penalty 1; the
    arms in a fresh order every episode: :data:`privenv.rl.ids.FAMILIES`). ``ldp``:
    ``"randomized-response"`` (Bernoulli and Beta laws), ``"laplace"``, ``"gaussian"``
    (``reward_range``), applied to the samples.
    """

    family = FAMILIES["BestArmIdentification"]


class BestArmIdentificationRLVectorEnv(RLBanditVectorEnv):
    """``BestArmIdentification-RL-v0``'s native vector env (see :class:`RLBanditVectorEnv`)."""

    family = FAMILIES["BestArmIdentification"]


class BernoulliBanditRLEnv(RLBanditEnv):
    """``BernoulliBandit-RL-v0``: :class:`~privenv.envs.bernoulli.BernoulliBanditEnv` for RL
    learners.

    Observation ``Box((2K + 1,), float32)``: N_a/T, μ̂_a, t/T. Reward: the (released) reward of the
    pull, 0 or 1 (its public scale is 1). ``ldp``: ``"randomized-response"``, ``"laplace"``,
    ``"gaussian"`` (``reward_range=(0, 1)``). Default K = 3 arms with means 0.9, 0.5, 0.1;
    terminated at ``horizon`` (default 1000).
    """

    family = FAMILIES["BernoulliBandit"]


class BernoulliBanditRLVectorEnv(RLBanditVectorEnv):
    """``BernoulliBandit-RL-v0``'s native vector env (see :class:`RLBanditVectorEnv`)."""

    family = FAMILIES["BernoulliBandit"]


class LinearContextualBanditRLEnv(RLBanditEnv):
    """``LinearContextualBandit-RL-v0``: :class:`~privenv.envs.linear.LinearContextualBanditEnv`
    for RL learners.

    Observation ``Box((A(d + 2) + d(d + 3)/2 + 1,), float32)``: the current features of every
    action, their ridge estimates ⟨φ_a, θ̂⟩ and widths ‖φ_a‖_{V⁻¹}, θ̂, V/T and t/T
    (:mod:`privenv.rl.features`). Reward: the (released) label. ``ldp``: ``"laplace-label"``
    (ε-LDP on the label in [−1, 1]), ``"laplace"``, ``"gaussian"`` (``reward_range``). The
    contexts are public inputs of an RL learner (it stores its observations). Default d = 3,
    A = 4; terminated at ``horizon`` (default 1000).
    """

    family = FAMILIES["LinearContextualBandit"]


class LinearContextualBanditRLVectorEnv(RLBanditVectorEnv):
    """``LinearContextualBandit-RL-v0``'s native vector env (see :class:`RLBanditVectorEnv`)."""

    family = FAMILIES["LinearContextualBandit"]


class FederatedLinearBanditRLEnv(RLBanditEnv):
    """``FederatedLinearBandit-RL-v0``: :class:`~privenv.envs.federated.FederatedLinearBanditEnv`
    for one RL learner acting for every silo.

    Observation ``Box((MK(d + 2) + d(d + 3)/2 + 1,), float32)``: every silo's features, estimates
    and widths, then the pooled ridge statistics (:mod:`privenv.rl.features`). Actions
    (``actions=``): ``"joint"`` (default) ``Discrete(K^M)``, action i playing a_m = ⌊i/K^m⌋ mod K
    in silo m — what every learner (DQN, single-file scripts) takes, up to
    :data:`JOINT_ACTIONS_MAX` joint actions; ``"per-silo"`` ``MultiDiscrete([K] * M)`` (PPO, A2C).
    Reward: the silos' rewards summed, divided by M (their mean; ``normalize_reward=False``: the
    sum). Defaults M = 2, K = 4, d = 3, ``horizon`` 1000 (terminated there). No ``ldp`` (the
    silos' protocol is the privacy of this family; see :mod:`privenv.agents.federated`).
    """

    family = FAMILIES["FederatedLinearBandit"]

    def __init__(self, level: int = 0, normalize_reward: bool = True, ldp: str | None = None,
                 render_mode: str | None = None, actions: str = "joint",
                 **kwargs: Any) -> None:
        super().__init__(level, normalize_reward, ldp, render_mode, actions, **kwargs)


class FederatedLinearBanditRLVectorEnv(RLBanditVectorEnv):
    """``FederatedLinearBandit-RL-v0``'s native vector env (see :class:`RLBanditVectorEnv`)."""

    family = FAMILIES["FederatedLinearBandit"]

    def __init__(self, num_envs: int = 1, level: int = 0, normalize_reward: bool = True,
                 ldp: str | None = None,
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
                 max_episode_steps: int | None = None, render_mode: str | None = None,
                 actions: str = "joint", **kwargs: Any) -> None:
        super().__init__(num_envs, level, normalize_reward, ldp, autoreset_mode,
                         max_episode_steps, render_mode, actions, **kwargs)
