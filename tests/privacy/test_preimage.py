"""Exact preimage search (privenv.privacy.preimage) and the harness's preimage audit cases.

The search is checked against brute force: the addition interval against its neighbouring
doubles, the sampler-support stage against (a) every release being reachable from its own input
and (b) an exhaustive window of ±2000 grid points around the inverse-CDF preimage of each release
claimed unreachable. The preimage cases run here (not in tests/privacy/test_audits.py) with their
specific numbers: the float samplers are flagged, the exact ones are not, every mutant is caught.
Their verdicts are deterministic for the fixed seed; an unreachable release is a proof, not a
statistic (the Clopper–Pearson bound on its frequency has false-alarm probability ≤ 1e-6).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privenv import audits, cli
from privenv.privacy import exact, harness, preimage
from privenv.privacy import mechanisms as mech

#: every preimage case of ``privenv audit``: the mechanisms' (privenv.privacy.audit_noise) and the
#: reward wrappers' (privenv.audits.randomizers)
PREIMAGE_CASES = [name for name in audits.CASES if name.startswith("preimage-")]


def test_ordered_keys_round_trip_and_order() -> None:
    x = np.array([-np.finfo(float).max, -3.5, -2.0**-1074, -0.0, 0.0, 2.0**-1074, 1.0, 1e308])
    k = preimage.ordered_key(x)
    assert np.all(np.diff(k) > 0)
    np.testing.assert_array_equal(preimage.from_key(k).view(np.int64), x.view(np.int64))
    g = np.random.default_rng(1).normal(0, 10, 1000) * 10.0 ** np.random.default_rng(2) \
        .integers(-300, 300, 1000)
    assert np.array_equal(np.argsort(preimage.ordered_key(g), kind="stable"),
                          np.argsort(g, kind="stable"))


@pytest.mark.parametrize("x", [0.0, 1.0, 1 / 3, -2.5, 1e-300, 7e15])
def test_addition_preimage_against_neighbouring_doubles(x: float) -> None:
    g = np.random.default_rng(3)
    y = np.concatenate([x + g.laplace(0, 1, 3000), g.laplace(0, 1, 1000),
                        g.laplace(0, 1e-20, 200), [x, 0.0, -0.0]])
    lo, hi, ok = preimage.addition_preimage(x, y)
    up, down = np.nextafter(hi, np.inf), np.nextafter(lo, -np.inf)
    assert np.all(x + lo[ok] == y[ok]) and np.all(x + hi[ok] == y[ok])
    assert np.all(x + up[ok] > y[ok]) and np.all(x + down[ok] < y[ok])
    # no double at all maps x to the others: the sums jump over y
    bad = ~ok
    n_lo = lo[bad]
    assert np.all((x + n_lo > y[bad]) & (x + np.nextafter(n_lo, -np.inf) < y[bad]))
    if x == 1.0:  # from 1, y ∈ (−½, ½) needs y − 1 exact (Sterbenz): 2⁻⁵³ℤ for y ≥ 0, 2⁻⁵²ℤ below
        small = np.abs(y) < 0.5
        ys = y[small]
        want = np.where(ys >= 0, (ys * 2.0**53) % 1 == 0, (ys * 2.0**52) % 1 == 0)
        np.testing.assert_array_equal(ok[small], want)
        assert (~want).sum() > 100


def _float_reach(transform, y: np.ndarray, x: float) -> np.ndarray:
    lo, hi, ok = preimage.addition_preimage(x, y)
    hit = ok.copy()
    hit[ok] = preimage.uniform_grid_hits(transform, lo[ok], hi[ok])
    return hit


TRANSFORMS = {
    "laplace": (lambda u: mech.laplace_from_uniform(u, 1.0),
                lambda n: np.where(n < 0, 0.5 * np.exp(n), 1 - 0.5 * np.exp(-n))),
    "gaussian": (lambda u: mech.gaussian_from_uniform(u, 2.3),
                 lambda n: __import__("scipy").special.ndtr(n / 2.3)),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_support_search_against_brute_force(name: str) -> None:
    """Every release is reachable from its own input; every release of input 1 claimed
    unreachable from input 0 has no grid point within ±2000 of its inverse-CDF preimage that
    maps to it."""
    transform, cdf = TRANSFORMS[name]
    g = np.random.default_rng(4)
    y0 = transform(g.random(4000))
    y1 = 1.0 + transform(g.random(4000))
    assert _float_reach(transform, y0, 0.0).all() and _float_reach(transform, y1, 1.0).all()
    claimed = ~_float_reach(transform, y1, 0.0)
    assert claimed.mean() > 0.5
    centre = np.floor(cdf(y1[claimed][:200]) * 2.0**53)
    ks = centre[:, None] + np.arange(-2000, 2001)[None, :]
    ks = np.clip(ks, 0, 2.0**53 - 1)
    values = transform(ks.ravel() * 2.0**-53).reshape(ks.shape)
    assert not np.any(values == y1[claimed][:200, None])


def test_grid_checks() -> None:
    g = 2.0**-10
    assert preimage.on_grid(np.array([0.0, 3 * g, -7 * g]), g).all()
    assert not preimage.on_grid(np.array([g / 2, 1 / 3, np.inf]), g).any()
    np.testing.assert_array_equal(
        preimage.grid_hits(np.array([0.1, g, 0.3]), np.array([0.1, g, 0.3 + g]), g),
        [False, True, True])


def test_snapping_witnesses_for_every_release() -> None:
    p = exact.SnappingParameters.calibrate(1.0, 1.0, 17.0)
    y = exact.snap(np.full(5000, 1 / 3), p, np.random.default_rng(5))
    assert preimage.snapping_witness(y, 0.0, p).all()
    assert preimage.snapping_witness(y, 1 / 3, p).all()
    assert not preimage.snapping_witness(np.array([p.lam_pow2 * 40.0]), 0.0, p).any()


# ---------------------------------------------------------------------------------------------
# the harness's preimage cases
# ---------------------------------------------------------------------------------------------


def test_registry_has_the_preimage_cases() -> None:
    assert {"preimage-laplace-float", "preimage-gaussian-float",
            "preimage-gaussian-float-ziggurat", "preimage-laplace-exact",
            "preimage-gaussian-exact", "preimage-snapping", "preimage-laplace-reward-exact",
            "preimage-gaussian-reward-exact"} <= set(PREIMAGE_CASES)


@pytest.mark.parametrize("target", PREIMAGE_CASES)
def test_preimage_case(target: str) -> None:
    case = audits.CASES[target]
    records = audits.run_case(case, "quick")
    correct, mutants = records[0], records[1:]
    d = correct.details
    assert d is not None and {"unreachable_d", "unreachable_dprime", "fraction_d",
                              "fraction_dprime", "delta_lower_bound", "search"} <= set(d)
    if case.float_sampler:
        assert correct.verdict == harness.FLOAT_VIOLATION and correct.ok
        assert correct.epsilon_lower_bound == math.inf
        assert d["delta_lower_bound"] > correct.declared_delta
    else:
        assert correct.verdict == harness.PASS
        assert d["unreachable_d"] == d["unreachable_dprime"] == 0 and d["undecided"] == 0
    if target == "preimage-laplace-float":  # the measurement: 80.1 % at 2·10⁶
        assert 0.78 < d["fraction_d"] < 0.82 and 0.78 < d["fraction_dprime"] < 0.82
    if target == "preimage-gaussian-float-ziggurat":
        assert d["fraction_d"] > 0.2  # a lower bound from the addition alone
    assert len(mutants) == len(case.mutations)
    for rec in mutants:
        assert rec.mutation_caught and rec.verdict == harness.CAUGHT, rec


def test_cli_lists_and_serializes_the_preimage_rows(capsys) -> None:
    targets = "preimage-laplace-float,preimage-laplace-exact"
    assert cli.main(["audit", "--targets", targets, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["target"], r["mutation"]) for r in rows] == [
        ("preimage-laplace-float", None), ("preimage-laplace-exact", None),
        ("preimage-laplace-exact", "float addition")]
    assert rows[0]["epsilon_lower_bound"] == "inf"
    assert rows[0]["verdict"] == harness.FLOAT_VIOLATION
    assert rows[0]["details"]["unreachable_d"] > 0
    assert rows[1]["details"]["unreachable_d"] == 0 and rows[1]["epsilon_lower_bound"] is None
    assert cli.main(["audit", "--targets", targets]) == 0
    out = capsys.readouterr().out
    assert "unreachable" in out and harness.FLOAT_VIOLATION in out
