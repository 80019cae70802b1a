"""Parameter declarations: each agent declares its parameters once.

scikit-learn's ``_parameter_constraints`` is the model. A class lists, for every constructor
parameter, what values are valid (a :class:`Constraint`) and whether the value is a quantity of
the problem it plays (a :class:`Param` with ``problem=`` or ``assumes=``). Everything else is
derived from the declaration:

* construction: :meth:`privenv.agents.Agent.set_params` checks every declared parameter with its
  constraint and stores it;
* :func:`privenv.agents.make` fills the problem quantities from the env's public description
  (:meth:`~privenv.envs.base.ProblemEnv.public_info`) by the declared keys, never by matching
  names, and refuses an env of another family;
* the command line (``privenv run --set``), sweep configs and reproductions check parameter
  names against the declaration, and ``privenv agents`` prints it;
* the bad-input tests draw, for every parameter of every agent, a value its constraint rejects.

The parameter's default is its constructor default (one place: the signature), its documentation
the ``Args:`` entry of the class docstring; ``tests/test_parameters.py`` checks them against the
declaration for every agent (docs/design/contributing.md, "Declared once"). The constructor
checks and stores its parameters first thing (``self.set_params(locals())``), then calls its
base constructor and derives.

Example::

    class EpsilonGreedy(Agent):
        families = ("huber",)
        parameters = {
            "K": Param(Integer(low=2), problem="K"),
            "explore": Param(Real(0.0, 1.0)),
        }

        def __init__(self, K: int, explore: float = 0.1, n_runs: int = 1) -> None:
            self.set_params(locals())
            super().__init__(n_runs)
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from typing import Any

from privenv._validation import check_bool, check_choice, check_int, check_range, check_real


class Constraint:
    """What values a parameter may take. Subclasses write :meth:`check` (the value, converted,
    or ``ValueError`` naming the parameter and the allowed range), :meth:`describe` and
    :meth:`invalid` (values the constraint rejects: the bad-input tests use them)."""

    #: whether ``None`` is allowed (it then means "derive it", as the class docstring says)
    none: bool = False

    def check(self, name: str, value: Any) -> Any:
        if value is None and self.none:
            return None
        return self._check(name, value)

    def _check(self, name: str, value: Any) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        """The allowed values, in words (``privenv agents --params`` prints it)."""
        text = self._describe()
        return f"{text} or None" if self.none else text

    def _describe(self) -> str:
        raise NotImplementedError

    def invalid(self) -> list[Any]:
        """Values this constraint rejects."""
        return ["not-a-value"]


@dataclass(frozen=True)
class Real(Constraint):
    """A finite real number in an interval (:func:`privenv._validation.check_real`)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    none: bool = False

    def _check(self, name: str, value: Any) -> float:
        # an infinite bound is never a value: every parameter is finite
        return check_real(name, value, low=self.low, high=self.high,
                          low_open=self.low_open or math.isinf(self.low),
                          high_open=self.high_open or math.isinf(self.high))

    def _describe(self) -> str:
        left = "(" if self.low_open or math.isinf(self.low) else "["
        right = ")" if self.high_open or math.isinf(self.high) else "]"
        return f"real in {left}{self.low:g}, {self.high:g}{right}"

    def invalid(self) -> list[Any]:
        out: list[Any] = [math.nan, "abc", math.inf if math.isinf(self.high) else -math.inf]
        if math.isfinite(self.low):
            out.append(self.low if self.low_open else self.low - max(1.0, abs(self.low)))
        if math.isfinite(self.high):
            out.append(self.high if self.high_open else self.high + max(1.0, abs(self.high)))
        return out


#: ε > 0 (a privacy budget)
EPSILON = Real(0.0, math.inf, low_open=True, high_open=True)
#: δ ∈ (0, 1) (a failure probability or approximate-DP δ)
DELTA = Real(0.0, 1.0, low_open=True, high_open=True)
#: a real > 0
POSITIVE = Real(0.0, math.inf, low_open=True, high_open=True)
#: a real ≥ 0
NONNEGATIVE = Real(0.0, math.inf, high_open=True)


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer in [low, high] (:func:`privenv._validation.check_int`; ``high=None``: up to
    the int64 range)."""

    low: int = 1
    high: int | None = None
    none: bool = False

    def _check(self, name: str, value: Any) -> int:
        return check_int(name, value, low=self.low, high=self.high)

    def _describe(self) -> str:
        return f"integer in [{self.low}, {'2**63 - 1' if self.high is None else self.high}]"

    def invalid(self) -> list[Any]:
        out: list[Any] = [self.low - 1, 2.5, True]
        if self.high is not None:
            out.append(self.high + 1)
        return out


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of values (:func:`privenv._validation.check_choice`)."""

    choices: tuple[Any, ...] = ()
    none: bool = False

    def _check(self, name: str, value: Any) -> Any:
        return check_choice(name, value, self.choices)

    def _describe(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def invalid(self) -> list[Any]:
        return ["no-such-choice", 3]


#: how a private agent or mechanism draws its noise, binary64 transforms (``"float"``) or the
#: exact discrete samplers (``"exact"``, :mod:`privenv.privacy.exact`). The agents declare it an
#: assumption about the env's ``"sampler"`` (``assumes="sampler"``): an env of real data (a data
#: set, ``contexts="dataset"``) describes ``"exact"``, so :func:`privenv.agents.make` defaults to
#: the exact sampler there; simulated problems describe none (the agents' default, ``"float"``)
SAMPLER = Options(("float", "exact"))


@dataclass(frozen=True)
class Flag(Constraint):
    """A bool (Python or numpy)."""

    none: bool = False

    def _check(self, name: str, value: Any) -> bool:
        return check_bool(name, value)

    def _describe(self) -> str:
        return "bool"

    def invalid(self) -> list[Any]:
        return [1, "yes"]


@dataclass(frozen=True)
class RealRange(Constraint):
    """A pair (lo, hi) of finite reals with lo < hi, returned as a tuple of floats."""

    none: bool = False

    def _check(self, name: str, value: Any) -> tuple[float, float]:
        return check_range(name, value)

    def _describe(self) -> str:
        return "pair (lo, hi) of reals, lo < hi"

    def invalid(self) -> list[Any]:
        return [(1.0, 0.0), (0.0, math.inf), 3.0]


@dataclass(frozen=True)
class Param:
    """One declared parameter.

    Args:
        constraint: the values it may take.
        problem: the key of the env's public description this parameter *is* (e.g. ``"K"``):
            :func:`privenv.agents.make` takes it from the env, and refuses a different value
            given explicitly — an agent for 7 arms cannot play a 5-armed env.
        assumes: the key of the env's public description this parameter is an *assumption*
            about (e.g. a moment bound): it defaults to the env's value and may be set to another
            (a mis-specified agent is a legitimate experiment).
        attribute: the attribute the checked value is stored as (default: the parameter's name).
        only_with: ``(other, values)``: the parameter takes effect only while parameter
            ``other`` has one of ``values`` (e.g. a privacy level, only with a private protocol);
            :func:`privenv.agents.make` refuses it, given explicitly, with any other value of
            ``other``, rather than let it be silently ignored.
    """

    constraint: Constraint
    problem: str | None = None
    assumes: str | None = None
    attribute: str | None = None
    only_with: tuple[str, tuple[Any, ...]] | None = None

    def __post_init__(self) -> None:
        if self.problem is not None and self.assumes is not None:
            raise ValueError("a parameter is either the problem's (problem=) or an assumption "
                             "about it (assumes=), not both")

    @property
    def env_key(self) -> str | None:
        """The key of the env's public description that supplies this parameter, if any."""
        return self.problem or self.assumes


def constructor_defaults(cls: type) -> dict[str, Any]:
    """Each declared parameter's default (``inspect.Parameter.empty`` if it has none), read from
    the constructor's signature."""
    signature = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
    declared = getattr(cls, "parameters", {})
    return {name: p.default for name, p in signature.items() if name in declared}


_ARG = re.compile(r"^    (\w+(?:, \w+)*):\s*(.*)$")  # "name: text" or "a, b, c: text"


def parameter_docs(cls: type) -> dict[str, str]:
    """The ``Args:`` entries of ``cls``'s docstrings (its own, then its bases'), name → text."""
    docs: dict[str, str] = {}
    for klass in cls.__mro__:
        doc = inspect.getdoc(klass) or ""
        lines = doc.splitlines()
        try:
            start = lines.index("Args:")
        except ValueError:
            continue
        current: list[str] = []
        for line in lines[start + 1:]:
            if line and not line.startswith(" "):
                break
            m = _ARG.match(line)
            if m:
                current = [n for n in m.group(1).split(", ") if n not in docs]
                for n in current:
                    docs[n] = m.group(2).strip()
            elif current and line.strip():
                for n in current:
                    docs[n] += " " + line.strip()
    return docs


def effective_with(p: Param, declared: dict[str, Param]) -> tuple[list[Any], list[Any]]:
    """For ``p`` declared ``only_with=(other, values)``: the values of ``other`` (among those it
    allows) with which ``p`` takes effect, and those with which it does not."""
    assert p.only_with is not None
    other, values = p.only_with
    choices = getattr(declared[other].constraint, "choices", values)
    return [v for v in values if v in choices], [c for c in choices if c not in values]


def _only_with_text(p: Param, declared: dict[str, Param]) -> str:
    """When ``p`` takes effect, briefly: ``; only with sampling='top-two'``, ``; not with
    protocol='none'`` (empty if always)."""
    if p.only_with is None:
        return ""
    other = p.only_with[0]
    on, off = effective_with(p, declared)
    if len(off) == 1 and len(on) > 1:
        return f"; not with {other}={off[0]!r}"
    return f"; only with {other}={on[0]!r}" if len(on) == 1 else f"; only with {other} in {on}"


def describe(cls: type) -> list[dict[str, Any]]:
    """One row per declared parameter of ``cls``: name, allowed values, default, the env key it
    comes from (and how), documentation."""
    defaults = constructor_defaults(cls)  # (in the constructor's order)
    declared = getattr(cls, "parameters", {})
    docs = parameter_docs(cls)
    rows = []
    for name, default in defaults.items():
        p = declared[name]
        rows.append({
            "name": name,
            "allowed": p.constraint.describe() + _only_with_text(p, declared),
            "default": None if default is inspect.Parameter.empty else default,
            "required": default is inspect.Parameter.empty and p.env_key is None,
            "from_env": ({"key": p.env_key, "kind": "problem" if p.problem else "assumption"}
                         if p.env_key else None),
            "doc": docs.get(name, ""),
        })
    return rows
