"""``PrivacyGuarantee``: the value every agent and wrapper declares (docs/design/architecture.md,
"The privacy declaration")."""

from __future__ import annotations

import math
from dataclasses import dataclass

from privenv._validation import check_choice, check_real

MODELS = ("none", "central", "local", "shuffle", "silo-local")
#: how the noise is drawn, ``"float"`` (binary64 transforms, DP in idealized arithmetic only)
#: or ``"exact"`` (discrete samplers on a grid, :mod:`privenv.privacy.exact`, whose guarantee
#: holds for the values the computer outputs)
SAMPLERS = ("float", "exact")
#: what each sampler's guarantee holds for (printed with every result)
ARITHMETIC = {"float": "idealized arithmetic", "exact": "exact in binary64"}

NEIGHBOURING = ("replace-one", "add-remove")


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-DP guarantee in a trust model, for a protected unit.

    Args:
        model: ``"none"`` (no privacy), ``"central"`` (a trusted learner sees raw data and
            releases only privatized actions), ``"local"`` (each user randomizes before the
            learner sees anything), ``"shuffle"`` or ``"silo-local"`` (paper 2).
        epsilon: ε (``inf`` for ``model="none"``).
        delta: δ (0 for pure DP).
        unit: what one user contributes, e.g. ``"reward"`` or ``"(context, reward)"``.
        neighbouring: ``"replace-one"`` (Definition 3.4 of paper 1) or ``"add-remove"``.
        sampler: how the noise is drawn (:data:`SAMPLERS`); with ``"exact"`` the (ε, δ) are
            those the exact samplers give, grid and clamping included, and hold for the doubles
            released ("exact in binary64"); with ``"float"`` they hold in idealized real
            arithmetic only (Mironov 2012). The exact samplers also do constant work: an
            observer of the work of a draw (words read, iterations, time) learns more only when
            the draw overruns its budget, probability ≤ 2⁻⁶⁴
            (:data:`privenv.privacy.work.WORK_FAILURE`), which adds
            (1 + e^ε)·2⁻⁶⁴ to δ per draw a user's data enters (docs/design/threat-model.md).
    """

    model: str = "none"
    epsilon: float = math.inf
    delta: float = 0.0
    unit: str = "reward"
    neighbouring: str = "replace-one"
    sampler: str = "float"

    def __post_init__(self) -> None:
        check_choice("model", self.model, MODELS)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURING)
        check_choice("sampler", self.sampler, SAMPLERS)
        if self.model == "none":
            if not (math.isinf(self.epsilon) and self.delta == 0.0):
                raise ValueError("a guarantee with model='none' must have epsilon=inf and delta=0")
            return
        check_real("epsilon", self.epsilon, low=0.0, low_open=True, high=math.inf, high_open=True)
        check_real("delta", self.delta, low=0.0, high=1.0, high_open=True)

    @classmethod
    def none(cls, unit: str = "reward") -> PrivacyGuarantee:
        """No privacy."""
        return cls("none", math.inf, 0.0, unit)

    @property
    def is_private(self) -> bool:
        return self.model != "none"

    def __str__(self) -> str:
        if not self.is_private:
            return "not private"
        eps = f"{self.epsilon:g}"
        head = f"{eps}-DP" if self.delta == 0 else f"({eps}, {self.delta:g})-DP"
        return f"{head}, {self.model} model, per {self.unit}, {self.arithmetic}"

    @property
    def arithmetic(self) -> str:
        """Where the guarantee holds, ``"exact in binary64"`` (the exact samplers, for the
        doubles released) or ``"idealized arithmetic"`` (the float samplers; Mironov 2012)."""
        return ARITHMETIC[self.sampler]

    def as_dict(self) -> dict[str, object]:
        """Plain values for results tables (ε = inf for non-private)."""
        return {
            "privacy_model": self.model,
            "privacy_epsilon": self.epsilon,
            "privacy_delta": self.delta,
            "privacy_unit": self.unit,
            "privacy_neighbouring": self.neighbouring,
            "privacy_sampler": self.sampler,
            "privacy": str(self),
        }


def system_guarantee(
    agent: PrivacyGuarantee, wrappers: tuple[PrivacyGuarantee, ...] = ()
) -> PrivacyGuarantee:
    """The guarantee of an agent running behind local-DP wrappers.

    A local randomizer protects each user's raw value before the learner sees it, and anything the
    learner computes afterwards is post-processing: the whole system is ε-local DP with the
    strongest (smallest-ε) local wrapper on the protected unit. Without a local wrapper the
    system's guarantee is the agent's own.
    """
    local = [w for w in wrappers if w.is_private]
    if not local:
        return agent
    return min(local, key=lambda w: (w.epsilon, w.delta))
