"""Local differential privacy: wrappers that randomize each user's feedback before the learner
sees it (docs/design/threat-model.md).

Each wrapper does one thing — apply one *local randomizer* to the reward of every step — and
declares its guarantee as ``wrapper.privacy`` (a
:class:`~privenv.privacy.guarantee.PrivacyGuarantee` with ``model="local"``). Anything a learner
computes from the released stream is post-processing, so an agent behind an ε-LDP wrapper is an
ε-LDP system (:func:`privenv.privacy.guarantee.system_guarantee`; the runner records it).

* ``RandomizedResponse`` / ``VectorRandomizedResponse`` — ε-LDP on rewards r ∈ [0, 1]: release
  Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) (CTB, paper 3 Algorithm 4 line 2, after Ren et al. 2020);
* ``LaplaceReward`` / ``VectorLaplaceReward`` — ε-LDP on r ∈ [lo, hi]: r + Lap((hi − lo)/ε);
* ``GaussianReward`` / ``VectorGaussianReward`` — (ε, δ)-LDP on r ∈ [lo, hi]: r + N(0, σ²) with
  Δ₂ = hi − lo, σ analytic (Balle & Wang 2018) or classical Δ₂√(2 ln(1.25/δ))/ε (paper 3
  Algorithm 8, with γ as δ);
* ``LaplaceLabel`` / ``VectorLaplaceLabel`` — ε-LDP on the label y ∈ [−1, 1] of a linear
  contextual bandit: y + Lap(2/ε) (paper 4).

The neighbouring relation is replace-one: a user's reward r is replaced by any r′ in the declared
range, so the sensitivity is hi − lo (randomized response: the range is [0, 1]).

## One implementation per mechanism

A mechanism is a local randomizer (:mod:`privenv.privacy.local`: its compiled kernels, its
guarantee, its checks) applied to a *batch* of values, one per run, with each run's next draw
from its own noise stream. The single-env wrapper (a ``gymnasium.RewardWrapper``) is the
batch-of-one case of the same object that the vector wrapper (a
``gymnasium.vector.VectorRewardWrapper``) applies to ``num_envs`` runs at once. The paired
classes follow Gymnasium's own convention (``TransformReward`` / ``vector.TransformReward``).

## Per-run noise

Run *i*'s noise comes from its own stream, keyed by the number of local-DP wrappers beneath this
one, and a vector wrapper follows the env's autoreset mode (:mod:`privenv.wrappers.bookkeeping`):
run *i*'s released rewards are the same in a vector env of 1000 runs and in a single env reset
with ``options={"first_run": i}``, and they do not depend on the agent's seed.

## Trust boundary (what "local" means in a simulator)

The agent-facing stream is exactly what ``step`` returns: the randomized reward, the observation,
the flags and ``info``. Neither the envs nor these wrappers put raw rewards or raw contexts into
``info``; a wrapper removes what ``info`` says about the raw data (:data:`RAW_INFO_KEYS`, e.g.
``HuberBandit``'s ``contaminated``) and keeps no raw value in any attribute.
But local DP is *simulated* here: the raw rewards exist inside the process — ``env.unwrapped`` is
the env itself, its problem buffers future raw rewards, and the noise is a deterministic function
of the seed, so anyone holding the env object or the seed can undo the randomization. The runner
(:func:`privenv.simulation.simulate`, :func:`privenv.simulation.play`) therefore never passes the
env, the seed or ``info`` to an agent; an agent written for privenv must only use what ``act`` and
``observe`` give it. The guarantee is about that stream.

## Numerics and the compiled form

The float and exact samplers, and the compiled kernels every randomizer is (the same kernels on
the fast path of :mod:`privenv.driver`): :mod:`privenv.privacy.local`. Rewards outside the
declared range raise ``ValueError`` naming ``reward`` and the range (never the raw value); they
are clipped only if the caller asks for it (``clip=True``).
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.vector import VectorEnv, VectorRewardWrapper

from privenv.privacy.local import (
    CALIBRATIONS,
    GaussianRandomizer,
    LaplaceRandomizer,
    LocalRandomizer,
    RandomizedResponseRandomizer,
)
from privenv.seeding import RunNoise
from privenv.wrappers.bookkeeping import (
    RAW_INFO_KEYS,
    AutoresetRuns,
    LocalDP,
    check_feedback_channel,
    data_sampler,
    ldp_stack_depth,
    noise_seeds,
    public_info,
    public_step_info,
    run_seeds,
)

__all__ = [
    "CALIBRATIONS",
    "GaussianRandomizer",
    "GaussianReward",
    "LABEL_RANGE",
    "LaplaceLabel",
    "LaplaceRandomizer",
    "LaplaceReward",
    "LocalDPRewardWrapper",
    "LocalDPVectorRewardWrapper",
    "LocalRandomizer",
    "RAW_INFO_KEYS",
    "RandomizedResponse",
    "RandomizedResponseRandomizer",
    "VectorGaussianReward",
    "VectorLaplaceLabel",
    "VectorLaplaceReward",
    "VectorRandomizedResponse",
    "ldp_stack_depth",
    "public_step_info",
]

#: range of the labels y of a linear contextual bandit (paper 4, Definition 1.1)
LABEL_RANGE = (-1.0, 1.0)


# ---------------------------------------------------------------------------------------------
# The two wrapper bases: single env (batch of one) and native vector env
# ---------------------------------------------------------------------------------------------


class LocalDPRewardWrapper(LocalDP, gym.RewardWrapper, gym.utils.RecordConstructorArgs):
    """Releases ``randomizer(reward)`` instead of the reward of a single privenv env.

    Records its constructor arguments (``gym.utils.RecordConstructorArgs``), so the env's spec
    can rebuild it (``env.spec.make()``, used by Gymnasium's checker).

    Args:
        env: a privenv env (or a wrapper of one), which provides per-run seeds.
        randomizer: the local randomizer.
    """

    def __init__(self, env: gym.Env, randomizer: LocalRandomizer) -> None:
        # a subclass records its own (public) arguments first; this call is then ignored
        gym.utils.RecordConstructorArgs.__init__(self, randomizer=randomizer)
        gym.RewardWrapper.__init__(self, env)
        check_feedback_channel(env, type(self).__name__)
        self.randomizer = randomizer
        #: number of local-DP wrappers beneath this one (its noise stream key)
        self.stack_index = ldp_stack_depth(env)
        self._noise: RunNoise | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._noise = RunNoise(noise_seeds(run_seeds(self), self.stack_index))
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, self.reward(reward), terminated, truncated, public_step_info(info)

    def reward(self, reward: SupportsFloat) -> float:
        """The randomized release of one reward (a Python float)."""
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        return float(self.randomizer(np.array([reward], dtype=float), self._noise)[0])


class LocalDPVectorRewardWrapper(LocalDP, VectorRewardWrapper):
    """Releases ``randomizer(rewards)`` instead of the rewards of a native privenv vector env.

    Follows the env's ``autoreset_mode``: runs that sit a step out get reward 0 and consume no
    noise; runs the env restarts restart their noise from their new seeds.

    Args:
        env: a privenv vector env (or a wrapper of one), which provides per-run seeds.
        randomizer: the local randomizer.
    """

    def __init__(self, env: VectorEnv, randomizer: LocalRandomizer) -> None:
        VectorRewardWrapper.__init__(self, env)
        check_feedback_channel(env, type(self).__name__)
        self.randomizer = randomizer
        self.stack_index = ldp_stack_depth(env)
        self._noise: RunNoise | None = None
        self._runs = AutoresetRuns(env)

    def reset(
        self,
        *,
        seed: int | list[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        # (Gymnasium annotates VectorEnv.reset's seed as an int; privenv's envs take one per run)
        obs, info = self.env.reset(seed=seed, options=options)  # type: ignore[arg-type]
        mask = None if not options else options.get("reset_mask")
        if self._noise is None or seed is not None or mask is None:
            self._noise = RunNoise(noise_seeds(run_seeds(self), self.stack_index))
            self._runs.reset()
        else:
            runs = np.flatnonzero(np.asarray(mask, dtype=bool))
            self._reseed(runs)
            self._runs.reset(runs)
        return obs, info

    @property
    def noise(self) -> RunNoise:
        """The wrapper's per-run noise (after ``reset``)."""
        if self._noise is None:
            raise ResetNeeded("call reset() first")
        return self._noise

    def kernel_view(self) -> tuple[LocalRandomizer, RunNoise] | None:
        """What the compiled fast path (:mod:`privenv.driver`) applies in place of this wrapper
        (after ``reset``): its randomizer, whose compiled kernels release each reward, and the
        wrapper's noise; ``None`` if the randomizer is not compiled (it overrides its Python
        methods)."""
        return (self.randomizer, self.noise) if type(self.randomizer).compiled else None

    def _reseed(self, runs: np.ndarray) -> None:
        assert self._noise is not None
        seeds = run_seeds(self)
        self._noise.reseed(runs, noise_seeds([seeds[i] for i in runs], self.stack_index))

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        live, restart = self._runs.before_step()  # live None: every run stepped
        if restart.size:
            self._reseed(restart)
        released = self.rewards(rewards, live)
        restart = self._runs.after_step(terminated | truncated)
        if restart.size:
            self._reseed(restart)
        return obs, released, terminated, truncated, public_step_info(info)

    def rewards(self, rewards: np.ndarray, runs: np.ndarray | None = None) -> np.ndarray:
        """The randomized release of a batch of rewards; only ``runs`` (indices) if given, the
        other runs getting 0."""
        if self._noise is None:
            raise ResetNeeded("call reset() before step()")
        rewards = np.asarray(rewards, dtype=float)
        if runs is None:
            return self.randomizer(rewards, self._noise)
        out = np.zeros(rewards.shape)
        out[runs] = self.randomizer(rewards[runs], self._noise, runs)
        return out


# ---------------------------------------------------------------------------------------------
# The public wrappers
# ---------------------------------------------------------------------------------------------


class RandomizedResponse(LocalDPRewardWrapper):
    """ε-local DP on rewards in [0, 1] by randomized response (CTB).

    ## Description
    Each reward r ∈ [0, 1] is replaced by a Bernoulli((r(e^ε − 1) + 1)/(e^ε + 1)) report
    (paper 3, Algorithm 4 line 2, after Ren et al. 2020; Lemma 12). A Bernoulli(μ) reward becomes
    Bernoulli(μ_ε), μ_ε = (2μ − 1)(e^ε − 1)/(2(e^ε + 1)) + ½, so any non-private algorithm run
    behind this wrapper is CTB-style ε-LDP (e.g. TTUCB → CTB-TT).

    ## Rewards
    0.0 or 1.0 (a Python float). A reward outside [0, 1] raises ``ValueError`` unless
    ``clip=True``. On ``BestArmIdentification-v0`` the sample must be the reward
    (``reward_mode="sample"``; the default ``"cost"`` mode is refused, its observation carries the
    raw sample); there the stop step's reward is 0, randomized like any other (a BAI agent
    ignores it). The zoo's ``ctb-tt`` agent is TTUCB behind this wrapper, built so by the runner.

    ## Privacy
    ``privacy``: ε-DP, local model, per reward (replace-one).

    ## Arguments
    ``env`` (a privenv env), ``epsilon`` (ε > 0), ``clip`` (default False).

    ## Example
    >>> import gymnasium as gym, privenv
    >>> from privenv.wrappers import RandomizedResponse
    >>> base = gym.make("BestArmIdentification-v0", reward_mode="sample")
    >>> env = RandomizedResponse(base, epsilon=1.0)
    >>> obs, info = env.reset(seed=0)
    """

    def __init__(self, env: gym.Env, epsilon: float, clip: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon, clip=clip)
        super().__init__(env, RandomizedResponseRandomizer(epsilon, clip))


class VectorRandomizedResponse(LocalDPVectorRewardWrapper):
    """:class:`RandomizedResponse` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, clip: bool = False) -> None:
        super().__init__(env, RandomizedResponseRandomizer(epsilon, clip))


class LaplaceReward(LocalDPRewardWrapper):
    """ε-local DP on bounded rewards by the Laplace mechanism.

    ## Description
    Each reward r ∈ [lo, hi] is released as r + Lap((hi − lo)/ε) (Dwork & Roth 2014,
    Theorem 3.6, sensitivity hi − lo under replace-one).

    ## Rewards
    A Python float, unbiased for r. A reward outside ``reward_range`` raises ``ValueError``
    unless ``clip=True`` (then it is clipped into the range before the noise: the released value
    is unbiased for the *clipped* reward — e.g. for heavy-tailed or contaminated rewards).

    ## Privacy
    ``privacy``: ε-DP, local model, per reward.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``reward_range`` = (lo, hi), lo < hi, ``clip`` (default False),
    ``sampler`` (``"float"`` or ``"exact"``: the reward rounded to a grid 1000 times finer than
    the noise plus discrete Laplace noise, exactly ε′-DP with ε′ ≤ ε on the doubles released; by
    default the sampler the data calls for,
    :func:`~privenv.wrappers.bookkeeping.data_sampler`: ``"float"`` on privenv's simulated
    problems, ``"exact"`` on real data — a data set, or an env of the caller's own; see
    docs/design/threat-model.md).

    ## Example
    >>> import gymnasium as gym, privenv
    >>> from privenv.wrappers import LaplaceReward
    >>> env = LaplaceReward(gym.make("HuberBandit-v0"), epsilon=1.0, reward_range=(-50, 150),
    ...                     clip=True)
    >>> obs, info = env.reset(seed=0)
    """

    def __init__(
        self,
        env: gym.Env,
        epsilon: float,
        reward_range: tuple[float, float],
        clip: bool = False,
        sampler: str | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self, epsilon=epsilon, reward_range=reward_range, clip=clip, sampler=sampler
        )
        super().__init__(env, LaplaceRandomizer(epsilon, reward_range, clip,
                                                   sampler=data_sampler(env, sampler)))


class VectorLaplaceReward(LocalDPVectorRewardWrapper):
    """:class:`LaplaceReward` for a native privenv vector env (same randomizer, batched)."""

    def __init__(
        self,
        env: VectorEnv,
        epsilon: float,
        reward_range: tuple[float, float],
        clip: bool = False,
        sampler: str | None = None,
    ) -> None:
        super().__init__(env, LaplaceRandomizer(epsilon, reward_range, clip,
                                                   sampler=data_sampler(env, sampler)))


class GaussianReward(LocalDPRewardWrapper):
    """(ε, δ)-local DP on bounded rewards by the Gaussian mechanism.

    ## Description
    Each reward r ∈ [lo, hi] is released as r + N(0, σ²) with Δ₂ = hi − lo and σ from
    ``calibration``: ``"analytic"`` (default; Balle & Wang 2018, exact for every ε) or
    ``"classical"`` (σ = Δ₂√(2 ln(1.25/δ))/ε, paper 3 Algorithm 8 with γ as δ; ε < 1 only).
    On rewards in [0, 1] with the classical calibration, a non-private TTUCB behind this wrapper
    is paper 3's (ε, γ)-LDP TTUCB (Algorithm 8, after Zheng et al. 2020).

    ## Rewards
    A Python float, unbiased for r. Out-of-range rewards: as :class:`LaplaceReward`.

    ## Privacy
    ``privacy``: (ε, δ)-DP, local model, per reward.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``delta`` (δ ∈ (0, 1)), ``reward_range`` = (lo, hi),
    ``calibration`` (``"analytic"`` or ``"classical"``), ``clip`` (default False), ``sampler``
    (``"float"`` or ``"exact"``: the discrete Gaussian on a grid, with the smallest σ at least
    the calibration's whose exact δ(ε) ≤ δ; by default the one the data calls for, as
    :class:`LaplaceReward`).
    """

    def __init__(
        self,
        env: gym.Env,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        calibration: str = "analytic",
        clip: bool = False,
        sampler: str | None = None,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            epsilon=epsilon,
            delta=delta,
            reward_range=reward_range,
            calibration=calibration,
            clip=clip,
            sampler=sampler,
        )
        super().__init__(env, GaussianRandomizer(epsilon, delta, reward_range, calibration, clip,
                                                 sampler=data_sampler(env, sampler)))


class VectorGaussianReward(LocalDPVectorRewardWrapper):
    """:class:`GaussianReward` for a native privenv vector env (same randomizer, batched)."""

    def __init__(
        self,
        env: VectorEnv,
        epsilon: float,
        delta: float,
        reward_range: tuple[float, float],
        calibration: str = "analytic",
        clip: bool = False,
        sampler: str | None = None,
    ) -> None:
        super().__init__(env, GaussianRandomizer(epsilon, delta, reward_range, calibration, clip,
                                                 sampler=data_sampler(env, sampler)))


def _check_label_bound(env: Any, clip: bool) -> None:
    """Fail at construction, not mid-run, when the env declares unbounded labels."""
    bound = public_info(env).get("reward_bound", 1.0)
    if not clip and (bound is None or bound > 1.0):
        raise ValueError(
            f"reward must lie in [-1, 1] for LaplaceLabel, but the env declares reward_bound="
            f"{bound!r} (e.g. noise='gaussian'); pass clip=True to clip labels into [-1, 1]"
        )


class LaplaceLabel(LocalDPRewardWrapper):
    """ε-local DP on the label of a linear contextual bandit: y + Lap(2/ε), y ∈ [−1, 1].

    ## Description
    For ``LinearContextualBandit-v0`` (paper 4, §1.1): the reward is the label
    y ∈ [−1, 1] of the user served at this round; the wrapper releases y + Lap(2/ε) (the
    Laplace randomizer with range [−1, 1], sensitivity 2). It protects the **label only**: the
    context φ(x_t, ·) is the observation, which the learner needs to act and sees in the clear.

    It is *not* the user-side randomizer of LDP-LinUCB (Zheng et al. 2020), where each
    user sends (φφᵀ + symmetric Gaussian noise, φy + Gaussian noise) for the chosen action and the
    learner never touches the raw pair: that is
    :class:`~privenv.wrappers.ldp_linear.GaussianStatistics` (and its vector twin).

    ## Rewards
    A Python float, unbiased for y. An env that declares unbounded labels
    (``public_info()["reward_bound"] is None``, e.g. ``noise="gaussian"``) is refused at
    construction, and a label outside [−1, 1] raises ``ValueError``, unless ``clip=True``.
    With ``contexts="dataset"`` the context predicts the label (it *is* the class): that is
    inference from the public context, which this wrapper does not hide.

    ## Privacy
    ``privacy``: ε-DP, local model, per label.

    ## Arguments
    ``env``, ``epsilon`` (ε > 0), ``clip`` (default False), ``sampler`` (``"float"`` or
    ``"exact"``, as :class:`LaplaceReward`).
    """

    def __init__(self, env: gym.Env, epsilon: float, clip: bool = False,
                 sampler: str | None = None) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, epsilon=epsilon, clip=clip,
                                                 sampler=sampler)
        _check_label_bound(env, clip)
        super().__init__(env, LaplaceRandomizer(epsilon, LABEL_RANGE, clip, unit="label",
                                                sampler=data_sampler(env, sampler)))


class VectorLaplaceLabel(LocalDPVectorRewardWrapper):
    """:class:`LaplaceLabel` for a native privenv vector env (same randomizer, batched)."""

    def __init__(self, env: VectorEnv, epsilon: float, clip: bool = False,
                 sampler: str | None = None) -> None:
        _check_label_bound(env, clip)
        super().__init__(env, LaplaceRandomizer(epsilon, LABEL_RANGE, clip, unit="label",
                                                sampler=data_sampler(env, sampler)))
