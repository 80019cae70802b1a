"""``bai-local``: paper 3, Figures 1 and 3 — CTB-TT (ε-local DP) against TTUCB, stopping time vs ε.

Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*, §5.1 and
Appendix I: Bernoulli instances μ1 … μ6, δ = 0.01, ε ∈ {0.01, 0.05, 0.1, 0.2, …, 0.9, 1, 10, 100},
1000 runs. The paper reports that CTB-TT equals TTUCB in the low-privacy regime and scales like
ε⁻² in the high-privacy one; every point must lie above the local lower bound
max{T*_KL, T*_TV²/c(ε)}·log(1/(2.4δ)) (Corollary 11), with empirical error ≤ δ.

CTB-TT declares its randomized-response randomizer (``Agent.local_randomizer``), which the runner
puts in front of TTUCB; TTUCB alone is the non-private reference (one point per instance, a
horizontal line). Both run with the stopping thresholds chosen by ``--threshold`` (default:
both).

Full scale is very expensive: CTB-TT's stopping time grows like ε⁻² (the local bound alone is
≈ 10⁸ pulls at ε = 0.01 on μ1, μ2 and μ6), so the points at ε ≤ 0.05 reach the 10⁸-pull budget
and are reported as non-stopping; each such cell takes many hours. The estimated cost is printed
before anything runs (``--dry-run`` prints only that); restrict with ``--instances``,
``--epsilons``, ``--runs``, ``--agents``, ``--horizon``.

Outputs (in ``--output``): ``results.sqlite`` (results store), ``points.csv`` (per point: τ mean
± sd, non-stopping runs, errors with a one-sided 95 % Clopper–Pearson upper bound, whether error ≤
δ is consistent, the lower bound), ``runs.csv``, ``metadata.json`` and ``bai-local.png``/``.pdf``.
Implementation: :mod:`privenv.reproduce.bai`.
"""

from __future__ import annotations

from privenv.reproduce import bai

DEFINITION = bai.LOCAL
ID = DEFINITION.id
DESCRIPTION = DEFINITION.description
add_arguments, main, reproduce = bai.entry_points(DEFINITION)
