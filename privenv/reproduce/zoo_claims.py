"""The papers' claims as tests, for the zoo's comparisons (``dp-mab-regret``, ``ldp-mab-regret``,
``dp-bai-optimal``): each claim a paper states — an ordering, a ratio to a bound, a rate — is
measured at the comparison's points and marked with a verdict word of the claims ledger
(docs/results/claims.md): **reproduced**, **partly reproduced**, **not reproduced** or
**untested** (none of its points was run).

* **Ordering** (:func:`order_verdict`): "A has lower regret (or stopping time) than B". Every run
  of every point uses the same seed, so run *i* of A and run *i* of B see the same reward streams
  (common random numbers) and are compared *paired*: the mean over runs of x_B − x_A with its
  standard error. A comparison is *as claimed* when the mean is more than two standard errors
  above 0, *reversed* when more than two below, *not resolved* otherwise (a false-alarm
  probability of about 2.3 % per comparison and direction under the normal approximation).
  Verdict: reproduced if every comparison in the claim's scope is as claimed; not reproduced if
  any is reversed; partly reproduced otherwise (some as claimed, the rest not resolved).
* **Ratio** (:func:`ratio_verdict`): "x ≤ c × bound" with the paper's constant c: reproduced if
  the mean is at most c × bound at every point in scope, partly reproduced at some, not
  reproduced at none. The papers' ratios are asymptotic (T → ∞, δ → 0): the verdict is for the
  horizon or risk run, and says so.
* **Rate in ε** (:func:`rate_verdict`): "regret matches the lower bound up to a constant" (a
  rate in ε with unstated constants): the ratio regret/bound is measured at every ε where the
  bound is informative (below uniform play's regret at the horizon: elsewhere every algorithm,
  and the bound, is past linear regret) and the claim holds if, on each instance, the ratio's
  spread max/min over those ε is below ε_max/ε_min — the factor by which a rate off by one power
  of ε would move it. Fewer than two informative ε: untested.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from privenv._stats import sample_sd

#: a paired difference counts when it is more than this many standard errors from 0
Z_PAIRED = 2.0
#: the verdict words (those of docs/results/claims.md that a measurement can give)
VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "untested")


@dataclass(frozen=True)
class Comparison:
    """A paired comparison "``better`` < ``worse``" at one point: the mean and standard error of
    x_worse − x_better over runs."""

    where: str
    better: str
    worse: str
    mean: float
    se: float

    @property
    def outcome(self) -> str:
        if self.mean > Z_PAIRED * self.se:
            return "as claimed"
        if self.mean < -Z_PAIRED * self.se:
            return "reversed"
        return "not resolved"


def compare(where: str, better: str, worse: str, x_better: np.ndarray,
            x_worse: np.ndarray) -> Comparison:
    """The paired comparison of two points' runs (same seed, same number of runs)."""
    a, b = np.asarray(x_better, dtype=float), np.asarray(x_worse, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired runs need the same number of runs, got {a.size} and {b.size}")
    d = b - a
    se = sample_sd(d) / math.sqrt(d.size) if d.size > 1 else math.inf
    return Comparison(where, better, worse, float(d.mean()), float(se))


@dataclass(frozen=True)
class Verdict:
    """One claim's line: its id, where it comes from, the paper's words, how we test it, where,
    what we measured and the verdict."""

    id: str
    source: str
    claim: str
    test: str
    scope: str
    measured: str
    verdict: str

    def line(self) -> str:
        return f"{self.id} [{self.verdict}] {self.claim} — {self.measured}"


def order_verdict(comparisons: Sequence[Comparison]) -> tuple[str, str]:
    """(verdict, measured text) of an ordering claim from its paired comparisons."""
    if not comparisons:
        return "untested", "none of its points was run"
    n = len(comparisons)
    fine = [c for c in comparisons if c.outcome == "as claimed"]
    rev = [c for c in comparisons if c.outcome == "reversed"]
    text = f"as claimed in {len(fine)} of {n} paired comparisons"
    if rev:
        text += ", reversed in " + "; ".join(
            f"{c.where}: {c.worse} below {c.better} by {-c.mean:.3g} ± {c.se:.2g}"
            for c in rev[:4]) + (" …" if len(rev) > 4 else "")
        return "not reproduced", text
    if len(fine) == n:
        return "reproduced", text
    return "partly reproduced", text + f" ({n - len(fine)} not resolved at ± {Z_PAIRED:g} se)"


def ratio_verdict(ratios: Mapping[str, float], constant: float, what: str) -> tuple[str, str]:
    """(verdict, measured text) of "x/bound ≤ ``constant``" from the ratio at each point."""
    if not ratios:
        return "untested", "none of its points was run"
    values = np.array(list(ratios.values()))
    ok = int(np.count_nonzero(values <= constant))
    text = (f"{what} {values.min():.3g}–{values.max():.3g} over {values.size} points; ≤ "
            f"{constant:g} at {ok}")
    if ok == values.size:
        return "reproduced", text
    return ("partly reproduced" if ok else "not reproduced"), text


def rate_verdict(ratios: Mapping[str, Mapping[float, float]]) -> tuple[str, str]:
    """(verdict, measured text) of a rate-in-ε claim: ``ratios[instance][ε]`` = regret/bound at
    the informative ε of that instance (module docstring)."""
    parts, held, tested = [], 0, 0
    for inst, by_eps in ratios.items():
        if len(by_eps) < 2:
            continue
        tested += 1
        eps = sorted(by_eps)
        r = np.array([by_eps[e] for e in eps])
        spread, allowed = float(r.max() / r.min()), eps[-1] / eps[0]
        held += spread < allowed
        parts.append(f"{inst}: ratio {r.min():.3g}–{r.max():.3g} over ε {eps[0]:g}–{eps[-1]:g} "
                     f"(spread {spread:.3g} {'<' if spread < allowed else '≥'} {allowed:g})")
    if not tested:
        return "untested", "fewer than two ε with an informative bound on every instance"
    verdict = ("reproduced" if held == tested else "partly reproduced" if held
               else "not reproduced")
    return verdict, "; ".join(parts)


def claims_table(verdicts: Sequence[Verdict]) -> str:
    """The verdicts as text, one claim per paragraph."""
    return "\n".join(f"  {v.id} [{v.verdict}] ({v.source}) {v.claim}\n      test: {v.test}; "
                     f"scope: {v.scope}\n      measured: {v.measured}" for v in verdicts)


def write_claims(path: Path, verdicts: Sequence[Verdict]) -> Path:
    """``claims.csv``: one row per claim (the fields of :class:`Verdict`)."""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, list(Verdict.__dataclass_fields__), lineterminator="\n")
        w.writeheader()
        w.writerows(asdict(v) for v in verdicts)
    return path


__all__ = ["VERDICTS", "Z_PAIRED", "Comparison", "Verdict", "claims_table", "compare",
           "order_verdict", "rate_verdict", "ratio_verdict", "write_claims"]
