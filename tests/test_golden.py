"""The compiled kernels reproduce the numbers of the batched numpy implementation they replaced.

``tests/golden/*.json.gz`` hold, for fixed seeds, the run-by-run outputs of the numpy
implementation (privenv 0.1.0 before the compiled kernels, commit 41d421f; see
``tests/golden/generate.py`` for the cells): stopping times, recommendations, correctness and
adaptivity rounds of every best-arm agent on μ1 and μ4, and the regret curves of every
multi-armed agent on the huber-fig1 panels at T = 10⁴. Each test runs one cell through
:func:`privenv.simulation.simulate` (the compiled fast path) and compares run by run, exactly.

The default run checks the first :data:`QUICK_RUNS` runs of every cell (run *i* does not depend
on the batch, so a prefix is a faithful check); ``-m slow`` checks every run, step by step too.

``releases.json.gz`` holds, for every private agent, a slice of runs that does not start at run
0 (``first_run`` 5) with the agent's *released noisy statistics* after the run besides its regret
or stopping times (recorded from the compiled kernels; ``generate.RELEASES`` names them): a wrong
noise scale that leaves a short run's actions unchanged changes these, and every agent with a
noise hook is shown to fail its cell with the noise halved.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from privenv.agents import env_kwargs_for
from privenv.agents.top_two import GaussianLDPTTUCB
from privenv.simulation import simulate

HERE = Path(__file__).parent / "golden"
QUICK_RUNS = 4


def _generator():
    spec = importlib.util.spec_from_file_location("generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generator()


def _cells(family: str) -> list[dict]:
    path = HERE / f"{family}.json.gz"
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)["cells"]


def _id(cell: dict) -> str:
    kw = ",".join(f"{k}={v}" for k, v in {**cell["env_kwargs"], **cell["agent_kwargs"]}.items())
    return f"{cell['agent']}[{kw}]"


def _check(cell: dict, runs: int) -> None:
    env_id = "BestArmIdentification-v0" if cell["family"] == "bai" else "HuberBandit-v0"
    res = simulate(cell["agent"], env_id, n_runs=runs, horizon=cell["horizon"], seed=cell["seed"],
                   env_kwargs=env_kwargs_for(cell["agent"], cell["env_kwargs"]),
                   agent_kwargs=cell["agent_kwargs"])
    np.testing.assert_array_equal(res.steps, cell["steps"][:runs])
    if cell["family"] == "bai":
        for key in ("stopping_time", "recommendation", "correct", "adaptivity_rounds"):
            if key in cell:
                np.testing.assert_array_equal(res.episode[key], cell[key][:runs], err_msg=key)
    else:
        expected = np.array([[float.fromhex(v) for v in row] for row in cell["regret_curve"]])
        np.testing.assert_array_equal(res.checkpoint_times, cell["checkpoints"])
        np.testing.assert_array_equal(res.regret_curve, expected[:runs])


def _changed(cell: dict) -> bool:
    """Cells whose numbers were changed on purpose since the numpy implementation: the
    Gaussian-LDP TTUCB with the empirical thresholds where its σ exceeds 1 (ε ≤ 4). Its GLR
    statistic used unit variance on rewards of variance σ²_{ε,γ} + 1/4, which overstates the
    evidence σ²-fold; it now uses σ (``TopTwo.glr_sigma``)."""
    return (cell["agent"] == "gaussian-ldp-ttucb"
            and cell["agent_kwargs"].get("threshold") == "empirical"
            and GaussianLDPTTUCB(K=5, epsilon=cell["agent_kwargs"]["epsilon"]).sigma > 1.0)


BAI = [c for c in _cells("bai") if not _changed(c)]
CHANGED = [c for c in _cells("bai") if _changed(c)]
MAB = _cells("mab")


@pytest.mark.parametrize("cell", MAB + BAI, ids=[_id(c) for c in MAB + BAI])
def test_golden_prefix(cell):
    _check(cell, QUICK_RUNS)


@pytest.mark.slow
@pytest.mark.parametrize("cell", MAB + BAI, ids=[_id(c) for c in MAB + BAI])
def test_golden_all_runs(cell):
    _check(cell, cell["runs"])


@pytest.mark.parametrize("cell", CHANGED, ids=[_id(c) for c in CHANGED])
def test_the_changed_cells_record_the_bug_they_fixed(cell):
    """The stored numpy runs of each changed cell stopped within a few hundred pulls and named
    the best arm in at most half of the runs (δ = 0.01 allows about none of 10); the current
    agent's first run differs from them."""
    stopped = np.array(cell["stopping_time"])
    assert np.median(stopped) < 1_000 and np.mean(cell["correct"]) <= 0.5
    with pytest.raises(AssertionError):
        _check(cell, 1)


def _key(cell: dict) -> tuple:
    return (cell["agent"], json.dumps(cell["env_kwargs"], sort_keys=True),
            json.dumps(cell["agent_kwargs"], sort_keys=True))


def test_the_golden_files_hold_cells_of_the_generator():
    """Each file holds every cell of the generator, in its order (tests/golden/generate.py)."""
    assert [_key(c) for c in MAB] == [_key(c) for c in generate.mab_cells()]
    assert [(_key(c), c["first_run"]) for c in RELEASES] == [
        (_key(c), c["first_run"]) for c in generate.release_cells()]
    expected = [_key(c) for c in generate.bai_cells()]
    assert [_key(c) for c in _cells("bai")] == expected
    assert BAI and CHANGED


# -- released noisy statistics, on runs 5, 6, 7 --------------------------------------------------

RELEASES = _cells("releases")
OUTPUTS = ("steps", "regret_curve", "stopping_time", "recommendation", "correct", "releases")


@functools.cache
def _portable_outputs() -> dict[str, dict]:
    """The current outputs of the release cells of numpy-computed families, run together in the
    portable subprocess (``generate.PORTABLE_FAMILIES``: the same bits on every x86-64 CPU)."""
    cells = [c for c in RELEASES if c["release_family"] in generate.PORTABLE_FAMILIES]
    return {generate._key(c): out
            for c, out in zip(cells, generate.run_release_cells_portably(cells), strict=True)}


def _release_diff(cell: dict, halve: tuple[type, str] | None = None) -> list[str]:
    """The outputs of ``cell`` that the current code does not reproduce exactly (``halve``: with
    that class's noise hook set to 0.5)."""
    if cell["release_family"] not in generate.PORTABLE_FAMILIES:
        now = generate.run_release_cell(cell)
    elif halve is None:
        now = _portable_outputs()[generate._key(cell)]
    else:
        cls, attribute = halve
        now = generate.run_release_cells_portably(
            [cell], (cls.__module__, cls.__qualname__, attribute))[0]
    return [key for key in OUTPUTS if key in cell and now[key] != cell[key]]


@pytest.mark.parametrize("cell", RELEASES, ids=[_id(c) for c in RELEASES])
def test_golden_releases(cell):
    assert cell["first_run"] > 0 and cell["releases"]
    assert _release_diff(cell) == []


def _noise_hooks() -> dict[str, tuple[type, str]]:
    """Private agent → (class, attribute) of its noise-scale audit hook, where it has one."""
    from privenv.agents import agent_class
    from privenv.agents.lplr import LPLRUsers

    out = {}
    for name in generate.RELEASES:
        cls = agent_class(name)
        if name == "lplr-regcb":
            out[name] = (LPLRUsers, "noise_multiplier")
        elif getattr(cls, "noise_multiplier", None) is not None:
            out[name] = (cls, "noise_multiplier")
    return out


HOOKS = _noise_hooks()


@pytest.mark.parametrize("name", sorted(HOOKS))
def test_a_halved_noise_fails_a_release_cell(name, monkeypatch):
    """The mutation the regret-only golden cells missed (PRAE-C's release noise halved passed all
    of them): with the agent's noise scales halved through its audit hook, a release cell of the
    agent no longer matches — and its released statistics are among what changed."""
    cls, attribute = HOOKS[name]
    monkeypatch.setattr(cls, attribute, 0.5)  # (the portable cells: in their subprocess)
    diffs = [_release_diff(c, (cls, attribute)) for c in RELEASES if c["agent"] == name]
    assert diffs and any("releases" in d for d in diffs), diffs


def test_the_release_cells_cover_every_private_agent():
    from privenv.agents import REGISTRY, agent_class

    private = {n for n in REGISTRY if "epsilon" in agent_class(n).parameters}
    assert {c["agent"] for c in RELEASES} == set(generate.RELEASES) == private
    assert {"prae-c", "prae-r", "dp-se", "adap-tt", "central-dp-linucb"} <= set(HOOKS)
