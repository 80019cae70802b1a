"""Fixed-confidence best-arm identification (paper 3: Azize, Jourdan, Al Marjani, Basu,
*Differentially Private Best-Arm Identification*).

K arms with reward laws ν_a of means μ_a and a **unique** best arm a* = argmax μ_a. At each step the
learner either pulls an arm and sees one sample, or stops and recommends an arm (Protocol 3 of the
paper: the stopping time τ is the number of pulls). Actions are encoded in ``Discrete(2K)``:
``a < K`` pulls arm ``a``; ``a ≥ K`` stops and recommends arm ``a − K`` (helpers :func:`pull`,
:func:`stop`, :func:`decode`).

Reward laws (each pull of arm *a* has mean exactly μ_a):

* ``"bernoulli"`` (default, the paper's experiments): Ber(μ_a), μ_a ∈ [0, 1];
* ``"gaussian"``: N(μ_a, σ²), any finite μ_a;
* ``"beta"``: a bounded law on [0, 1] with mean μ_a: Beta(cμ_a, c(1 − μ_a)) with concentration
  ``c = concentration`` (2 by default, so μ = 1/2 is the uniform law); μ_a ∈ {0, 1} is the point
  mass at μ_a (the limit of the Beta law). Every law on [0, 1] is 1/2-sub-Gaussian (Hoeffding), like
  the Bernoulli ones, so the paper's σ = 1/2 algorithms apply unchanged.

The named instances μ1 … μ6 of Appendix I (from Sajed and Sheffet 2019) are in :data:`INSTANCES`.

A distribution of instances (``permute_arms=True``): each run (and each new episode of a run)
shows the arms in a fresh uniformly random order, drawn from the run's own stream ``(run,
INSTANCE)`` (:mod:`privenv.seeding`): arm *a* of the episode has mean μ_{π(a)}. The algorithms of
the paper are invariant to the order of the arms; an RL learner is not, and without it learns the
instance (its best arm) rather than a strategy.

Feedback channel: by default (``reward_mode="cost"``) a pull's reward is ``−pull_cost`` (an RL
signal) and the **observation** carries the sample; with ``reward_mode="sample"`` the reward is the
sample (as in every other privenv family, so reward-perturbing local-DP wrappers apply unchanged)
and the observation is always 0. In ``"cost"`` mode the stop step rewards 0 if the recommendation is
correct and ``−wrong_penalty`` otherwise; in ``"sample"`` mode the reward channel carries samples
only, so the stop step rewards 0 (correctness is in ``info``) and a local-DP wrapper on the reward
never sees a penalty outside [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from privenv._pcg64 import permutations, stream_states
from privenv._validation import check_bool, check_choice, check_real, check_vector
from privenv.problems.base import (
    ARM_BLOCK,
    BernoulliArms,
    BufferedArms,
    GaussianArms,
    Problem,
    take_values,
)
from privenv.seeding import ENV, INSTANCE, RunStreams, Seed, long_block

#: Bernoulli instances of paper 3, Appendix I (Sajed and Sheffet 2019).
INSTANCES: dict[str, tuple[float, ...]] = {
    "mu1": (0.95, 0.9, 0.9, 0.9, 0.5),
    "mu2": (0.75, 0.7, 0.7, 0.7, 0.7),
    "mu3": (0.0, 0.25, 0.5, 0.75, 1.0),
    "mu4": (0.75, 0.625, 0.5, 0.375, 0.25),
    "mu5": (0.75, 0.53125, 0.375, 0.28125, 0.25),
    "mu6": (0.75, 0.71875, 0.625, 0.46875, 0.25),
}
LAWS = ("bernoulli", "gaussian", "beta")
#: the laws drawn where they are pulled, in compiled code (the Beta law is drawn by numpy)
COMPILED_LAWS = ("bernoulli", "gaussian")
REWARD_MODES = ("cost", "sample")


def pull(a: Any) -> Any:
    """The action that pulls arm ``a`` (an int or an integer array)."""
    return a


def stop(a: Any, K: int) -> Any:
    """The action that stops and recommends arm ``a`` among ``K`` arms."""
    return np.asarray(a) + K if isinstance(a, np.ndarray) else int(a) + int(K)


def decode(action: Any, K: int) -> tuple[Any, Any]:
    """``(stops, arm)`` of an action (or an array of actions): whether it stops, and the arm it
    pulls or recommends."""
    if isinstance(action, np.ndarray):
        return action >= K, np.where(action >= K, action - K, action)
    action = int(action)
    return action >= K, action - K if action >= K else action


def instance_means(instance: str) -> np.ndarray:
    """The means of a named instance (``"mu1"`` … ``"mu6"``)."""
    check_choice("instance", instance, list(INSTANCES))
    return np.asarray(INSTANCES[instance], dtype=float)


class BAIProblem(Problem):
    """Fixed-confidence best-arm identification for ``n_runs`` runs at once.

    Args:
        instance: a named instance ``"mu1"`` … ``"mu6"`` (default ``"mu1"`` when ``means`` is not
            given).
        means: explicit arm means μ_a (K ≥ 2, a unique maximum); exclusive with ``instance``.
        law: ``"bernoulli"``, ``"gaussian"`` or ``"beta"``.
        sigma: standard deviation of the Gaussian law (> 0; only with ``law="gaussian"``).
        concentration: c of the Beta(cμ, c(1 − μ)) law (> 0; only with ``law="beta"``).
        pull_cost: reward −pull_cost of each pull in ``reward_mode="cost"`` (≥ 0).
        wrong_penalty: reward −wrong_penalty of a wrong recommendation in ``"cost"`` mode (≥ 0).
        reward_mode: ``"cost"`` (reward −pull_cost, sample in the observation) or ``"sample"``
            (reward = sample, observation 0).
        permute_arms: show the arms of every run and episode in a fresh uniformly random order
            (default False: arm a has mean μ_a). ``means`` and ``best`` stay those of the
            unpermuted instance; :attr:`run_means` holds each run's current order.
        n_runs: number of runs.
    """

    family = "bai"

    @classmethod
    def sizes(cls, instance: str | None = None, means: Any = None, **_: Any) -> dict[str, int]:
        """K: the length of ``means`` if given, else of the instance's (default ``"mu1"``)."""
        if (K := cls.means_length(means)) is not None:
            return {"K": K}
        return {"K": len(instance_means("mu1" if instance is None else instance))}

    terminates = True

    def __init__(
        self,
        instance: str | None = None,
        means: Sequence[float] | None = None,
        law: str = "bernoulli",
        sigma: float | None = None,
        concentration: float | None = None,
        pull_cost: float = 1.0,
        wrong_penalty: float = 1000.0,
        reward_mode: str = "cost",
        permute_arms: bool = False,
        n_runs: int = 1,
    ) -> None:
        super().__init__(n_runs)
        if instance is not None and means is not None:
            raise ValueError("give either instance or means, not both")
        self.law = check_choice("law", law, LAWS)
        if means is None:
            self.instance: str | None = "mu1" if instance is None else instance
            self.means = instance_means(self.instance)
        else:
            self.instance = None
            self.means = check_vector("means", means, min_length=2)
        self.K = int(self.means.shape[0])
        if self.law in ("bernoulli", "beta") and (self.means.min() < 0 or self.means.max() > 1):
            bad = self.means[(self.means < 0) | (self.means > 1)][0]
            raise ValueError(f"means of a {self.law} law must be in [0, 1], got {bad!r}")
        if sigma is not None and self.law != "gaussian":
            raise ValueError(f"sigma is only used with law='gaussian', got law={self.law!r}")
        if concentration is not None and self.law != "beta":
            raise ValueError(f"concentration is only used with law='beta', got law={self.law!r}")
        self.sigma = check_real(
            "sigma", 1.0 if sigma is None else sigma, low=0.0, low_open=True, high=np.inf,
            high_open=True,
        )
        self.concentration = check_real(
            "concentration", 2.0 if concentration is None else concentration, low=0.0,
            low_open=True, high=np.inf, high_open=True,
        )
        order = np.sort(self.means)
        if order[-1] == order[-2]:
            raise ValueError(
                f"means must have a unique best arm (best-arm identification), got ties at "
                f"{order[-1]!r}"
            )
        self.pull_cost = check_real("pull_cost", pull_cost, low=0.0)
        self.wrong_penalty = check_real("wrong_penalty", wrong_penalty, low=0.0)
        self.reward_mode = check_choice("reward_mode", reward_mode, REWARD_MODES)
        self.best = int(np.argmax(self.means))
        self.permute_arms: bool = check_bool("permute_arms", permute_arms)
        #: each run's arm means in the order it shows them (= ``means`` unless permute_arms)
        self.run_means = np.tile(self.means, (self.n_runs, 1))
        self._best = np.full(self.n_runs, self.best)
        if self.law == "gaussian":
            low, high = -np.inf, np.inf
        else:
            low, high = 0.0, 1.0
        self.single_observation_space = spaces.Box(low, high, shape=(1,), dtype=np.float64)
        self.single_action_space = spaces.Discrete(2 * self.K)
        self._streams: RunStreams | None = None
        self._zero_regret = np.zeros(self.n_runs)
        self._zero_regret.flags.writeable = False  # constant: shared, never copied
        self._zero_gaps = np.zeros(self.K)

    # -- sampling -------------------------------------------------------------------------------
    def _fill(self, gen: np.random.Generator, n: int, row: int) -> np.ndarray:
        """n pulls of the Beta law of arm ``row % K`` of run ``row // K``, shape (n, 1) (the
        other laws are drawn one at a time, in compiled code: :meth:`kernel_view`)."""
        mu = float(self.run_means[row // self.K, row % self.K])
        if mu in (0.0, 1.0):  # the Beta law's limit: a point mass
            return np.full((n, 1), mu)
        c = self.concentration
        return gen.beta(c * mu, c * (1.0 - mu), n)[:, None]

    def arm_block(self, n_rows: int) -> int:
        """numpy's ``beta`` fills an array value after value from the stream's generator, so any
        block gives the same numbers: a longer one, within the buffer budget."""
        return long_block(n_rows, ARM_BLOCK)

    def pulls(self, run: int, arm: int, n: int) -> np.ndarray:
        """The next ``n`` samples of ``arm`` in ``run``, in order (they advance its stream, as
        ``n`` pulls would): a direct look at the laws."""
        row = self._rows[run] + arm
        if self.law in COMPILED_LAWS:
            out = np.empty(n)
            take_values(self.kernel_view(), np.full(n, row), out, np.arange(n))
            return out
        return self.arm_streams.take_many(row, n)[:, 0]

    # -- Problem API ----------------------------------------------------------------------------
    def _reset(
        self, run_seeds: list[Seed], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]:
        fill = None if self.law in COMPILED_LAWS else self._fill
        states = None
        if self.permute_arms:  # before the arm streams, whose first block is drawn at once
            # Generator(PCG64(child(seed, INSTANCE))).permutation(K) of every run, and the arm
            # streams (ENV, a) of the compiled laws, in one compiled seeding: no Python
            # SeedSequence or Generator per run (an RL learner's episodes are short and many)
            keys = [(INSTANCE,)] + ([(ENV, a) for a in range(self.K)] if fill is None else [])
            both = stream_states(run_seeds, keys)
            width = len(keys)
            order = np.empty((len(run_seeds), self.K), dtype=np.int64)
            permutations(both, np.arange(len(run_seeds)) * width, order)
            self.run_means[runs] = self.means[order]
            self._best[runs] = self.run_means[runs].argmax(axis=1)
            if fill is None:
                states = both.reshape(len(run_seeds), width, 4)[:, 1:].reshape(-1, 4)
        if self.reset_arm_streams(run_seeds, runs, self.K, fill, states):
            self._pulls = np.zeros(self.n_runs, dtype=np.int64)
            self._obs = np.zeros((self.n_runs, 1))
        else:
            self._pulls[runs] = 0
            self._obs[runs] = 0.0
        return self._obs.copy(), {}

    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        stops = actions >= self.K
        arms = np.where(stops, actions - self.K, actions)
        pulls = ~stops if live is None else (~stops & live)
        stopping = stops if live is None else (stops & live)
        sample = np.zeros(self.n_runs)
        if pulls.any() and self.law in COMPILED_LAWS:
            runs = np.flatnonzero(pulls)
            take_values(self.kernel_view(), self._rows[runs] + arms[runs], sample, runs)
        elif pulls.any():
            sample[pulls] = self.arm_streams.take(self._rows[pulls] + arms[pulls])[:, 0]
        self._pulls += pulls
        correct = stopping & (arms == self._best)
        if self.reward_mode == "cost":
            reward = np.where(pulls, -self.pull_cost, 0.0)
            if live is not None:  # runs sitting out keep their observation
                self._obs[live, 0] = sample[live]
            else:
                self._obs[:, 0] = sample
            reward = np.where(stopping & ~correct, -self.wrong_penalty, reward)
        else:
            reward = sample
        info = {
            "regret": self._zero_regret,  # no pseudo-regret in best-arm identification
            "stopping_time": self._pulls.copy(),
            "recommendation": np.where(stopping, arms, -1),
            "correct": correct,
        }
        return self._obs.copy(), reward, stopping, info

    def kernel_view(self) -> BernoulliArms | GaussianArms | BufferedArms:
        """Sample streams (the law's own record), zero pseudo-regret, and the best arm of every
        run (in the order it shows its arms)."""
        if self.law == "bernoulli":
            return BernoulliArms(states=self._states, means=self.run_means, K=self.K,
                                 gaps=self._zero_gaps, best=self._best)
        if self.law == "gaussian":
            return GaussianArms(states=self._states, means=self.run_means, sigma=self.sigma,
                                K=self.K, gaps=self._zero_gaps, best=self._best)
        values, pos, end = self.arm_streams.view()
        return BufferedArms(values=values, pos=pos, end=end, K=self.K, gaps=self._zero_gaps,
                            best=self._best)

    def public_info(self) -> dict[str, Any]:
        """The task (``"bai"``: agents with a regret and a BAI version, such as DP-SE, pick the
        latter), K, the law, its sub-Gaussian scale σ (1/2 for Bernoulli and [0, 1]-bounded laws,
        σ for Gaussian), the reward encoding — never the means."""
        return {
            "task": "bai",
            "K": self.K,
            "law": self.law,
            "sigma": self.sigma if self.law == "gaussian" else 0.5,
            "reward_mode": self.reward_mode,
            "pull_cost": self.pull_cost,
            "wrong_penalty": self.wrong_penalty,
        }

