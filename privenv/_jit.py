"""Compiled kernels: how privenv writes numba code.

The scalar-state algorithms (the multi-armed and best-arm agents, their problems and the local-DP
reward randomizers) are written once, as compiled *kernels*: plain functions over one run's state,
decorated with :func:`jit`. The Gymnasium path calls them one run and one step at a time; the fast
path (:mod:`privenv.agents.kernel`) loops each run to its own end inside compiled code.

* :func:`jit` is ``numba.njit`` with ``cache=True`` (compiled once, then loaded from disk),
  ``error_model="numpy"`` (``x / 0`` gives ``inf`` or ``nan`` as in numpy, never an exception) and
  privenv's cache directory (below).
* :func:`generic` makes a *generic kernel function*: a stub whose implementation is chosen, at
  compile time, by the type of its first argument (a ``NamedTuple`` class). A family registers
  its implementation with ``stub.register(StateClass)``. This is how a driver written once
  (``privenv.agents.kernel.run_until``) calls each agent's own ``act`` and ``observe``, and how the
  Top Two meta-algorithm calls each instance's ingredients, without a function-pointer argument
  (numba cannot cache functions that take other functions as arguments).

**Inlining.** A kernel that passes a state ``NamedTuple`` to another costs nothing only if the
callee is inlined: a real call flattens every array of the state into machine arguments (about
150 for the Top Two state). LLVM inlines small callees on its own and stops doing so when a callee
grows, e.g. by a rarely taken branch (an exact sampler at a phase end): AdaP-TT's step went from
53 to 254 ns that way. So the functions that run at every step of a run — an agent's
``act``/``observe`` and the ingredients they call each step — are ``jit(inline="always")``
(inlined in numba IR, whatever their size); what runs at phase or epoch ends stays a call.

**Cache directory.** numba checks a cached function against its own source file only, not against
the kernels it calls in other files. So that an edited kernel never runs stale machine code, every
kernel lives in one of :data:`KERNEL_FILES`, and the cache directory is keyed by privenv's version
and a hash of all of them: ``$NUMBA_CACHE_DIR/privenv-<version>-<hash>`` (``$NUMBA_CACHE_DIR``
defaults to ``~/.cache/privenv``). A process compiles a kernel the first time it is needed on a
machine (seconds); later processes load it (milliseconds). ``NUMBA_DISABLE_JIT=1`` runs every
kernel as plain Python (slow; for debugging), generic functions included.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
from numba.extending import overload

from privenv import __version__

#: every file that defines a kernel (relative to the package root ``privenv/``; ``agents/`` and
#: ``wrappers/`` are the packages ``privenv.agents`` and ``privenv.wrappers``).
#: ``tests/test_kernels.py`` checks that no other file uses :func:`jit`.
KERNEL_FILES: tuple[str, ...] = (
    "_jit.py",
    "seeding.py",
    "_pcg64.py",
    "privacy/mechanisms.py",
    "problems/base.py",
    "problems/huber.py",
    "problems/bai.py",
    "agents/kernel.py",
    "agents/mab.py",
    "agents/huber.py",
    "agents/dp_se.py",
    "agents/top_two.py",
    "agents/adap_tt.py",
    "wrappers/ldp.py",
    "privacy/exact.py",
    "privacy/preimage.py",
)

_ROOT = Path(__file__).resolve().parent


def _kernel_path(name: str) -> Path:
    """The file of a kernel module, in a wheel (``privenv/agents/…``) or in the source tree
    (``agents/…`` beside ``privenv/``, the editable install)."""
    inside = _ROOT / name
    return inside if inside.exists() else _ROOT.parent / name


def _sources_hash() -> str:
    digest = hashlib.sha256()
    for name in KERNEL_FILES:
        path = _kernel_path(name)
        digest.update(name.encode())
        digest.update(path.read_bytes() if path.exists() else b"(missing)")
    return digest.hexdigest()[:16]


def cache_dir() -> str:
    """The directory of privenv's compiled kernels (see the module docstring)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "privenv")
    return os.path.join(base, f"privenv-{__version__}-{_CACHE_KEY}")


_CACHE_KEY = _sources_hash()


def jit(fn: Callable | None = None, *, allocates: bool = False, **options: Any) -> Any:
    """Compile ``fn`` as a privenv kernel (``numba.njit``, cached in :func:`cache_dir`).

    A kernel works on arrays it is given and allocates nothing, so it is compiled without
    numba's reference counting (``_nrt=False``): a call from one kernel to another then costs
    what the arithmetic costs. (With reference counting, every call that passes a state
    ``NamedTuple`` increments and decrements each of its arrays' counts, atomically: 50–80 ns
    per call, most of a step's cost.) ``allocates=True`` turns reference counting on for the
    few kernels that create arrays (they are called outside the step loops).

    ``options`` override the defaults (``error_model="numpy"``, ``nogil=True``).
    """
    if fn is None:
        return lambda f: jit(f, allocates=allocates, **options)
    if allocates:
        options.setdefault("_nrt", True)
    saved = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = cache_dir()  # read when the dispatcher sets up its cache
    try:
        return numba.njit(**{"cache": True, "error_model": "numpy", "nogil": True,
                             "_nrt": False, **options})(fn)
    finally:
        numba.config.CACHE_DIR = saved


def _forwarder(impl: Any, n: int) -> Callable:
    """``lambda a0, …, a{n−1}: impl(a0, …)``: numba inlines a function of fixed arity only."""
    names = ", ".join(f"a{i}" for i in range(n))
    scope: dict[str, Any] = {"impl": impl}
    exec(f"def call({names}):\n    return impl({names})\n", scope)  # noqa: S102
    return scope["call"]


def generic(stub: Callable) -> Any:
    """Turn ``stub`` into a generic kernel function dispatched on its first argument's type.

    ``@stub.register(Cls)`` on a :func:`jit` function makes it the implementation for first
    arguments that are ``Cls`` instances (``Cls`` a ``NamedTuple`` class). Called from Python (or
    with ``NUMBA_DISABLE_JIT=1``) the stub dispatches on ``type(first)`` itself.

    In a kernel, the call is inlined (numba IR, ``inline="always"``): a call that passed a state
    ``NamedTuple`` would flatten every field of every array into machine arguments (about 150
    for the Top Two state), which cost most of a step when LLVM did not inline a large callee.
    """
    impls: dict[type, Any] = {}

    def typer(*args: Any) -> Any:
        impl = impls.get(getattr(args[0], "instance_class", None))
        if impl is None:
            return None

        return _forwarder(impl, len(args))

    def dispatch(first: Any, *rest: Any) -> Any:
        try:
            impl = impls[type(first)]
        except KeyError:
            raise TypeError(f"{stub.__name__} has no implementation for "
                            f"{type(first).__name__}") from None
        return impl(first, *rest)

    def register(cls: type) -> Callable[[Any], Any]:
        def decorate(impl: Any) -> Any:
            impls[cls] = impl
            return impl
        return decorate

    dispatch.__name__ = stub.__name__
    dispatch.__qualname__ = stub.__qualname__
    dispatch.__doc__ = stub.__doc__
    dispatch.register = register  # type: ignore[attr-defined]
    dispatch.implementations = impls  # type: ignore[attr-defined]
    # what numba resolves in a kernel's globals
    overload(dispatch, strict=False, inline="always", jit_options={"_nrt": False})(typer)
    return dispatch
