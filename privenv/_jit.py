"""Compiled kernels: how privenv writes numba code.

The scalar-state algorithms (the multi-armed and best-arm agents, their problems and the local-DP
reward randomizers) are written once, as compiled *kernels*: plain functions over one run's state,
decorated with :func:`jit`. The Gymnasium path calls them one run and one step at a time; the fast
path (:mod:`privenv.driver`) loops each run to its own end inside compiled code.

* :func:`jit` is ``numba.njit`` with ``error_model="numpy"`` (``x / 0`` gives ``inf`` or ``nan``
  as in numpy, never an exception), compiled once and then loaded from privenv's cache directory
  (below).
* :func:`generic` makes a *generic kernel function*: a stub whose implementation is chosen, at
  compile time, by the type of its first argument (a ``NamedTuple`` class). A family registers
  its implementation with ``stub.register(StateClass)``. This is how a driver written once
  (``privenv.driver.run_until``) calls each agent's own ``act`` and ``observe``, how the Top Two
  meta-algorithm calls each instance's ingredients, and how a choice fixed for a whole run (a
  randomizer's mechanism, a float or an exact sampler, a reward law) is made by a type rather
  than a branch: a driver compiled for one choice contains no code of the others, so a run
  compiles only what it uses. (numba cannot cache functions that take other functions as
  arguments, so there are no function-pointer arguments.)

**Inlining.** A kernel that passes a state ``NamedTuple`` to another costs nothing only if the
callee is inlined: a real call flattens every array of the state into machine arguments (about
150 for the Top Two state), which cost most of a step when LLVM did not inline a large callee
(AdaP-TT's step went from 53 to 254 ns that way). So the functions that run at *every step* of a
run — an agent's ``act``/``observe`` and the ingredients they call each step — are
``jit(inline="always")`` (inlined in numba IR, whatever their size). What runs at phase or epoch
ends stays a call (``jit``): it is compiled once, shared by every driver that calls it, and
its call costs nothing next to the step loop.

**Cache.** numba checks a cached function against its own source file only, not against the
kernels it calls in other files. So that an edited kernel never runs stale machine code, every
kernel lives in one of :data:`KERNEL_FILES`, and the cache directory is keyed by privenv's version
and a hash of all of them: ``$NUMBA_CACHE_DIR/privenv-<version>-<hash>`` (``$NUMBA_CACHE_DIR``
defaults to ``~/.cache/privenv``); numba's global cache setting is left alone. A kernel compiled
for a type defined outside those files (e.g. an agent a user writes in a notebook, or a test's
toy agent) is compiled in the process and never cached, since its source is not in the hash. A
process compiles a kernel the first time it is needed on a machine (seconds); later processes
load it (milliseconds). An unwritable cache directory is a warning, not an error: kernels are
then compiled in every process. ``NUMBA_DISABLE_JIT=1`` runs every kernel as plain Python (slow;
for debugging), generic functions included.

**Compile time, visibly.** Compiling is the one slow part of a first run (tens of seconds for an
agent family, once per machine), so it is announced, on stderr, when it starts — ``privenv:
compiling kernels (first run only) ...`` — and timed apart from the runs' own loop:
:func:`kernel_seconds` counts, per thread, the seconds spent compiling kernels or loading them
from the cache (numba's ``numba:compile`` events at the outermost level, and the cache's loads);
:func:`privenv.simulation.simulate` records its share in ``RunResults.compile_s``, says how long
it took (:func:`report_compile`), and reports the loop's time per run-step without it.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

import numba
import numpy as np
from numba.core import event, ir_utils, types
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    _CacheLocator,
    _SourceFileBackedLocatorMixin,
)
from numba.core.dispatcher import Dispatcher

# (private in numba, so absent from what its package declares)
from numba.core.extending import _overload_default_jit_options  # type: ignore[attr-defined]
from numba.core.typing.templates import infer, infer_global, make_overload_template

from privenv import __version__

#: A kernel's annotation of a machine integer whose Python type varies. numba compiles
#: every integer of a kernel as a 64-bit one, but the same code run as plain Python
#: (``NUMBA_DISABLE_JIT=1``, a test's call of ``fn.py_func``) holds an ``int`` or a numpy
#: integer (``np.int64(...)``, an element of an array), which the type checker tells apart. A
#: kernel that mixes them annotates such a variable, argument or result ``Int``. (Decorated
#: kernels are untyped to the checker: :func:`jit` returns ``Any``.)
Int: TypeAlias = int | np.integer[Any]

#: every file that defines a kernel, or data a kernel compiles in (relative to the package root
#: ``privenv/``; ``agents/`` and ``wrappers/`` are the packages ``privenv.agents`` and
#: ``privenv.wrappers``). ``tests/test_kernels.py`` checks that no other file uses :func:`jit`.
KERNEL_FILES: tuple[str, ...] = (
    "_jit.py",
    "seeding.py",
    "_pcg64.py",
    "_ziggurat.py",
    "driver.py",
    "privacy/mechanisms.py",
    "privacy/local.py",
    "privacy/samplers.py",
    "problems/base.py",
    "problems/huber.py",
    "privacy/continual.py",
    "theory/regret.py",
    "agents/kernel.py",
    "agents/mab.py",
    "agents/bernoulli.py",
    "agents/huber.py",
    "agents/dp_se.py",
    "agents/top_two.py",
    "agents/adap_tt.py",
    "agents/dp_regret.py",
    "agents/dp_ucb.py",
    "agents/ldp_regret.py",
    "agents/dp_top_two.py",
    "wrappers/ldp.py",
    "privacy/constant_work.py",
    "privacy/variable_work.py",
    "privacy/draws.py",
    "privacy/releases.py",
    "privacy/side_channel.py",
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


_CACHE_KEY = _sources_hash()
_HASHED = frozenset(_kernel_path(name).resolve() for name in KERNEL_FILES)


def cache_dir() -> str:
    """The directory of privenv's compiled kernels (see the module docstring)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "privenv")
    return os.path.join(base, f"privenv-{__version__}-{_CACHE_KEY}")


class _Locator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """numba's cache locator for privenv's kernels: :func:`cache_dir`, then numba's usual
    subdirectory per source directory. The directory is made when a kernel is first saved, not
    when it is decorated."""

    def __init__(self, py_func: Callable, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self) -> str:
        return self._cache_path

    @classmethod
    def from_function(cls, py_func: Callable, py_file: str) -> _Locator | None:
        return cls(py_func, py_file) if os.path.exists(py_file) else None


class _CacheImpl(CompileResultCacheImpl):
    _locator_classes = [_Locator]


@functools.cache
def _defined_in_kernel_files(cls: type) -> bool:
    try:
        return Path(inspect.getfile(cls)).resolve() in _HASHED
    except (TypeError, OSError):
        return False


def _foreign(typ: Any) -> bool:
    """Whether a numba type involves a ``NamedTuple`` class defined outside
    :data:`KERNEL_FILES` (whose source the cache key does not cover)."""
    if isinstance(typ, (types.NamedTuple, types.NamedUniTuple)):
        return not _defined_in_kernel_files(typ.instance_class) or any(
            _foreign(t) for t in typ.types)
    if isinstance(typ, (types.Tuple, types.UniTuple)):  # numba's other tuple types
        return any(_foreign(t) for t in typ.types)
    return False


class _KernelCache(FunctionCache):
    """numba's per-function cache, in :func:`cache_dir`; skips signatures with types defined
    outside :data:`KERNEL_FILES`, and turns itself off (with a warning) if the directory cannot
    be written."""

    _impl_class = _CacheImpl

    @staticmethod
    def _args(sig: Any) -> tuple:
        return tuple(sig.args) if hasattr(sig, "args") else tuple(sig)

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        if any(_foreign(t) for t in self._args(sig)):
            return None
        if _CLOCK.depth:  # (inside a compile, which is timed as a whole)
            return super().load_overload(sig, target_context)
        start = time.perf_counter()
        try:
            return super().load_overload(sig, target_context)
        finally:
            _CLOCK.loaded += time.perf_counter() - start

    def save_overload(self, sig: Any, data: Any) -> None:
        if any(_foreign(t) for t in self._args(sig)):
            return
        try:
            super().save_overload(sig, data)
        except OSError as exc:
            self.disable()
            warnings.warn(f"privenv cannot write its kernel cache ({exc}); kernels will be "
                          "compiled in every process (set NUMBA_CACHE_DIR to a writable "
                          "directory)", RuntimeWarning, stacklevel=2)


class _Clock(threading.local):
    """This thread's seconds compiling kernels and loading them from the cache."""

    compiled = 0.0  # outermost compiles (numba's "numba:compile" events)
    loaded = 0.0  # loads from the cache outside any compile
    depth = 0  # nesting of compiles (a kernel compiles those it calls)
    started = 0.0
    announced = False  # the announcement of the compiles since the last report


_CLOCK = _Clock()


def _say(line: str) -> None:
    """``line`` on stderr in one write: the workers of a sweep compile at the same time, and
    ``print`` writes the text and its newline apart, so their lines ran into each other."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class _CompileListener(event.Listener):
    """Times the outermost compiles, and announces the first one (stderr)."""

    def on_start(self, ev: Any) -> None:
        if _CLOCK.depth == 0:
            if not _CLOCK.announced:
                _CLOCK.announced = True
                _say("privenv: compiling kernels (first run only; later runs load them from "
                     "the cache) ...")
            _CLOCK.started = time.perf_counter()
        _CLOCK.depth += 1

    def on_end(self, ev: Any) -> None:
        _CLOCK.depth -= 1
        if _CLOCK.depth == 0:
            _CLOCK.compiled += time.perf_counter() - _CLOCK.started


event.register("numba:compile", _CompileListener())


def kernel_seconds() -> tuple[float, float]:
    """``(compiled, loaded)``: the seconds this thread has spent so far compiling kernels, and
    loading compiled kernels from the cache (a process's first load also starts LLVM). A run's
    share is the difference of two readings."""
    return _CLOCK.compiled, _CLOCK.loaded


def report_compile(compiled: float) -> None:
    """Say on stderr how long the compiles just announced took (``compiled`` seconds); the next
    compile is announced again."""
    if _CLOCK.announced and compiled > 0:
        _CLOCK.announced = False
        _say(f"privenv: kernels compiled in {compiled:.1f} s (cached in {cache_dir()})")


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
    dispatcher = numba.njit(**{"error_model": "numpy", "nogil": True, "_nrt": False,
                               **options})(fn)
    if isinstance(dispatcher, Dispatcher):  # (not with NUMBA_DISABLE_JIT=1)
        try:
            # numba's Dispatcher stub omits its private cache attribute
            dispatcher._cache = _KernelCache(fn)  # type: ignore[attr-defined]
        except RuntimeError:  # no source file (``exec``, a notebook cell): compiled, not cached
            pass
    return dispatcher


_find_potential_aliases = ir_utils.find_potential_aliases


def _find_potential_aliases_to_fixpoint(blocks: Any, args: Any, typemap: Any, func_ir: Any,
                                        alias_map: Any = None, arg_aliases: Any = None) -> Any:
    """numba's alias analysis, repeated until nothing changes.

    numba's dead code elimination keeps a write into an array only if the array may alias an
    argument, which its alias analysis decides in one pass over the blocks in the order they are
    stored. The IR inlining of an overload (what :func:`generic` does) appends the inlined blocks
    and the rest of the caller after the caller's later blocks, so ``rel = state.releases`` can
    be stored after the block that writes ``rel.count[run] = 1``: the write was judged dead and
    deleted, silently (a compiled agent's ledger records were lost that way; numba issue #10041,
    open). Iterating to a fixed point makes the analysis independent of the order; it only ever
    keeps more code.
    """
    while True:
        before = (None if arg_aliases is None else set(arg_aliases),
                  None if alias_map is None else {k: set(v) for k, v in alias_map.items()})
        alias_map, arg_aliases = _find_potential_aliases(blocks, args, typemap, func_ir,
                                                         alias_map, arg_aliases)
        if before == (arg_aliases, alias_map):
            return alias_map, arg_aliases


ir_utils.find_potential_aliases = _find_potential_aliases_to_fixpoint


def _forwarder(impl: Any, n: int) -> Callable:
    """``lambda a0, …, a{n−1}: impl(a0, …)``: numba inlines a function of fixed arity only."""
    names = ", ".join(f"a{i}" for i in range(n))
    scope: dict[str, Any] = {"impl": impl}
    exec(f"def call({names}):\n    return impl({names})\n", scope)  # noqa: S102
    return scope["call"]


def _inline_overload(func: Callable, typer: Callable, jit_options: dict[str, Any]) -> None:
    """``numba.extending.overload(func, strict=False, inline="always", jit_options=...)(typer)``,
    less a compile whose result is never used.

    To type a call of an overload that is always inlined, numba runs the implementation's IR
    through type inference and inlines that IR into the caller, which compiles it as its own
    code; but first it compiles the implementation as a function of its own, down to machine
    code, only to check that it can (``_build_impl``) and to find literal arguments (none in
    privenv's kernels). That machine code is never called. Here the implementation's
    dispatcher is built with compiling turned off, so only the inlined IR is typed and
    compiled: the first cell of ``make reproduce`` (PRAE-C, cold cache) made 57 compiles
    instead of 77 and took 35 s of CPU instead of 43 (issue 35; one run each on a loaded
    machine). The caller's code, hence every number, is the same: the IR inlined is the same.
    """
    base = make_overload_template(func, typer, {**_overload_default_jit_options, **jit_options},
                                  False, "always", False)

    class Template(base):  # type: ignore[misc, valid-type]
        def _build_impl(self, cache_key: Any, args: Any, kws: Any) -> tuple[Any, Any]:
            pyfunc = self._overload_func(*args, **kws)
            if pyfunc is None:  # no implementation for these types: a typing error
                self._impl_cache[cache_key] = None, None
                return None, None
            disp = self._get_jit_decorator()(**self._jit_options)(pyfunc)
            # typed as inlined IR only (see above); (``disable_compile`` would refuse a
            # dispatcher with no compiled signature, hence the attribute it sets)
            disp._can_compile = False
            self._impl_cache[cache_key] = disp, args
            return disp, args

    infer(Template)
    infer_global(func, types.Function(Template))


def generic(stub: Callable | None = None, *, default: Any = None) -> Any:
    """Turn ``stub`` into a generic kernel function dispatched on its first argument's type.

    ``@stub.register(Cls)`` on a :func:`jit` function makes it the implementation for first
    arguments that are ``Cls`` instances (``Cls`` a ``NamedTuple`` class); ``default`` (a
    :func:`jit` function) serves the classes that register none. Called from Python (or with
    ``NUMBA_DISABLE_JIT=1``) the stub dispatches on ``type(first)`` itself.

    In a kernel, the call is inlined (numba IR, ``inline="always"``): a call that passed a state
    ``NamedTuple`` would flatten every field of every array into machine arguments (about 150
    for the Top Two state), which cost most of a step when LLVM did not inline a large callee.
    (numba's inlining of an overload exposed a bug of its dead code elimination, worked around
    here: :func:`_find_potential_aliases_to_fixpoint`.)
    """
    if stub is None:
        return lambda s: generic(s, default=default)
    impls: dict[type, Any] = {}

    def typer(*args: Any) -> Any:
        cls = getattr(args[0], "instance_class", None)  # a NamedTuple type's class
        impl = impls.get(cls, default) if isinstance(cls, type) else default
        if impl is None:
            return None

        return _forwarder(impl, len(args))

    def dispatch(first: Any, *rest: Any) -> Any:
        impl = impls.get(type(first), default)
        if impl is None:
            raise TypeError(f"{stub.__name__} has no implementation for "
                            f"{type(first).__name__}")
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
    _inline_overload(dispatch, typer, {"_nrt": False})
    return dispatch
