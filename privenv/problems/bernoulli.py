"""The Bernoulli multi-armed bandit (regret): the testbed of the global- and local-DP regret
literature (docs/guides/zoo.md).

K arms; a pull of arm *a* returns a reward in {0, 1}, 1 with probability μ_a. Regret is the
pseudo-regret Σ_t (μ* − μ_{a_t}). The rewards are drawn where they are pulled, in compiled code,
from the run's stream (run, ENV, arm) (:mod:`privenv._pcg64`): the k-th pull of arm *a* in run *i*
is the same reward whichever agent plays, and the same as the k-th sample of arm *a* of
``BestArmIdentification-v0`` on the same means and seed (common random numbers across the two
families; the draw is :class:`~privenv.problems.base.BernoulliArms`' kernel, shared).

Named instances (:data:`INSTANCES`, all K = 5 unless stated):

* ``"mu1"`` … ``"mu6"``: the instances of Sajed & Sheffet (2019), the same means as
  ``BestArmIdentification-v0``'s (paper 3, Appendix I). ``mu4`` = (0.75, 0.625, 0.5, 0.375, 0.25)
  is the instance of Sajed & Sheffet's regret experiments, of Azize & Basu (2022, Figure 2) and of
  Hu & Hegde (2022); ``mu2``, ``mu4``, ``mu5``, ``mu6`` are the four instances of Azize, Wu,
  Honda, Orabona, Ito & Basu (2025) (their μ1 … μ4, in that order);
* ``"azize-basu-fig3"``: (0.8, 0.1, 0.1, 0.1, 0.1), the instance of Azize & Basu (2022,
  Figure 3: regret against ε);
* ``"ren-20"``: K = 20, (0.9, 0.8 × 5, 0.7 × 5, 0.6 × 5, 0.5 × 4), the instance of the public code
  of Ren, Zhou, Liu & Shroff (2020), ``main.py``.

Any other means are given with ``means`` (each in [0, 1]; ties allowed: regret needs no unique
best arm).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from privenv._validation import check_choice, check_vector
from privenv.problems.bai import INSTANCES as BAI_INSTANCES
from privenv.problems.base import BernoulliArms, Problem, take_values
from privenv.seeding import Seed

#: named instances (see the module docstring for where each comes from)
INSTANCES: dict[str, tuple[float, ...]] = {
    **BAI_INSTANCES,
    "azize-basu-fig3": (0.8, 0.1, 0.1, 0.1, 0.1),
    "ren-20": (0.9, *(0.8,) * 5, *(0.7,) * 5, *(0.6,) * 5, *(0.5,) * 4),
}
#: the default instance (the regret literature's most used)
DEFAULT_INSTANCE = "mu4"


def instance_means(instance: str) -> np.ndarray:
    """The means of a named instance (:data:`INSTANCES`)."""
    check_choice("instance", instance, list(INSTANCES))
    return np.asarray(INSTANCES[instance], dtype=float)


class BernoulliProblem(Problem):
    """K-armed Bernoulli bandit (regret) for ``n_runs`` runs at once.

    Args:
        instance: a named instance (:data:`INSTANCES`; default ``"mu4"`` when ``means`` is not
            given).
        means: explicit arm means μ_a ∈ [0, 1] (K ≥ 2); exclusive with ``instance``.
        n_runs: number of runs.
    """

    family = "bernoulli"

    @classmethod
    def sizes(cls, instance: str | None = None, means: Any = None, **_: Any) -> dict[str, int]:
        """K: the length of ``means`` if given, else of the instance's (default ``"mu4"``)."""
        if (K := cls.means_length(means)) is not None:
            return {"K": K}
        return {"K": len(instance_means(DEFAULT_INSTANCE if instance is None else instance))}

    def __init__(
        self,
        instance: str | None = None,
        means: Sequence[float] | None = None,
        n_runs: int = 1,
    ) -> None:
        super().__init__(n_runs)
        if instance is not None and means is not None:
            raise ValueError("give either instance or means, not both")
        if means is None:
            self.instance: str | None = DEFAULT_INSTANCE if instance is None else instance
            self.means = instance_means(self.instance)
        else:
            self.instance = None
            self.means = check_vector("means", means, min_length=2)
            if self.means.min() < 0 or self.means.max() > 1:
                bad = self.means[(self.means < 0) | (self.means > 1)][0]
                raise ValueError(f"means of a Bernoulli law must be in [0, 1], got {bad!r}")
        self.K = int(self.means.shape[0])
        self.best = int(np.argmax(self.means))
        self.gaps = self.means.max() - self.means
        self.single_observation_space = spaces.Discrete(1)
        self.single_action_space = spaces.Discrete(self.K)
        self._run_means = np.tile(self.means, (self.n_runs, 1))
        # constants: shared by every step, never copied
        self._obs = np.zeros(self.n_runs, dtype=np.int64)
        self._optimal = np.full(self.n_runs, self.best)
        self._never = np.zeros(self.n_runs, dtype=bool)
        for constant in (self._obs, self._optimal, self._never):
            constant.flags.writeable = False

    def pulls(self, run: int, arm: int, n: int) -> np.ndarray:
        """The next ``n`` rewards of ``arm`` in ``run``, in order (they advance its stream, as
        ``n`` pulls would): a direct look at the law."""
        out = np.empty(n)
        take_values(self.kernel_view(), np.full(n, self._rows[run] + arm), out, np.arange(n))
        return out

    # -- Problem API ----------------------------------------------------------------------------
    def _reset(
        self, run_seeds: list[Seed], runs: np.ndarray
    ) -> tuple[np.ndarray, dict]:
        self.reset_arm_streams(run_seeds, runs, self.K, None)  # drawn in compiled code
        return self._obs.copy(), {}

    def _step(
        self, actions: np.ndarray, live: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        reward = np.zeros(self.n_runs)
        runs = np.arange(self.n_runs) if live is None else np.flatnonzero(live)
        take_values(self.kernel_view(), self._rows[runs] + actions[runs], reward, runs)
        info = {
            "regret": self.gaps[actions],
            "expected_reward": self.means[actions],
            "optimal_action": self._optimal,
        }
        return self._obs, reward, self._never, info

    def kernel_view(self) -> BernoulliArms:
        """Bernoulli streams drawn in the kernel, the pseudo-regret of each arm, the best arm."""
        return BernoulliArms(states=self._states, means=self._run_means, K=self.K,
                             gaps=self.gaps, best=self._optimal)

    def public_info(self) -> dict[str, Any]:
        """K, the law, its sub-Gaussian scale σ = 1/2 and the reward range [0, 1] — never the
        means."""
        return {"K": self.K, "law": "bernoulli", "sigma": 0.5, "reward_range": (0.0, 1.0)}
