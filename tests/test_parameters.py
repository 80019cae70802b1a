"""Common checks over every registered agent's parameter declaration (scikit-learn's
``check_estimator`` is the model): the declaration matches the constructor, documents every
parameter, and is what construction, ``agents.make`` and the command line enforce.

The generated bad-input table lives in ``tests/test_bad_input.py`` (wrong families, conflicting
problem quantities, and a rejected value of every declared parameter of every agent).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from typing import Any

import pytest

import privenv  # noqa: F401
from privenv import agents
from privenv.agents import Agent
from privenv.cli import main
from privenv.envs import ENV_IDS, env_family
from privenv.parameters import (
    SAMPLER,
    Integer,
    Param,
    Real,
    constructor_defaults,
    describe,
    parameter_docs,
)
from privenv.problems.base import FAMILIES

NAMES = agents.names()


@pytest.mark.parametrize("name", NAMES)
def test_the_declaration_is_the_constructor(name):
    """Every constructor parameter but ``n_runs`` is declared, and nothing else is."""
    cls = agents.agent_class(name)
    signature = [p for p in inspect.signature(cls.__init__).parameters
                 if p not in ("self", "n_runs")]
    assert sorted(cls.parameters) == sorted(signature)
    assert cls.families and set(cls.families) <= set(FAMILIES)
    for p in cls.parameters.values():
        assert isinstance(p, Param)


def first_statement(cls: type) -> str:
    """The first statement (after the docstring) of the constructor ``cls`` runs, as source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    body = [s for s in tree.body[0].body  # type: ignore[attr-defined]
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return ast.unparse(body[0])


@pytest.mark.parametrize("name", NAMES)
def test_one_constructor_order(name):
    """Every agent's constructor checks and stores its parameters first thing,
    ``self.set_params(locals())`` (``locals()`` is then exactly the arguments), and only then
    calls its base constructor and derives: docs/design/contributing.md, "Declared once"."""
    assert first_statement(agents.agent_class(name)) == "self.set_params(locals())"


@pytest.mark.parametrize("name", NAMES)
def test_every_parameter_is_documented(name):
    cls = agents.agent_class(name)
    docs = parameter_docs(cls)
    assert [p for p in cls.parameters if not docs.get(p)] == []


@pytest.mark.parametrize("name", NAMES)
def test_an_agent_builds_on_every_env_of_its_families(name):
    """With only the env: every problem quantity is filled from the declared keys, and each
    declared problem quantity equals the env's value."""
    cls = agents.agent_class(name)
    for env_id in (e for e in ENV_IDS if env_family(e) in cls.families):
        kwargs = agents.env_kwargs_for(name)
        if name == "super-agent":  # central DP needs bounded labels
            kwargs["noise"] = "bounded"
        import gymnasium as gym

        env = gym.make(env_id, **kwargs)
        agent = agents.make(name, env, 1)
        info = agents.public_info_of(env)
        for key, p in cls.parameters.items():
            if p.problem is not None and p.problem in info:
                assert getattr(agent, p.attribute or key) == info[p.problem], key
        env.close()


_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
#: a default written in an ``Args:`` entry: ````"x"```` (default) or "default 0.01", "default
#: 10⁻⁶", "default 1:" (a number not followed by an operator: "default 1/T²" is a rule)
_STATED = re.compile(r"``(?P<choice>\"[^\"]*\"|'[^']*')`` \(default"
                     r"|[Dd]efault:? (?P<number>10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\d+(?:\.\d+)?)"
                     r"(?![\w/·⁰¹²³⁴⁵⁶⁷⁸⁹]|\.\d)")


def stated_defaults(doc: str) -> list[Any]:
    """The literal defaults an ``Args:`` entry states (usually none)."""
    out: list[Any] = []
    for m in _STATED.finditer(doc):
        if m["choice"]:
            out.append(ast.literal_eval(m["choice"]))
        elif m["number"].startswith("10⁻"):
            out.append(10.0 ** int(m["number"][2:].translate(_SUPERSCRIPT)))
        else:
            out.append(float(m["number"]))
    return out


def misstated_defaults(cls: type) -> dict[str, tuple[list[Any], Any]]:
    """Parameters whose ``Args:`` entry states a default other than the signature's."""
    defaults = constructor_defaults(cls)
    wrong = {}
    for param, doc in parameter_docs(cls).items():
        default = defaults.get(param, inspect.Parameter.empty)
        if default is None or default is inspect.Parameter.empty:
            continue
        stated = stated_defaults(doc)
        if any(s != pytest.approx(default) if isinstance(s, float) else s != default
               for s in stated):
            wrong[param] = (stated, default)
    return wrong


@pytest.mark.parametrize("name", NAMES)
def test_a_default_the_docs_state_is_the_signature_default(name):
    """A parameter's default is written once, in the signature; an ``Args:`` entry that says it
    again (``"float"`` (default), "default 10⁻⁶") must say the same (a default of ``None`` is
    a rule the entry describes, e.g. "default 1/T")."""
    assert misstated_defaults(agents.agent_class(name)) == {}


def test_stated_defaults_are_read():
    assert stated_defaults('``"float"`` (default) or ``"exact"``') == ["float"]
    assert stated_defaults("the local δ (default 10⁻⁶, our choice)") == [1e-6]
    assert stated_defaults("(default 0.01).") == [0.01]
    assert stated_defaults("(default 1: every round)") == [1.0]
    assert stated_defaults("(default 1/T², Theorem 4.7)") == []
    assert stated_defaults("(default 1.)") == [1.0]

    class Drifted(Agent):  # the mutation: a default changed in the signature, not the docs
        """A toy.

        Args:
            rate: the rate (default 0.5).
            sampler: ``"float"`` (default) or ``"exact"``.
        """

        families = ("huber",)
        parameters = {"rate": Param(Real(0.0, 1.0)), "sampler": Param(SAMPLER)}

        def __init__(self, rate: float = 0.25, sampler: str = "exact", n_runs: int = 1) -> None:
            self.set_params(locals())
            super().__init__(n_runs)

    assert misstated_defaults(Drifted) == {"rate": ([0.5], 0.25), "sampler": (["float"], "exact")}


def test_problem_quantities_come_by_declared_key_never_by_name():
    """HuberBandit's contamination ``alpha`` is not TTUCB's bonus exponent ``alpha``: TTUCB does
    not play that family at all, and PRAE-R takes ``alpha`` because it declares it."""
    with pytest.raises(ValueError, match="best-arm identification"):
        agents.make("ttucb", "HuberBandit-v0")
    assert agents.make("prae-r", "HuberBandit-v0").alpha == 0.05
    assert agents.make("prae-r", "HuberBandit-v0", alpha=0.1).alpha == 0.1  # an assumption


def test_set_params_refuses_an_undeclared_parameter():
    """The mutation check of the declaration test: a class that forgets to declare a parameter
    fails when built, so the declaration cannot silently drift from the constructor."""

    class Forgetful(Agent):
        families = ("huber",)
        parameters = {"K": Param(Integer(low=2), problem="K")}

        def __init__(self, K: int, rate: float = 0.5, n_runs: int = 1) -> None:
            super().__init__(n_runs)
            self.set_params(locals())

        def reset_state(self):
            pass

        def act_batch(self, observations):
            return observations

        def observe_batch(self, actions, rewards, observations):
            pass

    with pytest.raises(TypeError, match="does not declare its parameter 'rate'"):
        Forgetful(K=3)
    # and the order test flags its constructor, which calls the base constructor first
    assert first_statement(Forgetful) == "super().__init__(n_runs)"


def test_a_base_constructor_resolves_and_the_subclass_keeps_it():
    """PRAE-R's base resolves δ = 1/T; the subclass's own check does not reset it."""
    agent = agents.agent_class("prae-r")(K=3, horizon=1000)
    assert agent.delta == pytest.approx(1e-3)
    assert agents.agent_class("dp-se")(K=3, horizon=1000).beta == pytest.approx(1e-3)


def test_a_constraint_rejects_infinity_and_names_the_range():
    with pytest.raises(ValueError, match=r"^x must be in \(0, inf\), got inf$"):
        Real(0.0, low_open=True).check("x", float("inf"))
    assert Real(0.0, 1.0, high_open=True).describe() == "real in [0, 1)"


def test_the_catalogue_is_the_declaration(capsys):
    """``privenv agents NAME`` prints the declared parameters, allowed values and defaults;
    the JSON catalogue lists each agent's family envs."""
    assert main(["agents", "prae-c"]) == 0
    out = capsys.readouterr().out
    assert "alpha" in out and "real in [0, 0.133)" in out and "the env's alpha" in out
    rows = describe(agents.agent_class("prae-c"))
    assert [r["name"] for r in rows][:3] == ["K", "horizon", "epsilon"]  # constructor order
    assert main(["agents", "--format", "json"]) == 0
    import json

    cat = {a["name"]: a for a in json.loads(capsys.readouterr().out)}
    assert cat["ttucb"]["envs"] == ["BestArmIdentification-v0"]
    assert cat["dp-se"]["envs"] == ["HuberBandit-v0", "BestArmIdentification-v0",
                                    "BernoulliBandit-v0"]
    assert cat["uniform"]["envs"] == ["HuberBandit-v0", "LinearContextualBandit-v0",
                                      "FederatedLinearBandit-v0", "BernoulliBandit-v0"]
    assert main(["agents", "daf-wrapper"]) == 0  # a parameter that takes effect with one rule
    assert "only with sampling='top-two'" in capsys.readouterr().out
    assert main(["agents", "fed-linucb"]) == 0
    assert "not with protocol='none'" in capsys.readouterr().out
    assert main(["agents", "nope"]) == 2
