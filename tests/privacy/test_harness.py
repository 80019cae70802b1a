"""The machinery of the privacy audit harness (privenv.privacy.harness): registries, verdicts,
records, bad input.

Every audit target itself — the mechanism cases registered here and the cases of the layers above
(:mod:`privenv.audits`) — is run at size "quick" by tests/privacy/test_audits.py, over the registry
that ``privenv audit`` runs.
"""

from __future__ import annotations

import pytest

from privenv.privacy import audit, audit_composite, audit_noise, harness

#: the privacy layer's mechanism cases (the side-channel cases: tests/privacy/test_side_channel.py)
MECHANISMS = {**audit_noise.CASES, **audit_composite.CASES}


def test_every_mechanism_case_has_a_mutant_or_a_documented_flaw() -> None:
    assert {"laplace", "gaussian", "randomized-response", "tree", "shuffler",
            "fed-linucb-silo", "super-agent-central"} <= set(MECHANISMS)
    for case in MECHANISMS.values():
        assert case.mutations or case.paper_flawed or case.float_sampler, case.target


def _fake(violates: bool, paper: bool = False, target: str = "fake") -> harness.AuditCase:
    res = audit.AuditResult(2.0 if violates else 0.5, 0, "D>D'", 0.5, 0.1, 4, harness.ALPHA)
    return harness.AuditCase(target, "a fake case", lambda m, n, s: harness.Measurement(
        res, 1.0, 0.0), 10, ("bug",), paper_flawed=paper)


@pytest.mark.parametrize(("violates", "paper", "verdict", "ok_correct", "ok_mutant"), [
    (False, False, harness.PASS, True, False),
    (True, False, harness.VIOLATION, False, True),
    (True, True, harness.PAPER_VIOLATION, True, True),
])
def test_verdicts(violates, paper, verdict, ok_correct, ok_mutant) -> None:
    correct, mutant = harness.run_case(_fake(violates, paper))
    assert correct.verdict == verdict and correct.ok == ok_correct
    assert mutant.mutation == "bug" and mutant.mutation_caught == violates
    assert mutant.ok == ok_mutant


def test_a_registry_of_its_own() -> None:
    cases: dict[str, harness.AuditCase] = {}
    harness.register(_fake(False, target="a"), cases)
    harness.register(_fake(True, target="b"), cases)
    assert list(cases) == ["a", "b"] and "a" not in MECHANISMS
    records = harness.run(size="quick", cases=cases)
    assert [(r.target, r.mutation) for r in records] == [
        ("a", None), ("a", "bug"), ("b", None), ("b", "bug")]
    with pytest.raises(ValueError, match="'a' registered twice"):
        harness.register(_fake(False, target="a"), cases)
    with pytest.raises(ValueError, match="targets"):
        harness.run(["laplace"], cases=cases)  # a target of another registry


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="targets"):
        harness.run(["no-such-target"], cases=MECHANISMS)
    with pytest.raises(ValueError, match="targets"):
        # an agent's audit is not a case of the privacy layer
        harness.run(["dp-se"], cases=MECHANISMS)
    with pytest.raises(ValueError, match="size"):
        harness.run(["laplace"], size="huge", cases=MECHANISMS)
    with pytest.raises(ValueError, match="mutation"):
        harness.run_case(MECHANISMS["laplace"], mutations=["no-such-bug"])
    with pytest.raises(ValueError, match="seed"):
        harness.run(["laplace"], seed=-1, cases=MECHANISMS)
