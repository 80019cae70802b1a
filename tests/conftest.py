import gc
import os

import numpy as np
import pytest
from hypothesis import settings

# Property tests draw their examples from a seed derived from each test (the same examples every
# run, like every other test's fixed seed), and keep no example database in the working tree.
settings.register_profile("privenv", derandomize=True, database=None)
settings.load_profile("privenv")


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """The end of an xdist worker, kept within execnet's 5 s.

    Told to finish, a worker has 5 s before execnet interrupts it with SIGINT. Its last act was
    pytest's final ``gc.collect()``, a walk over every object of the session (a million, with
    numba's compiled kernels), which took 17 s on a loaded machine (measured): the interrupt then
    landed in hypothesis' garbage-collection callback, and its ``KeyboardInterrupt`` ended the
    run's output with a ``PytestUnraisableExceptionWarning`` traceback. Frozen, those objects are
    left to the process's exit, which frees them anyway; the per-test checks for unraisable
    exceptions are unchanged."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        gc.freeze()


# -- the two workers of ``make test`` (pytest -n 2 --dist loadfile) ------------------------------
#
# xdist's loadfile hands out one file at a time, in decreasing order of test counts, to the worker
# that is nearly done: the long files with few tests (the docs build, the notebooks) came last and
# one worker finished alone. Here the files known to be long go first (longest first), the rest
# follow in xdist's order; and the two files that read the session's docs build run in one worker
# (in two, the second waited, idle, on the first's build: tests/docs/docs_site.py's lock).

#: test files (or groups of files, run by one worker) that go first, in this order: the longest
#: with an empty numba cache (measured one file per process with ``--durations``, CPU seconds:
#: test_adap_tt 165, test_golden 155 with the Top Two kernels already cached, the docs build about
#: 120 of wall time, test_audits 131 of which about 100 for a case now slow (SLOW_EXACT_AUDITS),
#: the notebooks 31). The first is the group of the three files that compile the best-arm
#: kernels (:data:`SAME_WORKER`); the docs build (the huber-fig1 agents) starts in the other worker.
LONG_FIRST = (
    "tests/test_golden.py",
    "tests/docs/test_docs.py",
    "tests/privacy/test_audits.py",
    "tests/docs/test_lab_notebooks.py",
)
#: files run in the same worker as another file: file → the scope it joins. test_adap_tt,
#: test_golden and test_kernels all run the best-arm agents' compiled loops (``driver.run_until``
#: on the Top Two, elimination and phase states): in two workers each compiled them, at the same
#: time, so neither found the other's in the numba cache (a cold full run with PRIVENV_TEST_CPU:
#: 5 Top Two, 3 elimination and 1 phase compiles in each worker, about 88 s of CPU twice).
SAME_WORKER = {"tests/docs/test_docs_browser.py": "tests/docs/test_docs.py",
               "tests/agents/test_adap_tt.py": "tests/test_golden.py",
               "tests/test_kernels.py": "tests/test_golden.py"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with :data:`LONG_FIRST` and :data:`SAME_WORKER` (the other modes are
    xdist's own)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    # xdist's own (private) methods, those of pytest-xdist 3.x: without them, xdist's order
    if not all(hasattr(LoadFileScheduling, name) for name in ("_split_scope", "_assign_work_unit")):
        return None

    class LongFirst(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return SAME_WORKER.get(path, path)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first call: the queue is complete, in xdist's order
                rank = {path: i for i, path in enumerate(LONG_FIRST)}
                queue = sorted(self.workqueue.items(),
                               key=lambda unit: rank.get(unit[0], len(rank)))  # stable
                self.workqueue.clear()
                self.workqueue.update(queue)
                self.ordered = True
            super()._assign_work_unit(node)

    return LongFirst(config, log)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small MLPs train fastest on one thread (and do not oversubscribe a shared machine): use it
    with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# -- privacy audits, each run in the test file of what it audits ---------------------------------
#
# A test module lists the audit cases it runs in ``AUDIT_TARGETS`` (names of privenv.audits.CASES)
# and has a test taking ``audit_target`` and ``audit_mutation``; this hook gives it one test per
# case and variant (the correct target, then each mutation), and ``check_audit`` checks the
# record. A private agent's cases run in its own file under tests/agents/ (a contributor editing
# the agent runs them); tests/privacy/test_audits.py runs the others and checks that every case runs
# exactly once.


#: exact-sampler cases whose correct target is ``slow`` too: 200 000 samples of a 16-release tree
#: protocol with discrete-Gaussian node noise, about 100 s of CPU each (measured with a warm numba
#: cache: the sampling, not the compile). What they check end to end runs by default in parts:
#: the tree code in their float twins' audits (with mutants),
#: the discrete Gaussian in the ``gaussian-exact`` audit, the zCDP calibration at these very
#: parameters in tests/privacy/test_federated_protocol.py
#: (``test_exact_calibration_meets_the_target_through_zcdp``, both protocols) and the rounding to
#: the grid there (``test_exact_protocol_sums_the_rounded_items_and_is_batch_independent``).
#: ``central-dp-linucb-exact`` likewise (40 000 runs of central-DP LinUCB's two trees with
#: discrete-Gaussian node noise, 102 s in a cold full run): its tree code in the
#: ``central-dp-linucb`` audit (with mutants), the discrete Gaussian in ``gaussian-exact``, its zCDP
#: calibration and its exact runs in tests/agents/test_central_linucb.py
#: (``test_exact_sampler_calibration_meets_the_target_through_zcdp``,
#: ``test_exact_sampler_runs_are_batch_invariant_and_differ_from_float``).
#: ``dprse-exact``, ``dp-se-exact``, ``prae-c-exact``, ``lplr-update-count-exact`` and
#: ``gaussian-statistics-exact`` (17, 7, 21, 19 and 13 s of CPU in cold full runs): each agent's
#: release code in its float twin's audit (with mutants), the exact draws in ``laplace-exact`` and
#: ``gaussian-exact``, an agent's exact path end to end in the ``adap-tt-exact`` audit, which
#: stays, each agent's sampler choice reaching its compiled code in tests/test_kernels.py
#: (``test_the_sampler_choice_reaches_the_kernel_record``), PRAE-C's exact runs there in every
#: driver, and the linear agents' exact runs in tests/privacy/test_exact_linear.py.
SLOW_EXACT_AUDITS = ("fed-linucb-silo-exact", "super-agent-central-exact",
                     "central-dp-linucb-exact", "dprse-exact", "dp-se-exact", "prae-c-exact",
                     "lplr-update-count-exact", "gaussian-statistics-exact")


def audit_variants(targets, shared=()):
    """``pytest.param(target, mutation)`` for each case of ``targets`` and each of its variants.
    An exact-sampler case shares its mechanism's code with its float case, whose mutants run by
    default: the exact case's own mutants are ``slow`` (``make test-slow``); so are the mutants
    of the cases in ``shared`` (a module's ``AUDIT_SHARED``: agents whose release code is another
    listed case's, whose mutants run by default), and the correct targets of
    :data:`SLOW_EXACT_AUDITS`."""
    from privenv import audits

    def slow(name: str, mutation: str | None) -> bool:
        if mutation is None:
            return name in SLOW_EXACT_AUDITS
        return name.endswith("-exact") or name in shared

    return [pytest.param(name, m, id=f"{name}-{m or 'correct'}".replace(" ", "_"),
                         marks=[pytest.mark.slow] if slow(name, m) else [])
            for name in targets for m in (None, *audits.CASES[name].mutations)]


def pytest_generate_tests(metafunc):
    if "audit_target" in metafunc.fixturenames:
        metafunc.parametrize(("audit_target", "audit_mutation"),
                             audit_variants(metafunc.module.AUDIT_TARGETS,
                                            getattr(metafunc.module, "AUDIT_SHARED", ())))


def _check_audit(target: str, mutation: str | None) -> None:
    """Audit ``target`` at size "quick" with its fixed seed: the correct target's ε lower bound
    stays at or below its declared ε (false alarm ≤ 1e-6 per case) and exceeds the case's power
    floor; a paper's own flawed mechanism is a documented violation; a mutation is caught."""
    from privenv import audits
    from privenv.privacy import harness

    case = audits.CASES[target]
    [rec] = audits.run_case(case, "quick", mutations=[] if mutation is None else [mutation],
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


@pytest.fixture
def check_audit():
    """The check of one audit variant (:func:`_check_audit`)."""
    return _check_audit


# -- CPU time per test file (``PRIVENV_TEST_CPU=DIR``: one JSON file per worker in DIR) ----------
#
# Process CPU (user + system, this process and the children it waited for) is robust to a loaded
# machine where wall time is not: the suite's budget is measured in it. Each worker's file also
# lists, per test file, the kernels numba compiled there (outermost compiles: function, argument
# types, seconds): a kernel compiled in both workers, or for one test only, shows there.

_CPU_DIR = os.environ.get("PRIVENV_TEST_CPU")


def _cpu_now() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system, t.elapsed


if _CPU_DIR:
    import time

    from numba.core import event

    _cpu_per_file: dict[str, list[float]] = {}
    _cpu_per_test: dict[str, float] = {}
    _compiles: list[list] = []  # [test file, function, argument types, seconds]
    _current = {"file": "(collection)", "depth": 0, "start": 0.0}

    class _CompileRecorder(event.Listener):
        def on_start(self, ev):
            if _current["depth"] == 0:
                _current["start"] = time.process_time()
            _current["depth"] += 1

        def on_end(self, ev):
            _current["depth"] -= 1
            if _current["depth"] == 0:
                fn = ev.data["dispatcher"].py_func
                _compiles.append([_current["file"], f"{fn.__module__}.{fn.__qualname__}",
                                  str(ev.data["args"])[:300],
                                  round(time.process_time() - _current["start"], 3)])

    event.register("numba:compile", _CompileRecorder())

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        _current["file"] = item.location[0]
        cpu0, wall0 = _cpu_now()
        yield
        cpu1, wall1 = _cpu_now()
        entry = _cpu_per_file.setdefault(item.location[0], [0.0, 0.0, 0])
        entry[0] += cpu1 - cpu0
        entry[1] += wall1 - wall0
        entry[2] += 1
        _cpu_per_test[item.nodeid] = round(cpu1 - cpu0, 3)

    def pytest_sessionfinish(session):
        import json

        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(_CPU_DIR, f"cpu-{worker}.json"), "w") as f:
            json.dump({"total_cpu": _cpu_now()[0], "files": _cpu_per_file,
                       "tests": _cpu_per_test, "compiles": _compiles}, f, indent=1)
