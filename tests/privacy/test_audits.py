"""Every privacy audit (privenv.audits, the registry of ``privenv audit``) and the command.

Every registered case at size "quick", with its fixed seed: the correct target's ε lower bound
stays at or below its declared ε (false alarm ≤ 1e-6 per case, Clopper–Pearson with Bonferroni
inside the case) and exceeds the case's power floor (the audit can see the mechanism at all);
a paper's own flawed mechanism is reported as a documented violation; every mutation is caught —
for an agent, a mutant subclass that runs the agent's own code with wrong noise through its audit
hooks.
"""

from __future__ import annotations

import json

import pytest

import privenv.agents as zoo
from privenv import audits, cli
from privenv.agents.lplr import LPLRUsers
from privenv.audits import agents, randomizers
from privenv.audits import zoo as zoo_cases
from privenv.privacy import audit, audit_composite, audit_noise, harness, side_channel
from privenv.privacy.tree import TreeMechanism

#: cases run by another test file (no double cost): target → file. A private agent's cases run
#: in the agent's own test file (tests/conftest.py: ``AUDIT_TARGETS``, ``check_audit``).
AGENT_FILES = {
    "tests/agents/test_dp_se.py": ("dp-se", "dp-se-exact"),
    "tests/agents/test_huber_agents.py": ("prae-r", "dprse", "dprse-exact", "prae-c",
                                          "prae-c-exact"),
    "tests/agents/test_adap_tt.py": ("adap-tt", "adap-tt-star", "daf-wrapper", "adap-tt-exact"),
    "tests/agents/test_local_top_two.py": ("ctb-tt",),
    "tests/agents/test_linear_agents.py": ("ldp-linucb", "ldp-linucb-message",
                                           "input-perturbation-message",
                                           "input-perturbation-exact",
                                           "gaussian-statistics-exact"),
    "tests/agents/test_central_linucb.py": ("central-dp-linucb", "central-dp-linucb-exact"),
    "tests/agents/test_lplr.py": ("lplr-update-count", "lplr-ci", "lplr-update-count-exact",
                                  "lplr-update-label-moment", "lplr-update-gram"),
    "tests/agents/test_federated_agents.py": ("super-agent-central",
                                              "super-agent-central-exact"),
    "tests/agents/test_dp_regret_agents.py": ("dp-ucb", "dp-ucb-hybrid", "adap-ucb",
                                              "adap-klucb", "lazy-dp-ts", "dp-klucb", "dp-imed"),
    "tests/agents/test_ldp_regret_agents.py": ("ldp-ucb-l", "ldp-ucb-b", "ldp-se"),
    "tests/agents/test_dp_top_two.py": ("dp-top-two",),
}
TESTED_ELSEWHERE = {"fed-linucb-silo": "tests/privacy/test_federated_protocol.py",
                    **{name: "tests/privacy/test_preimage.py" for name in audits.CASES
                       if name.startswith("preimage-")},
                    **{name: "tests/privacy/test_side_channel.py" for name in side_channel.CASES},
                    **{name: path for path, names in AGENT_FILES.items() for name in names}}
#: the cases this file runs (tests/conftest.py parametrizes ``test_case`` over them)
AUDIT_TARGETS = [name for name in audits.CASES if name not in TESTED_ELSEWHERE]


def test_case(audit_target: str, audit_mutation: str | None, check_audit) -> None:
    check_audit(audit_target, audit_mutation)


def test_every_case_runs_once_and_every_agent_case_in_its_agents_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each agent test file runs exactly the cases listed for it (its ``AUDIT_TARGETS``), every
    end-to-end agent case is one of them, and no case runs in two files."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path, names in AGENT_FILES.items():
        monkeypatch.syspath_prepend(str((root / path).parent))  # its folder's helper modules
        spec = importlib.util.spec_from_file_location(Path(path).stem, root / path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert tuple(module.AUDIT_TARGETS) == names, path
    assert set(agents.CASES) | set(zoo_cases.CASES) <= {n for names in AGENT_FILES.values()
                                                         for n in names}
    listed = [n for names in AGENT_FILES.values() for n in names]
    assert len(listed) == len(set(listed)) and set(listed) <= set(audits.CASES)


def test_every_agent_a_user_can_make_keeps_its_audit_hooks() -> None:
    """The hooks through which the mutants change an agent's noise are the identity in every
    registered agent: noise × 1, rewards forgotten between releases, the memoising tree, LPLR's
    own users. (DPA, ``ttucb-dpa``, keeps every reward by design: it adds no noise and declares
    no privacy.)"""
    for name in zoo.REGISTRY:
        cls = zoo.agent_class(name)
        assert getattr(cls, "noise_multiplier", 1.0) == 1.0, name
        assert getattr(cls, "forget", True) or name == "ttucb-dpa", name
        assert getattr(cls, "tree_class", TreeMechanism) is TreeMechanism, name
        users = getattr(cls, "users_class", LPLRUsers)
        assert users is LPLRUsers and users.noise_multiplier == 1.0, name


def test_registry_covers_the_issue() -> None:
    required = {"laplace", "gaussian", "randomized-response", "wishart-jiang2016",
                "wishart-gaussian", "tree", "shuffler", "prae-r", "prae-c", "dprse", "dp-se",
                "adap-tt", "adap-tt-star", "daf-wrapper", "ctb-tt", "ldp-linucb-message",
                "ldp-linucb",
                "central-dp-linucb", "fed-linucb-silo", "super-agent-central", "laplace-exact",
                "gaussian-exact", "laplace-snapping", "lplr-update-count", "lplr-ci",
                "lplr-update-label-moment", "lplr-update-gram", "input-perturbation-message",
                "input-perturbation-exact", "gaussian-statistics-exact",
                "lplr-update-count-exact", "side-channel-laplace-exact",
                "side-channel-gaussian-exact", "side-channel-snapping",
                # issue 32: the Bernoulli bandit's private agents
                "dp-ucb", "dp-ucb-hybrid", "adap-ucb", "adap-klucb", "dp-klucb", "dp-imed",
                "lazy-dp-ts", "ldp-ucb-l", "ldp-ucb-b", "ldp-se", "dp-top-two"}
    assert required <= set(audits.CASES)
    for case in audits.CASES.values():
        # every audit has a mutant, or audits a documented flaw
        assert case.mutations or case.paper_flawed or case.float_sampler, case.target


def test_one_registry_of_every_layer_in_report_order() -> None:
    names = list(audits.CASES)
    parts = (audit_noise.CASES, side_channel.CASES, randomizers.CASES, agents.CASES,
             zoo_cases.CASES, audit_composite.CASES)
    assert sorted(names) == sorted(n for part in parts for n in part)  # each once
    assert all(audits.CASES[n] is part[n] for part in parts for n in part)
    # each registry keeps its order; the layers above sit after their anchors
    for part in parts:
        assert [n for n in names if n in part] == list(part)
    h = names.index("preimage-snapping")
    assert names[h + 1: h + 1 + len(side_channel.CASES)] == list(side_channel.CASES)
    i = names.index("wishart-gaussian")
    assert names[i + 1: i + 1 + len(randomizers.CASES)] == list(randomizers.CASES)
    j = names.index("shuffler")
    assert names[j + 1: j + 1 + len(agents.CASES)] == list(agents.CASES)
    k = j + len(agents.CASES)  # the Bernoulli bandit's agents after the papers' agents
    assert names[k + 1: k + 1 + len(zoo_cases.CASES)] == list(zoo_cases.CASES)
    assert names[-4:] == ["fed-linucb-silo", "fed-linucb-silo-exact", "super-agent-central",
                          "super-agent-central-exact"]
    # the end-to-end agent cases are the agents'; the privacy layer's are mechanisms only
    assert {"dp-se", "ctb-tt", "central-dp-linucb"} <= set(agents.CASES)
    mechanisms = {*audit_noise.CASES, *audit_composite.CASES}
    assert not {"dp-se", "ldp-linucb-message", "lplr-ci"} & mechanisms


def _fake(target: str, violates: bool = False) -> harness.AuditCase:
    res = audit.AuditResult(2.0 if violates else 0.5, 0, "D>D'", 0.5, 0.1, 4, harness.ALPHA)
    return harness.AuditCase(target, "a fake case", lambda m, n, s: harness.Measurement(
        res, 1.0, 0.0), 10, ("bug",))


def test_merge() -> None:
    base = {n: _fake(n) for n in ("a", "b", "c")}
    merged = audits.merge(base, {"a": {"x": _fake("x"), "y": _fake("y")}, "c": {"z": _fake("z")}})
    assert list(merged) == ["a", "x", "y", "b", "c", "z"]
    with pytest.raises(ValueError, match="'b' registered twice"):
        audits.merge(base, {"a": {"b": _fake("b")}})
    with pytest.raises(ValueError, match="'nope' to insert after is not registered"):
        audits.merge(base, {"nope": {"x": _fake("x")}})


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
    monkeypatch.setitem(audits.CASES, "fake", _fake("fake", violates=True))
    assert cli.main(["audit", "--targets", "fake"]) == 1
    out = capsys.readouterr().out
    assert "fake" in out and harness.VIOLATION in out


def test_cli_runs_the_cases_of_every_layer(capsys) -> None:
    # a mechanism case and an agent's, by name, in the order asked for
    assert cli.main(["audit", "--targets", "adap-tt,randomized-response", "--format",
                     "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["target"], r["verdict"]) for r in rows] == [
        ("adap-tt", harness.PASS), ("adap-tt", harness.CAUGHT),
        ("randomized-response", harness.PASS), ("randomized-response", harness.CAUGHT)]


def test_isolated_targets_give_the_same_records() -> None:
    """Each target in a fresh worker process (the default of a full-size run of several
    targets, which then peaks at its largest target's memory): the records of one process."""
    targets = ["randomized-response", "adap-tt"]
    alone = [r.as_dict() for r in audits.run(targets, isolate=False)]
    isolated = [r.as_dict() for r in audits.run(targets, isolate=True)]
    for row in alone + isolated:
        del row["seconds"]
    assert isolated == alone and len(alone) == 4


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="targets"):
        audits.run(["no-such-target"])
    with pytest.raises(ValueError, match="size"):
        audits.run(["dp-se"], size="huge")
