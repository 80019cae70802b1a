"""``fed-leak``: paper 2, §4 — the privacy leak of data-adaptive synchronisation.

Zhou & Chowdhury (ICLR 2024), §4: in FedUCB (Dubey & Pentland 2020) a silo triggers a global sync
when (t − t_last)·(log det(V_sync + W_i) − log det V_sync) > D, a rule computed on the silo's raw
data; the sync times are public (every silo and the server see them), so one user's data can move
them, whatever noise the *messages* carry (paper 2, Example 4.1 — elided from our excerpt; this is
a reconstruction in its spirit). Paper 2's fixed-batch schedule (sync every B rounds) does not
depend on data and defeats the same test.

**The instance** (adversarially chosen, as worst-case DP allows; :class:`LeakInstance`): M silos,
K arms, d = 2. Every user of every silo has the context φ = e₁ on all K arms (one "typical"
direction; the arms are identical so the actions do not matter) and reward ⟨φ, θ*⟩, θ* =
(½, ½), noise-free. The target is silo 0's user at round t₀. **Replace-one** (the neighbouring
relation of silo-level LDP, the guarantee the messages claim): D has Alice, who brings a new
direction φ = e₂ (same reward ½); D′ has Tracy, a typical user φ = e₁.

**The attack** sees only the public sync times of the run. Score: the length of the sync interval
that contains round t₀ (first sync after a round ≥ t₀ minus last sync after a round < t₀; T + 1
stands for "no sync by T"). Alice's new direction adds log(1 + 1/(λ + W̃₂₂)) ≈ 1/λ to silo 0's
log-det gain where Tracy adds ≈ 1/(λ + W̃₁₁) ≪ 1/λ late in the run, so the interval shortens by
about (λ + W̃₁₁)/(2λ) rounds. The rule (a threshold and direction on the score,
:class:`~privenv.privacy.membership.ThresholdAttack`) is fitted on separate calibration trials,
then evaluated on fresh trials with fair coins
(:func:`~privenv.privacy.membership.membership_test`).

**Agents**: ``feducb-adaptive`` and ``fed-linucb`` (batch B = 25), both with the silo-level LDP
protocol at (ε, δ) = (1, 10⁻⁴) — the adaptive agent's *messages* are calibrated to that budget
(its ``message_privacy``), which would cap any membership attack's success at
(e^ε + δ)/(1 + e^ε) ≈ 0.731 if the whole view were (ε, δ)-DP. D = 0.3 is chosen so that the
background triggers syncs every few tens of rounds (DisLinUCB's default T·log(MT)/(dM) ≈ 110 gives
no sync at all at this size); D, λ and the rule are public. Everything runs in one batched
simulation per agent (n_runs = trials), seeds fixed: no sweep, no results store.

Outputs (in ``--output``): ``trials.csv`` (one row per evaluation trial), ``summary.csv`` (one row
per agent), ``metadata.json`` and ``fed-leak.png``/``.pdf``. The last stdout line is JSON:
``{"adaptive_success": …, "fixed_success": …, "trials": …}``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from privenv._validation import check_delta, check_epsilon, check_int, check_real
from privenv.privacy.membership import (
    MembershipResult,
    dp_success_bound,
    membership_test,
)
from privenv.reproduce.cells import add_common_arguments, finish_figure, output_dir, utc_now

ID = "fed-leak"
DESCRIPTION = ("paper 2, §4: membership inference from the public sync times — FedUCB's "
               "data-adaptive sync leaks, fixed batches are at chance")
PAPER = ("Zhou & Chowdhury, On Differentially Private Federated Linear Contextual Bandits "
         "(ICLR 2024), §4")
#: the two agents compared (registry names) and their legend labels
AGENTS: dict[str, str] = {"feducb-adaptive": "FedUCB, adaptive sync",
                          "fed-linucb": "Private-FedLinUCB, fixed batches"}


@dataclass(frozen=True)
class LeakInstance:
    """The adversarial instance: every user has context e₁, except silo ``silo``'s user at round
    ``t0``, who is Alice (e₂) in D and Tracy (e₁) in D′. Rewards ⟨φ, θ*⟩, θ* = (½, ½), for
    both."""

    M: int = 10
    K: int = 2
    d: int = 2
    horizon: int = 1000
    t0: int = 800
    silo: int = 0

    def __post_init__(self) -> None:
        check_int("M", self.M, low=1)
        check_int("K", self.K, low=1)
        check_int("d", self.d, low=2)
        check_int("horizon", self.horizon, low=2)
        check_int("t0", self.t0, low=1, high=self.horizon)
        check_int("silo", self.silo, low=0, high=self.M - 1)

    def contexts(self, t: int, member: np.ndarray) -> np.ndarray:
        """Round ``t``'s feature matrices, shape (n_runs, M, K, d)."""
        n = member.shape[0]
        phi = np.zeros((n, self.M, self.K, self.d))
        phi[..., 0] = 1.0  # e₁: the typical user
        if t == self.t0:  # Alice brings e₂ in the member runs
            phi[member, self.silo, :, 0] = 0.0
            phi[member, self.silo, :, 1] = 1.0
        return phi

    def rewards(self, phi: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """⟨φ(a), θ*⟩ for the chosen arms, shape (n_runs, M) (½ for every user here)."""
        n, M = actions.shape
        chosen = phi[np.arange(n)[:, None], np.arange(M)[None, :], actions]
        return 0.5 * chosen[..., 0] + 0.5 * chosen[..., 1]


@dataclass(frozen=True)
class Setting:
    """Everything the figure's numbers depend on."""

    instance: LeakInstance
    trials: int
    calibration_trials: int
    epsilon: float = 1.0
    delta: float = 1e-4
    protocol: str = "ldp"
    D: float = 0.3
    batch: int = 25
    alpha: float = 0.05
    seed: int = 0

    def agent_kwargs(self, agent: str) -> dict[str, Any]:
        kw: dict[str, Any] = {"protocol": self.protocol, "epsilon": self.epsilon,
                              "delta": self.delta, "reward_bound": 1.0}
        kw.update({"D": self.D} if agent == "feducb-adaptive" else {"batch": self.batch})
        return kw


FULL = Setting(LeakInstance(), trials=2000, calibration_trials=500)
QUICK = Setting(LeakInstance(horizon=300, t0=240), trials=300, calibration_trials=200)


def sync_times(agent: str, instance: LeakInstance, member: np.ndarray, seed: int,
               first_run: int = 0, **agent_kwargs: Any) -> np.ndarray:
    """Run registered federated ``agent`` on ``instance`` for ``len(member)`` runs at once (run i
    = run ``first_run + i`` of ``seed``, on D if ``member[i]``); returns the public sync record,
    bool (n_runs, T), True at [r, t − 1] iff run r synchronised after round t."""
    from privenv.agents import agent_class
    from privenv.agents.federated import _FederatedLinUCB

    cls = agent_class(agent)
    if not issubclass(cls, _FederatedLinUCB):
        raise ValueError(f"agent must be a federated LinUCB agent, got {agent!r}")
    member = np.asarray(member, dtype=bool)
    inst = instance
    ag = cls(M=inst.M, K=inst.K, d=inst.d, horizon=inst.horizon,
                n_runs=member.shape[0], **agent_kwargs)
    ag.reset(seed, first_run=first_run)
    for t in range(1, inst.horizon + 1):
        phi = inst.contexts(t, member)
        actions = ag.act_batch(phi)
        ag.observe_batch(actions, inst.rewards(phi, actions), phi)
    return ag.sync_times.copy()


def interval_length(record: np.ndarray, t0: int) -> np.ndarray:
    """Per run: length of the sync interval containing round ``t0`` — (first sync after a round
    ≥ t0, or T + 1 if none) − (last sync after a round < t0, or 0 if none)."""
    record = np.asarray(record, dtype=bool)
    T = record.shape[1]
    rounds = np.arange(1, T + 1)
    before = np.where(record & (rounds < t0), rounds, 0).max(axis=1)
    after = np.where(record & (rounds >= t0), rounds, T + 1).min(axis=1)
    return (after - before).astype(float)


@dataclass
class AgentLeak:
    """One agent's membership test."""

    agent: str
    result: MembershipResult
    member: np.ndarray
    score: np.ndarray
    guess: np.ndarray
    syncs: np.ndarray  # per evaluation run: number of syncs
    distinct_records: int  # distinct sync records among the evaluation runs
    wall_s: float


@dataclass
class Reproduction:
    setting: Setting
    output: Path
    leaks: list[AgentLeak]
    wall_s: float = 0.0
    files: dict[str, Path] = field(default_factory=dict)

    def leak(self, agent: str) -> AgentLeak:
        return next(x for x in self.leaks if x.agent == agent)

    def summary(self) -> dict[str, Any]:
        """The JSON line: success of the adaptive and fixed-batch attacks, evaluation trials."""
        return {"adaptive_success": self.leak("feducb-adaptive").result.success,
                "fixed_success": self.leak("fed-linucb").result.success,
                "trials": self.setting.trials}

    def table(self) -> str:
        s = self.setting
        bound = dp_success_bound(s.epsilon, s.delta)
        head = (f"{'agent':<34} {'success':>8} {'95% CP interval':>17} {'ε lower bd':>10} "
                f"{'syncs':>6} {'records':>7}")
        lines = [head, "-" * len(head)]
        for x in self.leaks:
            r = x.result
            lines.append(f"{AGENTS[x.agent]:<34} {r.success:>8.4f} "
                         f"[{r.interval[0]:.4f}, {r.interval[1]:.4f}] "
                         f"{r.epsilon_lower_bound(s.delta):>10.3f} {x.syncs.mean():>6.1f} "
                         f"{x.distinct_records:>7d}")
        lines.append(f"any ({s.epsilon:g}, {s.delta:g})-DP view allows success ≤ "
                     f"(e^ε + δ)/(1 + e^ε) = {bound:.4f} (the messages' nominal silo-level LDP)")
        return "\n".join(lines)


def run_agent(setting: Setting, agent: str) -> AgentLeak:
    """The membership test against one agent."""
    inst = setting.instance
    kwargs = setting.agent_kwargs(agent)
    records: dict[int, np.ndarray] = {}

    def release(member: np.ndarray, seed: int, first_run: int) -> np.ndarray:
        records[first_run] = sync_times(agent, inst, member, seed, first_run, **kwargs)
        return records[first_run]

    start = time.perf_counter()
    result, trial = membership_test(
        release, trials=setting.trials, calibration_trials=setting.calibration_trials,
        score=lambda rec: interval_length(rec, inst.t0), seed=setting.seed, alpha=setting.alpha)
    evaluation = records[setting.calibration_trials]
    return AgentLeak(agent, result, trial["member"], trial["score"], trial["guess"],
                     evaluation.sum(axis=1), len(np.unique(evaluation, axis=0)),
                     time.perf_counter() - start)


def reproduce(
    output: str | Path | None = None,
    *,
    quick: bool = False,
    trials: int | None = None,
    calibration_trials: int | None = None,
    epsilon: float | None = None,
    D: float | None = None,
    seed: int = 0,
    figure: bool = True,
) -> Reproduction:
    """Run the membership test against both agents and write the files.

    Args:
        output: directory (created); default ``results/fed-leak`` (``…-quick`` with ``quick``).
        quick: the reduced setting (T = 300, 300 evaluation trials).
        trials, calibration_trials: override the setting's evaluation / calibration trials.
        epsilon: the messages' ε (default 1; δ = 10⁻⁴).
        D: the adaptive agent's threshold (default 0.3).
        seed: base seed (run i of each phase owns ``SeedSequence(seed, spawn_key=(i,))``).
        figure: draw the PNG/PDF.
    """
    base = QUICK if quick else FULL
    setting = replace(
        base,
        trials=base.trials if trials is None else check_int("trials", trials, low=2),
        calibration_trials=(base.calibration_trials if calibration_trials is None
                            else check_int("calibration_trials", calibration_trials, low=2)),
        epsilon=base.epsilon if epsilon is None else check_epsilon(epsilon),
        D=base.D if D is None else check_real("D", D, low=0.0, low_open=True),
        seed=check_int("seed", seed, low=0))
    check_delta(setting.delta)
    out = output_dir(output, f"results/{ID}", quick)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rep = Reproduction(setting, out, [run_agent(setting, a) for a in AGENTS])
    return finish_figure(rep, start, lambda: write_csvs(rep),
                         (lambda: draw(rep)) if figure else None, lambda: _metadata(rep, quick))


def write_csvs(rep: Reproduction) -> dict[str, Path]:
    s = rep.setting
    files = {"trials": rep.output / "trials.csv", "summary": rep.output / "summary.csv"}
    with files["trials"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "run", "member", "score", "guess", "correct", "syncs"])
        for x in rep.leaks:
            for i in range(x.member.size):
                w.writerow([x.agent, s.calibration_trials + i, int(x.member[i]), x.score[i],
                            int(x.guess[i]), int(x.guess[i] == x.member[i]), int(x.syncs[i])])
    with files["summary"].open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["agent", "protocol", "epsilon", "delta", "trials", "successes", "success",
                    "ci_low", "ci_high", "success_lower", "dp_success_bound", "epsilon_lower_bound",
                    "audit_epsilon_lower_bound", "violates_nominal", "consistent_with_chance",
                    "distinct_sync_records", "threshold", "guess_member_if_below"])
        for x in rep.leaks:
            r = x.result
            w.writerow([x.agent, s.protocol, s.epsilon, s.delta, r.trials, r.successes,
                        r.success, r.interval[0], r.interval[1], r.success_lower,
                        dp_success_bound(s.epsilon, s.delta), r.epsilon_lower_bound(s.delta),
                        r.audit(s.delta).epsilon_lb, int(r.violates(s.epsilon, s.delta)),
                        int(r.consistent_with_chance()), x.distinct_records, r.attack.threshold,
                        int(r.attack.below)])
    return files


def draw(rep: Reproduction) -> list[Path]:
    """(a) the score under each hypothesis; (b) the sync times of a few runs around t₀;
    (c) the attacks' success against what ε-DP allows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privenv.plotting import save_figure

    s, inst = rep.setting, rep.setting.instance
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    for x, hatch in zip(rep.leaks, ("", "//"), strict=True):
        lo, hi = x.score.min(), x.score.max()
        bins = np.arange(lo - 0.5, hi + 1.5)
        for m, colour in ((True, "tab:red"), (False, "tab:blue")):
            ax.hist(x.score[x.member == m], bins=bins, alpha=0.5, color=colour, hatch=hatch,
                    label=f"{AGENTS[x.agent].split(',')[0]}: "
                          f"{'Alice (e₂)' if m else 'Tracy (e₁)'}")
    ax.set_xlabel(f"length of the sync interval containing t₀ = {inst.t0}")
    ax.set_ylabel("evaluation trials")
    ax.set_title("(a) the attacker's score")
    ax.legend(fontsize=7)

    _draw_rasters(axes[1], rep)

    ax = axes[2]
    eps = np.linspace(0.0, 6.0, 200)
    ax.plot(eps, [dp_success_bound(e, s.delta) for e in eps], color="black",
            label="(ε, δ)-DP bound (e^ε + δ)/(1 + e^ε)")
    ax.axvline(s.epsilon, color="grey", ls="--", lw=1,
               label=f"nominal ε = {s.epsilon:g} of the messages")
    for x, colour in zip(rep.leaks, ("tab:red", "tab:green"), strict=True):
        r = x.result
        ax.axhspan(r.interval[0], r.interval[1], color=colour, alpha=0.25)
        ax.axhline(r.success, color=colour,
                   label=f"{AGENTS[x.agent]}: {r.success:.3f} "
                         f"(ε ≥ {r.epsilon_lower_bound(s.delta):.2f})")
    ax.set_xlabel("ε")
    ax.set_ylabel("membership success (balanced prior)")
    ax.set_ylim(0.4, 1.02)
    ax.set_title(f"(c) success vs ε-DP, {s.trials} trials, 95% CP")
    ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(f"fed-leak: membership inference from public sync times — M = {inst.M}, "
                 f"T = {inst.horizon}, silo-level LDP messages (ε, δ) = ({s.epsilon:g}, "
                 f"{s.delta:g}), D = {s.D:g}, B = {s.batch}", fontsize=10)
    fig.tight_layout()
    paths = save_figure(fig, rep.output / ID)
    plt.close(fig)
    return paths


def _draw_rasters(ax: Any, rep: Reproduction) -> None:
    """Sync times of the adaptive agent around t₀ in 6 runs on D and 6 on D′ (a separate
    illustration: runs 10⁶… of the seed, hypotheses assigned by row, not by coin)."""
    s, inst = rep.setting, rep.setting.instance
    member = np.array([True] * 6 + [False] * 6)
    record = sync_times("feducb-adaptive", inst, member, s.seed, 10**6,
                        **s.agent_kwargs("feducb-adaptive"))
    lo = max(1, inst.t0 - 200)
    for y, (rec, m) in enumerate(zip(record, member, strict=True)):
        t = np.flatnonzero(rec) + 1
        t = t[t >= lo]
        ax.scatter(t, np.full(t.size, y), marker="|", s=120,
                   color="tab:red" if m else "tab:blue")
    ax.axvline(inst.t0, color="black", ls=":", lw=1)
    ax.set_yticks([2.5, 8.5], ["Alice (e₂)", "Tracy (e₁)"])
    ax.set_xlabel("round t (sync after round t)")
    ax.set_title(f"(b) adaptive sync times around t₀ = {inst.t0}")


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    from privenv.simulation import versions

    s = rep.setting
    agents = []
    for x in rep.leaks:
        r = x.result
        audit = r.audit(s.delta)
        agents.append({
            "agent": x.agent, "label": AGENTS[x.agent], "agent_kwargs": s.agent_kwargs(x.agent),
            "trials": r.trials, "successes": r.successes, "success": r.success,
            "interval": list(r.interval), "success_lower": r.success_lower,
            "members": r.members, "true_positives": r.true_positives,
            "false_positives": r.false_positives,
            "epsilon_lower_bound": r.epsilon_lower_bound(s.delta),
            "audit_epsilon_lower_bound": audit.epsilon_lb,
            "violates_nominal": r.violates(s.epsilon, s.delta),
            "consistent_with_chance": r.consistent_with_chance(),
            "attack": asdict(r.attack), "mean_syncs": float(x.syncs.mean()),
            "distinct_sync_records": x.distinct_records, "wall_s": x.wall_s,
        })
    return {
        "figure": ID, "description": DESCRIPTION, "paper": PAPER, "created": utc_now(),
        "argv": list(sys.argv), "quick": quick,
        "instance": asdict(s.instance),
        "setting": {k: v for k, v in asdict(s).items() if k != "instance"},
        "neighbouring_relation": "replace-one (silo-level LDP): silo 0's user at round t0 is "
                                 "Alice (context e2) in D, Tracy (context e1) in D'",
        "attack": "threshold on the length of the sync interval containing t0, fitted on "
                  "calibration runs 0..calibration_trials-1, evaluated on the following runs",
        "dp_success_bound": dp_success_bound(s.epsilon, s.delta),
        "seeding": "run i of each phase owns SeedSequence(seed, spawn_key=(i,)); calibration runs "
                   "0..n_cal-1, evaluation runs n_cal..n_cal+trials-1; each run's coin from its "
                   "own seed (privenv.privacy.membership.coins)",
        "agents": agents, "summary": rep.summary(), "wall_s": rep.wall_s,
        "versions": versions(), "files": {k: v.name for k, v in rep.files.items()},
    }


# -- command line ---------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``privenv reproduce fed-leak`` (``--workers``, ``--resume``, ``--backend``,
    ``--address`` are accepted for uniformity and ignored: one in-process batched simulation)."""
    add_common_arguments(parser, f"results/{ID}")
    parser.add_argument("--trials", type=int, default=None,
                        help=f"evaluation trials (default {FULL.trials}; {QUICK.trials} with "
                             "--quick)")
    parser.add_argument("--calibration-trials", type=int, default=None,
                        help=f"trials that fit the attack's rule (default "
                             f"{FULL.calibration_trials}; {QUICK.calibration_trials} with --quick)")
    parser.add_argument("--epsilon", type=float, default=None,
                        help="ε of the agents' silo-level LDP messages (default 1)")
    parser.add_argument("--D", type=float, default=None, dest="D",
                        help="the adaptive agent's sync threshold (default 0.3)")


def main(args: argparse.Namespace) -> int:
    """Run from parsed options; prints the summary, then one JSON line."""
    rep = reproduce(args.output, quick=args.quick, trials=args.trials,
                    calibration_trials=args.calibration_trials, epsilon=args.epsilon, D=args.D,
                    seed=args.seed)
    inst, s = rep.setting.instance, rep.setting
    print(f"{ID}: M = {inst.M}, T = {inst.horizon}, t0 = {inst.t0}, {s.calibration_trials} "
          f"calibration + {s.trials} evaluation trials per agent, wall time {rep.wall_s:.1f} s")
    print(rep.table())
    for name, path in rep.files.items():
        print(f"{name:>9}: {path}")
    print(json.dumps(rep.summary()))
    return 0
