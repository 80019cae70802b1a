"""``privenv reproduce fed-leak`` (paper 2, §4): the membership test on public sync times beats
any ε = 1 guarantee against FedUCB's data-adaptive sync and is at chance against fixed batches;
a tiny reproduction writes every file and ends with the JSON line."""

import json

import numpy as np
import pytest

from privenv.cli import main
from privenv.reproduce import FIGURES, fed_leak
from privenv.reproduce.fed_leak import LeakInstance, Setting, interval_length, run_agent, sync_times

#: the figure's instance (T = 1000) with fewer trials
SMALL = Setting(LeakInstance(), trials=300, calibration_trials=200, seed=5)


def test_registered():
    assert FIGURES["fed-leak"] is fed_leak
    assert {"fed-synthetic", "fed-realdata", "fed-scaling"} <= set(FIGURES)


def test_interval_length():
    record = np.zeros((3, 10), dtype=bool)
    record[0, [2, 5, 8]] = True  # syncs after rounds 3, 6, 9
    record[1, [6]] = True  # one sync, after round 7
    assert list(interval_length(record, t0=5)) == [3.0, 7.0, 11.0]  # none at all: T + 1 − 0
    assert list(interval_length(record, t0=7)) == [3.0, 7.0, 11.0]


def test_adaptive_sync_leaks_beyond_the_messages_epsilon():
    leak = run_agent(SMALL, "feducb-adaptive")
    r = leak.result
    # the figure measures 0.990 (2000 trials); chance is 0.5, and the messages' nominal
    # (1, 1e-4)-LDP would cap any attack at 0.731
    assert r.success >= 0.9
    assert r.violates(1.0, 1e-4)  # a false alarm has probability <= 0.05 (one-sided CP)
    assert leak.distinct_records > 1


def test_fixed_batches_sync_times_never_depend_on_the_data():
    inst, kw = SMALL.instance, SMALL.agent_kwargs("fed-linucb")
    member = np.ones(8, dtype=bool)
    a = sync_times("fed-linucb", inst, member, seed=0, **kw)
    b = sync_times("fed-linucb", inst, ~member, seed=0, **kw)
    assert np.array_equal(a, b) and a.sum(axis=1).tolist() == [1000 // 25] * 8
    leak = run_agent(SMALL, "fed-linucb")
    assert leak.distinct_records == 1
    # successes ~ Binomial(300, 1/2) exactly; the 95 % CP interval misses 1/2 w.p. <= 0.05
    assert leak.result.consistent_with_chance()
    # the same records under the adaptive agent differ between the hypotheses
    kw = SMALL.agent_kwargs("feducb-adaptive")
    assert not np.array_equal(sync_times("feducb-adaptive", inst, member, 0, **kw),
                              sync_times("feducb-adaptive", inst, ~member, 0, **kw))


def test_tiny_reproduction_end_to_end(tmp_path, capsys):
    out = tmp_path / "leak"
    assert main(["reproduce", "fed-leak", "--quick", "--trials", "20", "--calibration-trials",
                 "10", "--output", str(out)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    last = json.loads(lines[-1])
    assert set(last) == {"adaptive_success", "fixed_success", "trials"} and last["trials"] == 20
    for name in ("trials.csv", "summary.csv", "metadata.json", "fed-leak.png", "fed-leak.pdf"):
        assert (out / name).stat().st_size > 0, name
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["summary"] == last and meta["instance"]["horizon"] == 300
    assert len((out / "trials.csv").read_text().splitlines()) == 1 + 2 * 20


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="trials"):
        fed_leak.reproduce(tmp_path, quick=True, trials=1)
    with pytest.raises(ValueError, match="epsilon"):
        fed_leak.reproduce(tmp_path, quick=True, epsilon=-1.0)
    with pytest.raises(ValueError, match="D"):
        fed_leak.reproduce(tmp_path, quick=True, D=0.0)
    with pytest.raises(ValueError, match="t0"):
        LeakInstance(horizon=10, t0=11)
    with pytest.raises(ValueError, match="silo"):
        LeakInstance(M=2, silo=2)
