"""Common checks over every registered agent's parameter declaration (scikit-learn's
``check_estimator`` is the model): the declaration matches the constructor, documents every
parameter, and is what construction, ``agents.make`` and the command line enforce.

The generated bad-input table lives in ``tests/test_bad_input.py`` (wrong families, conflicting
problem quantities, and a rejected value of every declared parameter of every agent).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

import privenv  # noqa: F401
from privenv import agents
from privenv.agents import Agent
from privenv.cli import main
from privenv.envs import ENV_IDS, env_family
from privenv.parameters import Integer, Param, Real, describe, parameter_docs
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
    assert main(["agents", "nope"]) == 2
