"""Start-up cost: CPU time of fresh processes that import privenv or run its command line. Run:
``python benchmarks/startup.py`` (``--repeats N``, default 7).

Prints, measured in one run, the CPU time (user + system, of the process and its children) of

1. ``python -c "pass"`` (the interpreter itself);
2. ``python -c "import gymnasium"`` (the floor of any Gymnasium plugin: numpy and gymnasium);
3. ``python -c "import privenv"`` (target: ≤ 0.5 s; it does not import Gymnasium, which
   registers the ids when it is imported) and ``python -c "import privenv, gymnasium"`` (every
   id registered);
4. ``privenv --help`` and ``privenv rnu`` (a mistyped command: one line, exit code 2);
   target ≤ 0.3 s each;
5. ``import privenv; gym.make("HuberBandit-v0")``: what the first env pays for its lazily loaded
   layers (numba, scipy, the compiled kernels loaded from the cache; the kernels are compiled
   once before the timings);

each the median over ``--repeats`` processes, the commands taking turns so that a change of load
affects them alike, with the ratio to ``import gymnasium`` measured in the same run. The machine
is shared and noisy: CPU time is steadier than wall time there, and the ratio is the figure to
compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import machine_line

PY = sys.executable
_SCRIPT = Path(PY).with_name("privenv")
#: the privenv script next to this interpreter (the installed entry point), else the module
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "privenv.cli"]

COMMANDS: dict[str, list[str]] = {
    'python -c "pass"': [PY, "-c", "pass"],
    'python -c "import gymnasium"': [PY, "-c", "import gymnasium"],
    'python -c "import privenv"': [PY, "-c", "import privenv"],
    'python -c "import privenv, gymnasium"': [PY, "-c", "import privenv, gymnasium"],
    "privenv --help": [*CLI, "--help"],
    "privenv rnu (a typo)": [*CLI, "rnu"],
    'gym.make("HuberBandit-v0")': [PY, "-c", "import gymnasium as gym, privenv; "
                                   "gym.make('HuberBandit-v0').reset(seed=0)"],
}
BASELINE = 'python -c "import gymnasium"'


def cpu_and_wall(cmd: list[str]) -> tuple[float, float]:
    """CPU seconds (user + system) and wall seconds of one fresh process running ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="processes per command (median)")
    args = parser.parse_args()
    print(machine_line())
    print(f"load average {os.getloadavg()[0]:.2f}; {args.repeats} processes per command, "
          "median")
    for cmd in COMMANDS.values():  # warm-up: byte-code and the kernel cache written once
        cpu_and_wall(cmd)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, cmd in COMMANDS.items():
            times[name].append(cpu_and_wall(cmd))
    cpu = {name: statistics.median(c for c, _ in t) for name, t in times.items()}
    wall = {name: statistics.median(w for _, w in t) for name, t in times.items()}
    width = max(map(len, COMMANDS))
    print(f"{'command':<{width}}  {'CPU s':>6}  {'wall s':>6}  {'CPU / import gymnasium':>22}")
    for name in COMMANDS:
        print(f"{name:<{width}}  {cpu[name]:6.3f}  {wall[name]:6.3f}  "
              f"{cpu[name] / cpu[BASELINE]:22.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
