"""Lab (c): local vs central vs shuffle trust models on the same problem.

**Question.** At the same privacy level (ε, δ) = (1, 10⁻⁶) per user's (context, reward), what
does it cost to trust nobody (local DP), a curator (central DP), or a shuffler between the silos
and the server (shuffle DP)?

**Run — why this problem.** No single agent of the zoo implements all three trust models, so the
lab fixes one *problem* and lets each system serve the same users: a linear contextual bandit with
d = 5, 10 actions whose features are uniform on the sphere, ±1 rewards with mean ⟨φ, θ*⟩ and one
fixed θ* (given explicitly to both envs, so the users are identically distributed). N users
arrive; each is served once.

* one learner, ``LinearContextualBandit-v0`` (N rounds): ``linucb`` (no privacy),
  ``ldp-linucb`` (**local**: each user randomizes before the learner sees anything, paper 4),
  ``central-dp-linucb`` (**central**: a trusted learner sees raw data, tree-based noise);
* M = 10 silos, ``FederatedLinearBandit-v0`` (N/M rounds): ``fed-linucb`` (paper 2) with protocol
  ``none``, ``ldp`` (**silo-local**: users trust their silo, silos trust nobody) and
  ``sdp-amplification`` (**shuffle**: silos' messages are shuffled before the server).

The figure shows per-user regret (cumulative regret / users served) against users served.
Default: N = 10⁴, 5 runs (about 1 minute on 2 cores); ``--quick``: N = 600, 2 runs.

**What to notice** (measured at the default size, seed 0; per-user regret after N = 10⁴ users;
random play ≈ 0.7 here):

* local DP (``ldp-linucb``) 0.63 — at ε = 1 the randomized features and rewards are so noisy that
  after 10⁴ users the learner is still almost at random play: the price of trusting nobody.
* central DP 0.10 and non-private LinUCB 0.006: the curator adds noise to sums (once per tree
  node), not to every user.
* federated (M = 10): non-private 0.012, silo-local 0.11 (close to the central learner — each silo
  is a curator for its own users), shuffle 0.30. Shuffling beats silo-local DP only when the
  amplification has many messages to hide among; with 10 silos and δ = 10⁻⁶ its calibrated noise
  is larger than silo-local DP's, so here the shuffle model *loses*: the trust model's promise
  depends on the numbers (M, ε, δ) it runs at.
* ``sdp-vector-sum`` (shuffle DP by vector summation) is refused at this size (its calibration
  cannot reach (ε, δ) with 10 silos) — the library says so rather than run with a weaker
  guarantee.

**At the** ``--quick`` **size** (N = 600 users, 2 runs; what the notebooks run first) the
ordering differs: central DP is at 0.55, close to local DP's 0.67 and above silo-local DP's 0.27
(shuffle 0.47; no privacy 0.050, federated without privacy 0.14). The curator adds its noise
once per node of its tree, an amount that does not grow with N, to sums that do: against the
sums of 600 users it still dominates, against those of 10⁴ it has faded (0.10). Which trust
model costs least depends on how many users there are.

The numbers above are printed by the run; rerun to check them.
"""

from __future__ import annotations

import time

import numpy as np

from privenv.labs import finish_lab, lab_arguments
from privenv.simulation import simulate

NAME = "lab_c_trust_models"
#: the exercises (prompts); their solutions: solutions/lab_c_trust_models.py
EXERCISES = [
    ("Local DP's price as a function of ε: measure `ldp-linucb`'s cumulative regret per "
     "user at ε = 0.5, 2 and 8 on the lab's problem (d = 5, sphere contexts, bounded "
     'noise, A = 10).'),
]
THETA = (np.array([0.6, -0.4, 0.5, 0.3, -0.38]) / np.linalg.norm([0.6, -0.4, 0.5, 0.3, -0.38]))
PROBLEM = {"d": 5, "theta": THETA.tolist(), "contexts": "sphere", "noise": "bounded"}
PRIVACY = {"epsilon": 1.0, "delta": 1e-6}
M = 10
#: label → (agent, env id, agent kwargs, env kwargs); the federated env serves M users a round
SYSTEMS = {
    "linucb (none)": ("linucb", "LinearContextualBandit-v0", {}, {"A": 10}),
    "ldp-linucb (local)": ("ldp-linucb", "LinearContextualBandit-v0", {"epsilon": 1.0},
                           {"A": 10}),
    "central-dp-linucb (central)": ("central-dp-linucb", "LinearContextualBandit-v0", PRIVACY,
                                    {"A": 10}),
    "fed-linucb none (M silos)": ("fed-linucb", "FederatedLinearBandit-v0", {"protocol": "none"},
                                  {"M": M, "K": 10}),
    "fed-linucb ldp (silo-local)": ("fed-linucb", "FederatedLinearBandit-v0",
                                    {"protocol": "ldp", **PRIVACY}, {"M": M, "K": 10}),
    "fed-linucb sdp-amplification (shuffle)": ("fed-linucb", "FederatedLinearBandit-v0",
                                               {"protocol": "sdp-amplification", **PRIVACY},
                                               {"M": M, "K": 10}),
}


def main(argv: list[str] | None = None) -> dict:
    args = lab_arguments(__doc__, NAME, argv)
    users, runs = (600, 2) if args.quick else (10_000, 5)
    start = time.perf_counter()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.5), layout="constrained")  # legend right of the axes
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    summary = {}
    for label, (agent, env_id, agent_kwargs, env_kwargs) in SYSTEMS.items():
        per_round = env_kwargs.get("M", 1)  # users served per round
        res = simulate(agent, env_id, n_runs=runs, horizon=users // per_round, seed=0,
                       env_kwargs={**PROBLEM, **env_kwargs}, agent_kwargs=agent_kwargs)
        served = res.checkpoint_times * per_round
        per_user = res.regret_curve / served
        ax.plot(served, per_user.mean(axis=0), label=f"{label}: {res.privacy}",
                ls="--" if per_round > 1 else "-")
        summary[label] = float(per_user[:, -1].mean())
        print(f"{label:<40} per-user regret {summary[label]:.4f}   [{res.privacy}]")
    ax.set(xscale="log", yscale="log", xlabel="users served",
           ylabel="cumulative regret / users served")
    fig.suptitle(f"Lab (c): the same users, six systems (no DP, local, central; federated: none, "
                 f"silo-local, shuffle), {runs} runs (mean)", fontsize=10)
    fig.legend(fontsize=6.5, loc="outside right center")  # outside the axes: covers no curve
    return finish_lab(fig, args, NAME, start, summary)


if __name__ == "__main__":
    main()
