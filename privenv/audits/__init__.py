"""Every privacy audit of privenv, in one registry: what ``privenv audit`` runs.

The privacy layer audits its own mechanisms (:mod:`privenv.privacy.audit_noise`, the noise
samplers; :mod:`privenv.privacy.audit_composite`, the mechanisms built on them;
:mod:`privenv.privacy.side_channel`, what the exact samplers' work reveals), holds the machinery
(:mod:`privenv.privacy.harness`: :class:`~privenv.privacy.harness.AuditCase`,
:func:`~privenv.privacy.harness.run_case`, the records) and the score statistics
(:mod:`privenv.privacy.audit_scores`), and imports nothing above it. The audits of what the
layers above build live here, at the top:

* :mod:`privenv.audits.randomizers` — the local randomizers of :mod:`privenv.wrappers` (LDP-LinUCB's
  user message, input perturbation) and the messages of LPLR's users;
* :mod:`privenv.audits.agents` — every private agent end to end, through its own act/observe
  protocol (and its local-DP wrapper, if it has one); :mod:`privenv.audits.zoo` — the same for
  the Bernoulli bandit's private agents.

:data:`CASES` merges them in report order: the mechanism cases, with the side-channel cases after
the exact-preimage ones, the local randomizers after the Wishart mechanisms and the agents after
the shuffle model (before the federated protocols).
A target's seed depends on its name only, so a target gives the same record alone
(``--targets``) or in the whole run.

Example:
    >>> from privenv import audits
    >>> [r.verdict for r in audits.run(["randomized-response"])]
    ['pass', 'mutation caught']
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor

from privenv.audits import agents, randomizers, zoo
from privenv.backends.local import exit_with_parent
from privenv.privacy import audit_composite, audit_noise, harness, side_channel
from privenv.privacy.harness import DEFAULT_SEED, AuditCase, AuditRecord, format_table, run_case

__all__ = ["CASES", "format_table", "merge", "run", "run_case"]


def merge(cases: Mapping[str, AuditCase],
          after: Mapping[str, Mapping[str, AuditCase]]) -> dict[str, AuditCase]:
    """The registry ``cases`` with each registry ``after[target]`` inserted after ``target``;
    a target name must be unique across them all."""
    for anchor in after:
        if anchor not in cases:
            raise ValueError(f"audit target {anchor!r} to insert after is not registered")
    out: dict[str, AuditCase] = {}
    for name, case in cases.items():
        for c in (case, *after.get(name, {}).values()):
            harness.register(c, out)
    return out


#: every audit target of ``privenv audit``, in report order
#:
#: :meta hide-value:
CASES: dict[str, AuditCase] = merge({**audit_noise.CASES, **audit_composite.CASES},
                                   {"preimage-snapping": side_channel.CASES,
                                    "wishart-gaussian": randomizers.CASES,
                                    "shuffler": {**agents.CASES, **zoo.CASES}})


def run(targets: Sequence[str] | None = None, size: str = "quick",
        seed: int = DEFAULT_SEED, *, isolate: bool | None = None) -> list[AuditRecord]:
    """Audit ``targets`` of :data:`CASES` (default: all of them) at ``size``
    (:func:`privenv.privacy.harness.run`).

    ``isolate``: audit each target in a fresh worker process, one after the other (default: at
    size ``"full"`` with more than one target). The records are the same either way (a target's
    seed depends on its name only); in one process, what a target leaves behind (compiled
    kernels, the allocator's free memory) adds up over forty targets, so the whole run would
    peak above its largest target.
    """
    names, size, seed = harness.check_run(targets, size, seed, CASES)
    if isolate is None:
        isolate = size == "full" and len(names) > 1
    if not isolate:
        return [r for name in names for r in _run_target(name, size, seed)]
    records: list[AuditRecord] = []
    for name in names:  # a new worker per target, started the platform's default way (on Linux
        # a fork, which shares this process's imported modules instead of loading them again)
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context(),
                                 initializer=exit_with_parent) as pool:
            records += pool.submit(_run_target, name, size, seed).result()
    return records


def _run_target(name: str, size: str, seed: int) -> list[AuditRecord]:
    """The records of one target (in this process, or in a worker of :func:`run`)."""
    return run_case(CASES[name], size, seed)
