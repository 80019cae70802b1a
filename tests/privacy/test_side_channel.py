"""The side-channel audits (privenv.privacy.side_channel, ``privenv audit --targets
side-channel-*``): for each exact sampler, the release together with the work the draw did
(words read, or iterations of the snapping's binade search) between neighbouring inputs.

Each case at size "quick" with its fixed seed (false alarm ≤ 1e-6 per case, Clopper–Pearson with
Bonferroni inside the case, as every audit): the constant-work sampler shows
one work value — the work adds nothing to the likelihood ratio of the release, and the joint
ratio stays within e^ε·(1 + tolerance) at every output tested — and the mutant, the sampler as
written (CKS20's variable-work loops; the snapping's bit loop), is caught. Both variants run by
default: the mutants are the cheap samplers.
"""

from __future__ import annotations

import pytest

from privenv import audits
from privenv.privacy import harness, side_channel

VARIANTS = [pytest.param(name, m, id=f"{name}-{m or 'correct'}".replace(" ", "_"))
            for name, case in side_channel.CASES.items() for m in (None, *case.mutations)]


@pytest.mark.parametrize(("target", "mutation"), VARIANTS)
def test_side_channel_case(target: str, mutation: str | None) -> None:
    case = audits.CASES[target]
    [rec] = audits.run_case(case, "quick", mutations=[] if mutation is None else [mutation],
                            include_correct=mutation is None)
    assert rec.n == case.n_quick and rec.alpha <= harness.ALPHA
    d = rec.details
    if mutation is None:  # one work value: the work adds nothing to the release's ratio
        assert rec.verdict == harness.PASS, rec
        assert rec.epsilon_lower_bound <= rec.declared_epsilon
        assert rec.epsilon_lower_bound > case.power_floor, rec  # power, not privacy
        assert d["work_values_d"] == 1 and d["conditional_ratio"] == pytest.approx(1.0)
        if rec.declared_delta == 0:
            assert d["joint_ratio_over_e_eps"] <= 1 + d["tolerance"], d
    else:
        assert rec.mutation_caught and rec.verdict == harness.CAUGHT, rec
        assert d["conditional_ratio"] > 1 + d["tolerance"], d
    assert rec.ok
