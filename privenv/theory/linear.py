"""Lower bounds of paper 4's estimation results, with explicit constants (Theorems 2.1 and 2.2).

Paper 4 (Li, Simchi-Levi, Wang, *On the Optimal Regret of Locally Private Linear Contextual
Bandit*, §2 and its supplementary §6) states two negative results for d = 2, each with a numerical
constant it leaves unnamed (C̲₁, C̲₂). Both proofs are two-point (Le Cam) arguments, so the
constant can be written down: for a loss that is a seminorm ‖·‖ of θ̂ − θ* (the Λ-weighted
Euclidean norm, or the mean absolute deviation E_φ|φᵀ(θ̂ − θ*)|), two hypotheses θ₀, θ₁ at
distance s = ‖θ₀ − θ₁‖ and a bound TV ≤ t on the total variation between the laws of everything
the estimator sees give, for *every* estimator θ̂ (by the triangle inequality and
P₀(A) + P₁(Aᶜ) ≥ 1 − TV with A = {‖θ̂ − θ₀‖ ≥ s/2}),

    ½(E₀‖θ̂ − θ₀‖^q + E₁‖θ̂ − θ₁‖^q) ≥ (s/2)^q (1 − t)/2,     q = 2 (MSE) or 1 (MAD).

The bound is on the *average* risk over the two hypotheses (hence on the worst case too), which is
what :mod:`privenv.reproduce.ldp_estimation` measures. The same argument applies to the loss
restricted to the hard direction (the e₂ part), because the two hypotheses differ only there.

**Theorem 2.1** (MSE, §6.1). Design φ = e₂ with probability p = c/√n, e₁ otherwise (eq. 3 has
c = 1; the proof takes c = 1/(4√2(e^α − 1))), labels y = ±1 with E[y | φ] = φᵀθ*, hypotheses
θ₀ = (0, 0) and θ₁ = (0, h). The per-sample laws differ only on e₂, where the label means are 0
and h: TV(P₀, P₁) = p·h/2 exactly (the proof bounds it by p). Duchi, Jordan & Wainwright 2018,
Theorem 1, for any sequentially interactive α-LDP channel: KL(Q₀‖Q₁) + KL(Q₁‖Q₀) ≤
n·min{4, e^{2α}}(e^α − 1)²·TV(P₀, P₁)², so Pinsker gives TV(Q₀, Q₁) ≤ a·h with
a = c(e^α − 1)√(min{4, e^{2α}}/8). With s² = p h²,

    average MSE ≥ c h² (1 − a h)/(8√n),

maximized over h ∈ (0, 1] at h = min{1, 2/(3a)} (:func:`thm21_separation`): for c = 1, α = 1,
h = 0.549 and the bound is 0.0125/√n; with the proof's c (h = 1) it is 0.0113/√n. It holds for
pure α-LDP channels only (an (ε, δ) channel is not covered by Duchi et al.'s Theorem 1).

**Theorem 2.2** (MAD, §6.2). Design φ = (½, ±c n^{−1/3}) with probability ½ each (c = 0.07 in the
proof), noiseless labels y = φᵀθ*, hypotheses θ₁ = (½, 0) and θ₂ = (½, ½), and the input
perturbation channel z = (φ + Lap₂(1/α), y + Lap(1/α)). The proof's eq. (20) bounds the total
variation of the n samples by t = 11.1 (cα)^{3/2} (Lemma 6.1, which needs α ≤ 1), and
s = E|φᵀ(θ₁ − θ₂)| = c n^{−1/3}/2, so

    average MAD ≥ c n^{−1/3} (1 − t)/8        (= 0.0069 n^{−1/3} at c = 0.07, α = 1).

It binds any estimator built on that channel, and on any Laplace input perturbation with a
*larger* scale b ≥ 1/α: Lap(b) is Lap(1/α) plus an independent variable (the characteristic
function 1/(1 + b²u²) is 1/(1 + u²/α²) times that of the mixture of a point mass at 0, weight
1/(αb)², and Lap(b)), so such an estimator is one on the 1/α channel that adds the extra noise
itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privenv._validation import check_epsilon, check_points, check_real

__all__ = [
    "THM22_C",
    "thm21_lower_bound",
    "thm21_proof_c",
    "thm21_separation",
    "thm21_tv_slope",
    "thm22_lower_bound",
    "thm22_tv",
]

#: the proof of Theorem 2.2 (§6.2) takes c = 0.07 in φ = (½, ±c n^{−1/3})
THM22_C = 0.07


def thm21_proof_c(epsilon: float) -> float:
    """The proof's c = 1/(4√2(e^α − 1)) (§6.1): P(φ = e₂) = c/√n."""
    return 1.0 / (4.0 * math.sqrt(2.0) * math.expm1(check_epsilon(epsilon)))


def thm21_tv_slope(epsilon: float, c: float = 1.0) -> float:
    """a with TV(Q₀, Q₁) ≤ a·h for the hypotheses (0, 0) and (0, h): c(e^α − 1)√(min{4, e^{2α}}/8)
    (Duchi et al. 2018, Theorem 1, and Pinsker; module docstring)."""
    epsilon = check_epsilon(epsilon)
    c = check_real("c", c, low=0.0, low_open=True, high=math.inf, high_open=True)
    return c * math.expm1(epsilon) * math.sqrt(min(4.0, math.exp(2.0 * epsilon)) / 8.0)


def thm21_separation(epsilon: float, c: float = 1.0) -> float:
    """The h ∈ (0, 1] that maximizes Theorem 2.1's two-point bound c h²(1 − a h): min{1, 2/(3a)}."""
    return min(1.0, 2.0 / (3.0 * thm21_tv_slope(epsilon, c)))


def thm21_lower_bound(n: Any, epsilon: float, c: float = 1.0, h: float | None = None
                      ) -> np.ndarray:
    """Average MSE over θ* ∈ {(0, 0), (0, h)} of any α-LDP estimator on Theorem 2.1's design with
    P(e₂) = c/√n: ≥ c h²(1 − a h)/(8√n) (module docstring); ``h`` defaults to
    :func:`thm21_separation`. Requires c/√n ≤ 1."""
    x = check_points("n", n)
    h = thm21_separation(epsilon, c) if h is None else check_real("h", h, low=0.0, high=1.0,
                                                                   low_open=True)
    if np.any(c / np.sqrt(x) > 1.0):
        raise ValueError(f"n must satisfy c/sqrt(n) <= 1 (a probability), got c={c!r} and "
                         f"n={n!r}")
    t = min(1.0, thm21_tv_slope(epsilon, c) * h)
    return c * h * h * (1.0 - t) / (8.0 * np.sqrt(x))


def thm22_tv(epsilon: float, c: float = THM22_C) -> float:
    """The proof's bound 11.1 (cα)^{3/2} on the total variation of the n samples (eq. 20),
    capped at 1; Lemma 6.1 needs α ≤ 1 and c ≤ ½."""
    epsilon = check_real("epsilon", epsilon, low=0.0, high=1.0, low_open=True)
    c = check_real("c", c, low=0.0, high=0.5, low_open=True)
    return min(1.0, 11.1 * (c * epsilon) ** 1.5)


def thm22_lower_bound(n: Any, epsilon: float, c: float = THM22_C) -> np.ndarray:
    """Average MAD over θ* ∈ {(½, 0), (½, ½)} of any estimator on Laplace input perturbation with
    scale ≥ 1/α of Theorem 2.2's design: ≥ c n^{−1/3}(1 − t)/8, t = :func:`thm22_tv`."""
    x = check_points("n", n)
    return c * x ** (-1.0 / 3.0) * (1.0 - thm22_tv(epsilon, c)) / 8.0
