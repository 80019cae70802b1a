"""Theory layer: lower bounds, characteristic times and regret rates of problem instances, used
by tests and as reference curves in plots. One module per problem family:

* :mod:`privenv.theory.bai` — paper 3: characteristic times T*_KL, T*_{KL,β}, T*_TV, T*_{TV²}
  and the local/global-DP sample-complexity lower bounds (Theorems 10, 17; Corollaries 11, 18).
* :mod:`privenv.theory.dp_bai` — the ε-global-DP characteristic time with d_ε in the
  transportation cost (our reading of Jourdan & Azize 2025's lower bound).
* :mod:`privenv.theory.huber` — paper 1: minimax lower-bound rate (Theorem 4.1) and the upper-bound
  rates of Theorems 6.2, 6.10 and 6.12 (orders, constants set to 1).
* :mod:`privenv.theory.regret` — the K-armed Bernoulli bandit: regret lower bounds, non-private
  (Lai & Robbins), ε-global DP (Shariff & Sheffet 2018; Azize & Basu 2022; Azize et al. 2025)
  and ε-local DP (Ren et al. 2020's order), and the divergence d_ε.
* :mod:`privenv.theory.linear` — paper 4: the estimation lower bounds of Theorems 2.1 (MSE) and
  2.2 (MAD of input perturbation) with the constants of their two-point proofs.
"""

from __future__ import annotations

from privenv.theory import bai, dp_bai, huber, linear, regret

__all__ = ["bai", "dp_bai", "huber", "linear", "regret"]
