"""``bai-global``: paper 3, Figures 2, 4 and 5 — AdaP-TT, AdaP-TT* and DP-SE (ε-global DP) against
TTUCB, stopping time vs ε.

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*, §5.2 and
Appendix I: Bernoulli instances μ1 … μ6, δ = 0.01, ε ∈ {0.001, 0.005, 0.01, 0.05, 0.1, 0.2, …, 0.9,
1, 10, 100, 1000}, 1000 runs. The paper reports AdaP-TT and AdaP-TT* needing fewer samples than
DP-SE at every ε, AdaP-TT* ≤ AdaP-TT in the high-privacy regime, and curves flat in ε in the
low-privacy regime; every point must lie above the global lower bound T*_g(ε)·log(1/(2.4δ))
(Theorem 17, exact; its relaxation max{T*_KL, T*_TV/ε} of Corollary 18 is drawn too), with
empirical error ≤ δ. The public DP-SE the paper compared against had biased means
(docs/guides/bai.md); the DP-SE here is a correct one, so the comparison is measured, not assumed
— and it is reported for both threshold choices of the Top Two agents (``--threshold both``, the
default).

TTUCB is the non-private reference (one point per instance, a horizontal line). The estimated
cost is printed before anything runs (``--dry-run`` prints only that); restrict with
``--instances``, ``--epsilons``, ``--runs``, ``--agents``, ``--horizon``.

Outputs (in ``--output``): ``results.sqlite`` (results store), ``points.csv`` (per point: τ mean
± sd, non-stopping runs, errors with a one-sided 95 % Clopper–Pearson upper bound, whether error ≤
δ is consistent, both lower bounds), ``runs.csv``, ``metadata.json`` and
``bai-global.png``/``.pdf``. Implementation: :mod:`privenv.reproduce.bai`.
"""

from __future__ import annotations

from privenv.reproduce import bai

DEFINITION = bai.GLOBAL
ID = DEFINITION.id
DESCRIPTION = DEFINITION.description
add_arguments, main, reproduce = bai.entry_points(DEFINITION)
