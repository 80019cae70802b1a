"""End-to-end audits of the Bernoulli bandit's private agents (docs/guides/zoo.md), with the
machinery of :mod:`privenv.audits.agents`.

Every case plays the agent through its own act/observe protocol on reward tables D and D′ that
differ only in one user (reward 1 vs 0, every arm), K = 2, the first half of the runs on D and
the second on D′, and audits what the privacy proof is about:

* **global DP, phase agents** (AdaP-UCB, AdaP-KLUCB, Lazy-DP-TS, DP-KLUCB, DP-IMED, and the
  best-arm agent DP Top Two of :mod:`privenv.agents.dp_top_two`): the
  history of the private means μ̃ after every round (every release of the run), T = 10; arm 0's
  rewards are 1 and arm 1's 0, so most pulls go to arm 0, and user 0 (arm 0's first pull) would
  be in its later releases too if a reward were reused; mutants: the Laplace scale halved, a reward
  reused (``forget = False``: DAF's later phase means, or the geometric phases' sums, take the
  arm's earlier rewards again);
* **global DP, continual release** (DP-UCB with the tree and with the hybrid mechanism): the
  history of the private sums S̃ after every round, T = 15, every reward 1 but the audited
  user's (DP-UCB: user 0, the leaf in most nodes; hybrid: user 8); the score is the Laplace
  likelihood ratio of the releases that hold that user's reward (read off S̃); mutant: every
  Laplace scale halved;
* **local DP** (LDP-UCB-L, LDP-UCB-B, LDP-SE): the agent's own randomizer
  (``local_randomizer``, wrapped by the runner's :func:`privenv.simulation.system_env`) on a
  table env and the learner behind it; output: the learner's reward sums after T = 2 rounds
  (user 0's release, as the learner holds it); mutants: the randomizer at 2ε, no randomizer.

Events: a linear score fitted on one half of the runs (the continual-release cases: the declared
likelihood-ratio score), a threshold event chosen on that half and evaluated on the other
(:func:`~privenv.privacy.audit_scores.fitted_holdout_lower_bound`,
:func:`~privenv.privacy.audit.holdout_epsilon_lower_bound`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from privenv.audits.agents import _drive, _neighbour_table, drive_wrapped
from privenv.privacy import audit
from privenv.privacy.audit_scores import fitted_holdout_lower_bound
from privenv.privacy.harness import ALPHA, AuditCase, Measurement, register

__all__ = ["CASES"]

#: the cases of this module, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = {}
_register = functools.partial(register, cases=CASES)


def _history(cls: type, field: str) -> type:
    """``cls`` keeping a copy of its state field ``field`` after every round (the audited
    output: every release the run made)."""

    class History(cls):
        def reset_state(self) -> None:
            super().reset_state()
            self.history: list[np.ndarray] = []

        def observe_batch(self, actions: Any, rewards: Any, observations: Any) -> None:
            super().observe_batch(actions, rewards, observations)
            self.history.append(np.array(getattr(self, field), dtype=float))

    return History


def _hooked(cls: type, mutation: str | None, hooks: dict[str, dict[str, Any]]) -> type:
    """``cls`` or its mutant: a subclass that sets the audit hooks of ``hooks[mutation]``."""
    if mutation is None:
        return cls
    return type(f"{cls.__name__}Mutant", (cls,), hooks[mutation])


def _history_audit(cls: type, field: str, kw: dict[str, Any], base: Any, horizon: int,
                   epsilon: float, n: int, seed: int) -> Measurement:
    rows = _neighbour_table(n, horizon, 2, base, 0, 1.0, 0.0)
    recording = _history(cls, field)
    out = _drive(lambda m: recording(K=2, epsilon=epsilon, n_runs=m, **kw), rows, 2 * n, seed,
                 lambda agent, actions: np.stack(agent.history, axis=1).reshape(agent.n_runs, -1))
    return Measurement(fitted_holdout_lower_bound(out[:n], out[n:]), epsilon, 0.0)


# -- global DP: the phase agents ------------------------------------------------------------------
_PHASE_EPS, _PHASE_T = 1.0, 10
_PHASE_HOOKS: dict[str, dict[str, Any]] = {"noise x 0.5": {"noise_multiplier": 0.5},
                                           "reward reused": {"forget": False}}


def _phase(class_name: str) -> Any:
    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.agents import dp_regret

        cls = _hooked(getattr(dp_regret, class_name), mutation, _PHASE_HOOKS)
        return _history_audit(cls, "mu_tilde", {}, np.array([1.0, 0.0]), _PHASE_T, _PHASE_EPS,
                              n, seed)

    return sample


for _name, _cls, _what in (
    ("adap-ucb", "AdaPUCB", "AdaP-UCB (DAF: each episode's mean + Lap(1/(εÑ)))"),
    ("adap-klucb", "AdaPKLUCB", "AdaP-KLUCB (DAF, as adap-ucb)"),
    ("lazy-dp-ts", "LazyDPTS", "Lazy-DP-TS (DAF, as adap-ucb; Thompson draws between releases)"),
    ("dp-klucb", "DPKLUCB", "DP-KLUCB (geometric phases: each phase's sum + Lap(1/ε), summed)"),
    ("dp-imed", "DPIMED", "DP-IMED (geometric phases, as dp-klucb)"),
):
    _register(AuditCase(
        _name, f"{_what}, K = 2, ε = 1, T = {_PHASE_T}: arm 0's rewards 1, arm 1's 0, user 0 "
        "(arm 0's first pull) 1 vs 0; output: the private means after every round; mutants: "
        "Laplace scale halved, a reward reused (forget = False)", _phase(_cls), 20_000,
        tuple(_PHASE_HOOKS), power_floor=0.5))


def _dp_top_two(mutation: str | None, n: int, seed: int) -> Measurement:
    from privenv.agents.dp_top_two import DPTopTwo

    cls = _hooked(DPTopTwo, mutation, _PHASE_HOOKS)
    return _history_audit(cls, "mu_tilde", {}, np.array([1.0, 0.0]), _PHASE_T, _PHASE_EPS, n,
                          seed)


_register(AuditCase(
    "dp-top-two", f"DP Top Two of Jourdan & Azize 2025 (geometric batches, each batch's sum + "
    f"Lap(1/ε), summed), BestArmIdentification, K = 2, ε = 1, T = {_PHASE_T}: arm 0's rewards 1, "
    "arm 1's 0, user 0 (arm 0's first pull) 1 vs 0; output: the private means after every round; "
    "mutants: Laplace scale halved, a reward reused (forget = False)", _dp_top_two, 20_000,
    tuple(_PHASE_HOOKS), power_floor=0.5))


# -- global DP: continual release -----------------------------------------------------------------
# Both arms' rewards are 1 except user t₀'s (1 vs 0, every arm); the user lands on leaf i of the
# arm pulled at round t₀ (public: the actions). The score is the likelihood-ratio statistic of
# the Laplace releases that hold that leaf, read off the arm's private sums S̃ (every release is a
# difference of two of them): Σ_j (|v_j − m_j′| − |v_j − m_j|) / b_j, v_j such a release, m_j and
# m_j′ its exact value under D and D′ (all leaves 1, or leaf i 0), b_j its declared scale.
_TREE_EPS, _TREE_T = 1.0, 15  # T = 15: DP-UCB's L = 4 levels


def _node_releases(i: int, n: int, levels: int) -> list[tuple[int, int]]:
    """The blocks (start, end) of the binary mechanism's released nodes that hold leaf i, among
    n leaves: level j's block m (leaves (m − 1)2ʲ + 1 … m2ʲ) is released iff m is odd (it ends at
    a leaf whose lowest set bit is j) and m2ʲ ≤ n."""
    out = []
    for j in range(levels):
        m = -(-i // 2**j)
        if m % 2 == 1 and m * 2**j <= n:
            out.append(((m - 1) * 2**j, m * 2**j))
    return out


def _release_term(sums: np.ndarray, start: int, end: int, scale: float) -> float:
    """The likelihood-ratio term of the release of leaves start + 1 … end (its value read off
    the private sums after ``start`` and ``end`` leaves; 0 if it was not made)."""
    if end >= sums.size:
        return 0.0
    v, size = sums[end] - sums[start], end - start
    return (abs(v - (size - 1)) - abs(v - size)) / scale


def _continual_score(user: int) -> Any:
    """record(agent, actions): the likelihood-ratio score of the releases that hold ``user``'s
    reward, per run (see above)."""

    def record(agent: Any, actions: np.ndarray) -> np.ndarray:
        history = np.stack(agent.history, axis=1)  # (runs, T, K): S̃ after every round
        score = np.zeros(len(actions))
        for r in range(len(actions)):
            arm = actions[r, user]
            mine = np.flatnonzero(actions[r] == arm)  # the rounds of this arm's leaves 1, 2, …
            i = int(np.searchsorted(mine, user)) + 1
            sums = np.concatenate([[0.0], history[r, mine, arm]])  # S̃ after 0, 1, …, n leaves
            if not agent.HYBRID:
                score[r] = sum(_release_term(sums, a, b, agent.levels / agent.epsilon)
                               for a, b in _node_releases(i, sums.size - 1, agent.levels))
                continue
            k = (i - 1).bit_length()  # the logarithmic release at 2^k ≥ i > 2^{k−1}
            score[r] = _release_term(sums, 0 if k == 0 else 2 ** (k - 1), 2**k,
                                     2.0 / agent.epsilon)
            if i & (i - 1):  # not a power of two: in the tree of segment 2^s + 1 … 2^{s+1} − 1
                seg = i.bit_length() - 1
                depth, base = max(seg, 1), 2**seg
                in_segment = min(sums.size - 1, 2 ** (seg + 1) - 1) - base
                score[r] += sum(_release_term(sums, base + a, base + b, 2.0 * depth / agent.epsilon)
                                for a, b in _node_releases(i - base, in_segment, depth))
        return score

    return record


def _tree(class_name: str, user: int) -> Any:
    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.agents import dp_ucb

        cls = _history(_hooked(getattr(dp_ucb, class_name), mutation,
                               {"noise x 0.5": {"noise_multiplier": 0.5}}), "private_sum")
        rows = _neighbour_table(n, _TREE_T, 2, 1.0, user, 1.0, 0.0)
        score = _drive(lambda m: cls(K=2, horizon=_TREE_T, epsilon=_TREE_EPS, n_runs=m), rows,
                       2 * n, seed, _continual_score(user))
        return Measurement(audit.holdout_epsilon_lower_bound(score[:n], score[n:], alpha=ALPHA),
                           _TREE_EPS, 0.0)

    return sample


_register(AuditCase(
    "dp-ucb", "DP-UCB (a binary mechanism per arm, T = 15: L = 4 levels, node noise Lap(L/ε)), "
    "K = 2, ε = 1: every reward 1 but user 0's (1 vs 0: arm 0's leaf 1, in up to L nodes); "
    "output: both arms' private sums after every round; score: the Laplace likelihood ratio of "
    "the nodes that hold the leaf; mutant: node noise scale halved", _tree("DPUCB", 0), 20_000,
    ("noise x 0.5",), power_floor=0.3))
_register(AuditCase(
    "dp-ucb-hybrid", "DP-UCB with the hybrid mechanism (logarithmic releases Lap(2/ε), segment "
    "trees Lap(2 max{k, 1}/ε)), the instance, output and score of dp-ucb (the logarithmic "
    "release and the segment's nodes that hold the leaf) with user 8 (a leaf past the first "
    "segments: in a logarithmic release and, unless a power of two, its segment's nodes); "
    "mutant: every Laplace scale halved", _tree("DPUCBHybrid", 8), 20_000, ("noise x 0.5",),
    power_floor=0.3))


# -- local DP: wrapper + learner ------------------------------------------------------------------
_LOCAL_EPS, _LOCAL_T = 1.0, 2


def _local(class_name: str) -> Any:
    def sample(mutation: str | None, n: int, seed: int) -> Measurement:
        from privenv.agents import ldp_regret

        base = getattr(ldp_regret, class_name)

        kw = {"horizon": 10**6} if "horizon" in base.parameters else {}

        class DoubleEpsilon(base):  # type: ignore[valid-type, misc]
            """Mutant: the randomizer of the same system at 2ε in front of this learner
            (declared ε)."""

            def local_randomizer(self) -> Any:
                return base(K=self.K, epsilon=2 * self.epsilon, **kw).local_randomizer()

        class RawReward(base):  # type: ignore[valid-type, misc]
            """Mutant: the learner is given the bare env (no randomizer)."""

            def local_randomizer(self) -> Any:
                return None

        cls = {"epsilon x 2 in the wrapper": DoubleEpsilon,
               "no randomizer": RawReward}.get(mutation or "", base)
        rows = _neighbour_table(n, _LOCAL_T, 2, 0.5, 0, 1.0, 0.0)
        out = drive_wrapped(lambda m: cls(K=2, epsilon=_LOCAL_EPS, n_runs=m, **kw), rows, 2 * n,
                            _LOCAL_T, seed, lambda agent, actions: np.array(agent.sums))
        return Measurement(fitted_holdout_lower_bound(out[:n], out[n:]), _LOCAL_EPS, 0.0)

    return sample


for _name, _cls, _what, _floor in (  # the floor: a Laplace release is seen less well (0.48)
    ("ldp-ucb-l", "LDPUCBL", "LDP-UCB-L (the LaplaceReward wrapper on [0, 1] + UCB)", 0.3),
    ("ldp-ucb-b", "LDPUCBB", "LDP-UCB-B (the RandomizedResponse wrapper + UCB1 on the bits)",
     0.5),
    ("ldp-se", "LDPSE", "LDP-SE (the RandomizedResponse wrapper + successive elimination)", 0.5),
):
    _register(AuditCase(
        _name, f"{_what} end to end: the agent's own randomizer (local_randomizer) on a table "
        "env, K = 2, ε = 1, T = 2: user 0 (arm 0's first pull) 1 vs 0; output: the learner's "
        "reward sums; mutants: the randomizer at 2ε, no randomizer", _local(_cls), 20_000,
        ("epsilon x 2 in the wrapper", "no randomizer"), power_floor=_floor))
