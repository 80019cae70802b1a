"""What ``import privenv``, ``privenv --help`` and a mistyped command load (not timed: the
benchmark ``benchmarks/startup.py`` measures their CPU time).

``import privenv`` registers every id, and the command line parses its arguments, without
importing numba, scipy, torch or any layer of privenv below the registration: those load when an
env is made or a command runs. Nor does either import Gymnasium or numpy: the ids are registered
when Gymnasium is imported (before or after privenv). Each check runs in a fresh interpreter and
reads its ``sys.modules``; a regression (an eager import added to a package ``__init__``) fails it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: third-party packages none of the light paths may import (each costs 0.1-2 s of CPU)
HEAVY = ("numba", "llvmlite", "scipy", "torch", "pandas", "matplotlib", "dask", "sklearn",
         "pyarrow", "stable_baselines3", "pettingzoo")
#: and what neither ``import privenv`` alone nor the command line's parser imports
NOT_BEFORE_GYMNASIUM = (*HEAVY, "gymnasium", "numpy")
#: the privenv modules ``import privenv`` may load: the package and the ids' tables
REGISTRATION = {"privenv", "privenv.envs", "privenv.rl", "privenv.rl.ids"}
#: and the command line before its command runs: with the parser and the backends' names
CLI = REGISTRATION | {"privenv.cli", "privenv.backends", "privenv.backends.base"}


def _loaded(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; return its exit code, stderr and loaded modules."""
    probe = (f"import json, sys\n{code}\n"
             "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return {"modules": set(json.loads(lines[-1])), "out": lines[:-1], "err": proc.stderr}


def _check_light(modules: set[str], allowed: set[str], heavy_names: tuple[str, ...] = HEAVY
                 ) -> None:
    heavy = sorted(m for m in modules if m.split(".")[0] in heavy_names)
    assert not heavy, f"imported eagerly: {heavy[:10]}"
    ours = sorted(m for m in modules if m.split(".")[0] == "privenv" and m not in allowed)
    assert not ours, f"privenv modules imported eagerly: {ours}"


def test_import_privenv_is_light_and_registers_every_id():
    run = _loaded("import gymnasium as gym\nimport privenv\n"
                  "from privenv.envs import ENV_IDS\n"
                  "from privenv.rl.ids import RL_IDS\n"
                  "print(all(i in gym.registry for i in [*ENV_IDS, *RL_IDS]))")
    _check_light(run["modules"], REGISTRATION)
    assert run["out"] == ["True"]


def test_import_privenv_leaves_gymnasium_until_it_is_imported():
    """``import privenv`` first imports neither Gymnasium nor numpy; importing Gymnasium later
    (its package or a submodule) registers every id, and ``gym.make`` builds one."""
    run = _loaded("import privenv\n"
                  "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                  f"{NOT_BEFORE_GYMNASIUM!r}))\n"
                  "from gymnasium.envs.registration import registry\n"
                  "from privenv.envs import ENV_IDS\n"
                  "from privenv.rl.ids import RL_IDS\n"
                  "import gymnasium as gym\n"
                  "print(all(i in registry for i in [*ENV_IDS, *RL_IDS]),"
                  " gym.__spec__.loader is gym.__loader__,"
                  " type(gym.__loader__).__module__.startswith('_frozen_importlib'),"
                  " any(type(f).__module__ == 'privenv' for f in sys.meta_path))\n"
                  "env = gym.make('HuberBandit-v0')\n"
                  "print(type(env.unwrapped).__name__)")
    assert run["out"] == ["[]", "True True True False", "HuberBanditEnv"]


@pytest.mark.parametrize("argv,code", [(["--help"], 0), (["reproduc"], 2),
                                       (["run", "--runs", "x", "--agent", "ucb1"], 2)])
def test_cli_parses_without_heavy_imports(argv, code):
    """``privenv --help``, a mistyped command and a bad option value: the parser alone, and a
    usage error is one line with exit code 2."""
    run = _loaded("from privenv.cli import main\n"
                  f"print('exit', main({argv!r}))")
    _check_light(run["modules"], CLI, NOT_BEFORE_GYMNASIUM)
    assert run["out"][-1] == f"exit {code}"
    if code == 2:
        assert len(run["err"].strip().splitlines()) == 1, run["err"]
        assert run["err"].startswith("privenv") and "error:" in run["err"]


def test_classes_load_on_first_use():
    """The env classes ``privenv.envs`` exports load when used; ``gym.make`` and the
    ``privenv:`` prefix work from a fresh interpreter."""
    run = _loaded("import gymnasium as gym\n"
                  "env = gym.make('privenv:HuberBandit-v0')\n"
                  "from privenv.envs import HuberBanditEnv, __all__ as names\n"
                  "import privenv.envs as envs\n"
                  "print(isinstance(env.unwrapped, HuberBanditEnv),"
                  " all(hasattr(envs, n) for n in names), set(names) <= set(dir(envs)))")
    assert run["out"] == ["True True True"]
    assert "numba" in run["modules"]  # the env's kernels: loaded on use
    with pytest.raises(AttributeError, match="no attribute 'NoSuchEnv'"):
        import privenv.envs

        privenv.envs.NoSuchEnv  # noqa: B018
