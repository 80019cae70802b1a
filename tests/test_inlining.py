"""The fast path's step loop passes no agent state, noise view or randomizer view to a function
call (privenv._jit, "Inlining").

A call that takes such a ``NamedTuple`` flattens every array of it into machine arguments: when
LLVM stopped inlining AdaP-TT's observe kernel (grown by the exact sampler's branch), its step went
from 53 to 254 ns; CTB-TT's call to the randomizer's ``release`` cost 20 of its 83 ns. This test
compiles the fast-path driver afresh for one agent of each kernel family, and for CTB-TT behind
its randomizer (in a subprocess with an empty numba cache: numba shows no machine code for cached
functions), and lists the functions its machine code calls with one (a state, a noise view, an
env's or a randomizer's view). Only the functions that run at a phase, epoch, segment or reward
block end may be called. It compiles for about 90 s: slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: (agent, env id, env kwargs): one per kernel family and per params type
AGENTS = [
    ("ttucb", "BestArmIdentification-v0", {"instance": "mu1"}),
    ("ctb-tt", "BestArmIdentification-v0", {"instance": "mu1"}),
    ("adap-tt", "BestArmIdentification-v0", {"instance": "mu1"}),
    ("daf-wrapper", "BestArmIdentification-v0", {"instance": "mu1"}),
    ("dp-se", "BestArmIdentification-v0", {"instance": "mu1"}),
    ("ucb1", "HuberBandit-v0", {}),
    ("robust-ucb", "HuberBandit-v0", {}),
    ("prae-c", "HuberBandit-v0", {}),
]

#: functions called at a phase, epoch or segment end, not at every step
RARE = {"_start_epoch", "_next_segment", "_prae_plan", "_prae_end_segment", "algorithm_3_exact",
        "_release", "_refresh_glr", "fill_block"}

SCRIPT = """
import json, re, sys, warnings
warnings.simplefilter("ignore")
from privenv import agents
from privenv.driver import run_until
from privenv.simulation import simulate
calls, seen = {}, set()
for name, env_id, env_kwargs in json.loads(sys.argv[1]):
    simulate(name, env_id, n_runs=1, horizon=50, seed=0, agent_kwargs={},
             env_kwargs=agents.env_kwargs_for(name, env_kwargs))
    for signature, asm in run_until.inspect_asm().items():
        if signature not in seen:  # the agent's own specialization
            seen.add(signature)
            calls.setdefault(name, set()).update(
                s for s in re.findall(r"movabsq\\t\\$(_ZN7privenv\\S+?),", asm)
                if re.search("State|View|Arms", s) and "run_until" not in s)
print(json.dumps({name: sorted(symbols) for name, symbols in calls.items()}))
"""


def function_name(symbol: str) -> str:
    """The function's own name in numba's mangled ``_ZN<len><name>…<len><function>B…``."""
    i, names = 3, []
    while symbol[i].isdigit():
        j = i
        while symbol[j].isdigit():
            j += 1
        names.append(symbol[j : j + int(symbol[i:j])])
        i = j + int(symbol[i:j])
    return names[-1]


@pytest.mark.slow
def test_the_step_loop_calls_no_function_with_the_state(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(AGENTS)], capture_output=True,
                         text=True, timeout=1800, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    calls = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(calls) == {name for name, _, _ in AGENTS}  # each compiled its own driver
    called = {agent: {function_name(s) for s in symbols} for agent, symbols in calls.items()}
    assert all(names <= RARE for names in called.values()), called
