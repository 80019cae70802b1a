"""The privacy audit harness (privenv.privacy.harness) and ``privenv audit``.

Every registered case at size "quick", with its fixed seed: the correct target's ε lower bound
stays at or below its declared ε (false alarm ≤ 1e-6 per case, Clopper–Pearson with Bonferroni
inside the case) and exceeds the case's power floor (the audit can see the mechanism at all);
a paper's own flawed mechanism is reported as a documented violation; every mutation is caught.
"""

from __future__ import annotations

import json

import pytest

from privenv import cli
from privenv.privacy import audit, harness

#: cases run by another test file (no double cost): target → file
TESTED_ELSEWHERE = {"fed-linucb-silo": "tests/privacy/test_federated_protocol.py",
                    **{name: "tests/privacy/test_preimage.py" for name in harness.CASES
                       if name.startswith("preimage-")}}
VARIANTS = [(name, m) for name, case in harness.CASES.items() if name not in TESTED_ELSEWHERE
            for m in (None, *case.mutations)]


@pytest.mark.parametrize(("target", "mutation"), VARIANTS,
                         ids=[f"{t}-{m or 'correct'}".replace(" ", "_") for t, m in VARIANTS])
def test_case(target: str, mutation: str | None) -> None:
    case = harness.CASES[target]
    [rec] = harness.run_case(case, "quick", mutations=[] if mutation is None else [mutation],
                             include_correct=mutation is None)
    assert rec.n == case.n_quick and rec.alpha <= harness.ALPHA
    if mutation is None:
        if case.paper_flawed:
            assert rec.verdict == harness.PAPER_VIOLATION, rec
        else:
            assert rec.verdict == harness.PASS, rec
            assert rec.epsilon_lower_bound <= rec.declared_epsilon
        if case.power_floor is not None:
            assert rec.epsilon_lower_bound > case.power_floor, rec  # power, not privacy
    else:
        assert rec.mutation_caught and rec.verdict == harness.CAUGHT, rec
    assert rec.ok


def test_registry_covers_the_issue() -> None:
    required = {"laplace", "gaussian", "randomized-response", "wishart-jiang2016",
                "wishart-gaussian", "tree", "shuffler", "prae-r", "prae-c", "dprse", "dp-se",
                "adap-tt", "adap-tt-star", "ctb-tt", "ldp-linucb-message", "ldp-linucb",
                "central-dp-linucb", "fed-linucb-silo", "super-agent-central", "laplace-exact",
                "gaussian-exact", "laplace-snapping"}
    assert required <= set(harness.CASES)
    for case in harness.CASES.values():
        # every audit has a mutant, or audits a documented flaw
        assert case.mutations or case.paper_flawed or case.float_sampler, case.target


def _fake(violates: bool, paper: bool = False) -> harness.AuditCase:
    res = audit.AuditResult(2.0 if violates else 0.5, 0, "D>D'", 0.5, 0.1, 4, harness.ALPHA)
    return harness.AuditCase("fake", "a fake case", lambda m, n, s: harness.Measurement(
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


def test_cli_json_and_exit_code(capsys, monkeypatch) -> None:
    code = cli.main(["audit", "--targets", "randomized-response,wishart-jiang2016",
                     "--format", "json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0
    keys = {"target", "declared_epsilon", "declared_delta", "epsilon_lower_bound", "verdict",
            "mutation", "mutation_caught"}
    assert all(keys <= set(r) for r in rows)
    assert [(r["target"], r["mutation"]) for r in rows] == [
        ("randomized-response", None), ("randomized-response", "epsilon + 0.1"),
        ("wishart-jiang2016", None)]
    assert rows[1]["mutation_caught"] is True
    assert rows[2]["verdict"] == harness.PAPER_VIOLATION
    # a violating target (or a missed mutation) makes the command fail
    monkeypatch.setitem(harness.CASES, "fake", _fake(True))
    assert cli.main(["audit", "--targets", "fake"]) == 1
    out = capsys.readouterr().out
    assert "fake" in out and harness.VIOLATION in out


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="targets"):
        harness.run(["no-such-target"])
    with pytest.raises(ValueError, match="size"):
        harness.run(["laplace"], size="huge")
    with pytest.raises(ValueError, match="mutation"):
        harness.run_case(harness.CASES["laplace"], mutations=["no-such-bug"])
