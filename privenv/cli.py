"""The ``privenv`` command line (docs/guides/cli.md).

::

    privenv envs [--format json]                 registered environments
    privenv agents [--format json]               the agent zoo
    privenv run --env ID --agent NAME [--runs N] [--horizon T] [--seed S]
                [--set key=value ...] [--first-run I] [--format json]
    privenv reproduce --list                     paper figures
    privenv reproduce huber-fig1 [--quick] [--output DIR] [--workers N] [--runs N] [--horizon T]
    privenv reproduce bai-local|bai-global [--quick] [--instances ...] [--epsilons ...]
                      [--runs N] [--threshold theory|empirical|both] [--dry-run]
    privenv reproduce ldp-linear [--quick] [--horizons ...] [--epsilon E] [--instances ...]
    privenv sweep CONFIG --store PATH [--backend local|ray|dask] [--address ADDR] [--workers N]
                  [--resume] [--progress auto|bar|lines|none]
    privenv export STORE --format csv|parquet --output FILE [--table runs|curves|cells]
    privenv plot STORE --output DIR

``privenv run`` is a contract for scripts: with ``--format json`` it prints exactly one JSON object
on stdout with (at least) the keys of :data:`RUN_KEYS`, ``null`` where a key does not apply.
``--set key=value`` sets a constructor parameter of the agent, ``--set env.key=value`` one of the
env; values are parsed as JSON when possible (numbers, ``true``/``false``, lists, objects), else
kept as strings.

``privenv sweep`` runs a sweep config (:mod:`privenv.sweep`) into a results store
(:mod:`privenv.store`), progress on stderr, a one-line summary on stdout. Exit codes: 0 when every
cell is done, 1 when some cells failed (they are stored as failed with their error, the rest of
the sweep completed; ``--resume`` retries them), 2 for a usage or config error, 130 when
interrupted (finished cells stay in the store; ``--resume`` continues). ``privenv export`` writes
one row per run, sorted deterministically (``--output -``: CSV on stdout).

Errors in what the user asked for (unknown env, agent or parameter, a value out of range) print
one line ``privenv <command>: error: …`` on stderr and exit with code 2; no traceback (set the
environment variable ``PRIVENV_DEBUG=1`` to see it).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # (annotations only: the CLI imports the package lazily)
    from privenv.agents.base import Agent
    from privenv.envs import EnvEntry

#: keys ``privenv run --format json`` always prints (the scripting contract, docs/guides/cli.md)
RUN_KEYS = (
    "env", "agent", "privacy", "runs", "horizon", "seed", "regret_mean", "regret_sd",
    "stopping_time_mean", "stopping_time_sd", "error_rate", "wall_s", "ns_per_run_step",
)

EXIT_OK = 0
EXIT_FAILED_CELLS = 1
EXIT_USAGE = 2


class UsageError(ValueError):
    """Something the user asked for cannot be done (reported without a traceback, exit code 2)."""


# -- helpers --------------------------------------------------------------------------------------


def _first_line(doc: str | None) -> str:
    """The first sentence-line of a docstring."""
    for line in (doc or "").strip().splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def _plain(text: str) -> str:
    """reST inline markup as plain text: ``:class:`~a.B``` → ``B``, ``:func:`a.f``` → ``a.f``,
    ````x```` → ``x``, ``*x*`` and ``**x**`` → ``x``."""
    text = re.sub(r":[a-z]+:`~(?:[^`]*\.)?([^`.]+)`", r"\1", text)
    text = re.sub(r":[a-z]+:`([^`]+)`", r"\1", text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    return re.sub(r"(?<![\w*])\*{1,2}([^*\s][^*]*?)\*{1,2}(?![\w*])", r"\1", text)


def _summary_line(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line, without markup."""
    para = []
    for line in (doc or "").strip().splitlines():
        if not line.strip():
            break
        para.append(line.strip())
    text = _plain(" ".join(para))
    # a sentence ends at ". " outside parentheses, before neither a digit nor a lower-case letter
    # (not "(eq. 2)", "et al. 2020", "of eq. 12")
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        after = text[i + 2 : i + 3]
        if (ch == "." and depth <= 0 and text[i + 1 : i + 2] == " "
                and not (after.isdigit() or after.islower())):
            return text[: i + 1]
    return text


def _params(cls: type) -> dict[str, inspect.Parameter]:
    # (mypy's warning is about an instance's __init__; this is the class's constructor)
    init = cls.__init__  # type: ignore[misc]
    return {k: p for k, p in inspect.signature(init).parameters.items()
            if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _env_ids() -> dict[str, EnvEntry]:
    import privenv  # noqa: F401  (registers the ids)
    from privenv.envs import ENV_IDS

    return ENV_IDS


def _env_class(env_id: str) -> type:
    ids = _env_ids()
    if env_id not in ids:
        from privenv.rl.ids import unknown_env

        raise UsageError(unknown_env(env_id))
    from privenv.envs import env_class

    return env_class(env_id)


def _agent_class(name: str) -> type[Agent]:
    from privenv.agents import REGISTRY, agent_class

    if name not in REGISTRY:
        raise UsageError(f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))}")
    try:
        return agent_class(name)
    except (ImportError, AttributeError) as e:
        module, cls = REGISTRY[name]
        raise UsageError(
            f"agent {name!r} is registered ({module}.{cls}) but cannot be imported: {e}"
        ) from e


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _dumps(obj: Any, **kw: Any) -> str:
    return json.dumps(obj, default=_json_default, **kw)


def _table(rows: Sequence[Sequence[str]], header: Sequence[str], width: int | None = None) -> str:
    """Left-aligned columns; with ``width``, the last column wraps onto continuation lines so that
    no line is longer than ``width`` (when the other columns leave it 20 characters or more)."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    if width is not None:
        room = width - sum(widths[:-1]) - 2 * (len(widths) - 1)
        widths[-1] = max(min(widths[-1], room), 20)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    for r in rows:
        cells = [str(c) for c in r]
        last = [cells[-1]] if width is None else (textwrap.wrap(cells[-1], widths[-1]) or [""])
        lines.append(fmt.format(*cells[:-1], last[0]))
        lines += [fmt.format(*([""] * (len(cells) - 1)), more) for more in last[1:]]
    return "\n".join(line.rstrip() for line in lines)


# -- privenv envs ---------------------------------------------------------------------------------


def env_catalogue() -> list[dict[str, Any]]:
    """Every registered env: id, one-line description, default instance (constructor defaults)."""
    out = []
    for env_id, (entry, vector_entry, horizon) in _env_ids().items():
        cls = _env_class(env_id)
        defaults = {k: p.default for k, p in _params(cls).items()
                    if p.default is not inspect.Parameter.empty and p.default is not None
                    and k != "render_mode"}
        defaults.setdefault("horizon", horizon)
        out.append({
            "id": env_id,
            "description": _first_line(cls.__doc__),
            "defaults": defaults,
            "entry_point": entry,
            "vector_entry_point": vector_entry,
        })
    return out


def _cmd_envs(args: argparse.Namespace) -> int:
    cat = env_catalogue()
    if args.format == "json":
        print(_dumps(cat, indent=2))
        return EXIT_OK
    for e in cat:
        print(f"{e['id']}\n    {e['description']}")
        print("    default: " + ", ".join(f"{k}={v!r}" for k, v in e["defaults"].items()))
    return EXIT_OK


# -- privenv agents -------------------------------------------------------------------------------


def agent_catalogue(names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every registered agent (or those of ``names``): name, class, the families and env ids it
    plays, privacy model (of the agent built with its defaults on its first env), one-line
    description from the class docstring, and its declared parameters
    (:func:`privenv.parameters.describe`)."""
    import gymnasium as gym

    from privenv.agents import REGISTRY, env_kwargs_for, family_ids, make
    from privenv.parameters import describe
    from privenv.privacy.guarantee import system_guarantee
    from privenv.simulation import system_env, wrapper_guarantees

    out = []
    for name in sorted(REGISTRY) if names is None else names:
        module, clsname = REGISTRY[name]
        row: dict[str, Any] = {"name": name, "class": f"{module}.{clsname}"}
        try:
            cls = _agent_class(name)
        except UsageError as e:
            row.update(available=False, description=f"(not available: {e.__cause__})",
                       privacy_model=None, privacy=None, families=[], envs=[], parameters=[])
            out.append(row)
            continue
        envs = [i for f in cls.families for i in family_ids(f)]
        privacy = None
        if envs:
            kwargs = env_kwargs_for(cls)  # e.g. CTB-TT: the sample in the reward
            env = gym.make(envs[0], **kwargs)
            try:
                agent = make(name, env, 1)
            except ValueError:  # an agent that needs a declared reward bound (e.g.
                env.close()     # super-agent's central DP): ±1 rewards
                env = gym.make(envs[0], noise="bounded", **kwargs)
                agent = make(name, env, 1)
            privacy = system_guarantee(agent.privacy, wrapper_guarantees(system_env(agent, env)))
            env.close()
        row.update(available=True, description=_summary_line(cls.__doc__),
                   families=list(cls.families), envs=envs,
                   privacy_model=privacy.model if privacy else None,
                   privacy=str(privacy) if privacy else None, parameters=describe(cls))
        out.append(row)
    return out


#: the width ``privenv agents`` fits its output in (a 100-column terminal)
CATALOGUE_WIDTH = 100
#: a parenthetical that cites a paper: it names a year, "et al." or a quoted title
_CITATION = re.compile(r'\s\((?:[^()]|\([^()]*\))*(?:\b(?:19|20)\d\d\b|et al\.|")'
                       r"(?:[^()]|\([^()]*\))*\)")


def short_description(text: str, width: int, lines: int = 2) -> list[str]:
    """``text`` without its citations (a parenthetical naming a year), wrapped to ``width`` on at
    most ``lines`` lines, the last cut at a word with "…" if it does not fit (the full text is in
    ``privenv agents NAME`` and ``--format json``)."""
    text = re.sub(r"\s+([,.;:])", r"\1", _CITATION.sub("", text))
    text = " ".join(text.split()).rstrip(".")
    wrapped = textwrap.wrap(text, width) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = textwrap.shorten(wrapped[-1] + " …", width, placeholder=" …")
        if not wrapped[-1].endswith("…"):
            wrapped[-1] = wrapped[-1][: width - 2].rstrip() + " …"
    return wrapped


def _catalogue_table(cat: list[dict[str, Any]], width: int = CATALOGUE_WIDTH) -> str:
    """One row per agent (its description on up to two lines), then which env each family is;
    every line at most ``width`` characters."""
    header = ("agent", "privacy", "families", "description")
    cols = [[a["name"] for a in cat], [a["privacy_model"] or "?" for a in cat],
            [",".join(a["families"]) or "-" for a in cat]]
    widths = [max(len(header[i]), *(len(v) for v in c)) for i, c in enumerate(cols)]
    room = width - sum(widths) - 2 * len(widths)
    lines = ["  ".join(f"{h:<{w}}" for h, w in zip(header, [*widths, room], strict=True)).rstrip(),
             "  ".join("-" * w for w in [*widths, room])]
    for i, a in enumerate(cat):
        for j, text in enumerate(short_description(a["description"], room)):
            head = [c[i] if j == 0 else "" for c in cols]
            lines.append("  ".join(f"{v:<{w}}" for v, w in zip(head, widths, strict=True))
                         + "  " + text)
    families: dict[str, list[str]] = {}
    for a in cat:
        for f, env in zip(a["families"], _family_envs(a), strict=False):
            families.setdefault(f, [env])
    legend = "families: " + "; ".join(f"{f} = {', '.join(e)}" for f, e in families.items())
    lines += ["", *textwrap.wrap(legend, width, subsequent_indent="  "),
              *textwrap.wrap("Each agent's full description and parameters: privenv agents NAME; "
                             "everything as JSON: privenv agents --format json.", width)]
    return "\n".join(line.rstrip() for line in lines)


def _family_envs(agent: dict[str, Any]) -> list[str]:
    from privenv.agents import family_ids

    return [", ".join(family_ids(f)) for f in agent["families"]]


def _cmd_agents(args: argparse.Namespace) -> int:
    from privenv.agents import REGISTRY

    for name in args.names:
        if name not in REGISTRY:
            raise UsageError(f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))}")
    cat = agent_catalogue(args.names or None)
    if args.format == "json":
        print(_dumps(cat, indent=2))
        return EXIT_OK
    if not args.names:
        print(_catalogue_table(cat))
        return EXIT_OK
    for a in cat:
        print(textwrap.fill(f"{a['name']} ({a['class']}): {a['description']}", CATALOGUE_WIDTH,
                            subsequent_indent="    "))
        print(textwrap.fill(f"envs: {', '.join(a['envs'])}; privacy: {a['privacy'] or '-'}",
                            CATALOGUE_WIDTH, initial_indent="    ", subsequent_indent="    "))
        rows = []
        for p in a["parameters"]:
            source = p["from_env"]
            default = ("the env's " + source["key"] if source else
                       "required" if p["required"] else repr(p["default"]))
            if source and source["kind"] == "assumption":
                default += " (may be set)"
            rows.append((p["name"], p["allowed"], default))
        print(_table(rows, ("parameter", "allowed", "default"), width=CATALOGUE_WIDTH))
    return EXIT_OK


# -- privenv run ----------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A ``--set`` value: JSON when it parses (``0.5``, ``true``, ``[1, 2]``), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_sets(items: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--set`` items → (agent kwargs, env kwargs); ``env.`` prefixes an env parameter."""
    agent_kwargs: dict[str, Any] = {}
    env_kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or key == "env.":
            raise UsageError(f"--set expects key=value or env.key=value, got {item!r}")
        if key.startswith("env."):
            env_kwargs[key[4:]] = parse_value(value)
        else:
            agent_kwargs[key] = parse_value(value)
    return agent_kwargs, env_kwargs


def _check_env_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> None:
    from privenv.envs import check_env_kwargs

    if "horizon" in env_kwargs:
        raise UsageError("set the horizon with --horizon, not --set env.horizon")
    try:
        check_env_kwargs(env_id, env_kwargs)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_agent_kwargs(name: str, agent_kwargs: dict[str, Any]) -> None:
    from privenv.agents import check_parameter_names

    _agent_class(name)
    try:
        check_parameter_names(name, agent_kwargs)
    except ValueError as e:
        raise UsageError(f"{e} (env parameters take the prefix env., e.g. --set env.alpha=0.1)"
                         ) from None


def run_summary(args: argparse.Namespace) -> dict[str, Any]:
    """Simulate the configuration of ``privenv run`` and return its summary dict."""
    from privenv._validation import check_int
    from privenv.simulation import simulate

    agent_kwargs, env_kwargs = parse_sets(args.set)
    _env_class(args.env)
    _check_env_kwargs(args.env, env_kwargs)
    _check_agent_kwargs(args.agent, agent_kwargs)
    check_int("runs", args.runs)  # named as the options are (simulate's n_runs, first_run)
    check_int("first-run", args.first_run, low=0)
    try:
        result = simulate(
            args.agent, args.env, n_runs=args.runs, horizon=args.horizon, seed=args.seed,
            first_run=args.first_run, env_kwargs=env_kwargs, agent_kwargs=agent_kwargs,
        )
    except ValueError as e:  # an env parameter's error, named as it was set: env.key
        key = str(e).split(" ", 1)[0]
        if key in env_kwargs and key not in agent_kwargs:
            raise ValueError(f"env.{e}") from None
        raise
    summary = result.summary()
    missing = [k for k in RUN_KEYS if k not in summary]
    if missing:  # pragma: no cover - a bug in RunResults.summary
        raise RuntimeError(f"summary lacks the contract keys {missing}")
    return summary


def _format_run_table(s: dict[str, Any]) -> str:
    def fmt(v: Any) -> str:
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.6g}"
        if isinstance(v, dict):
            return ", ".join(f"{k}={x!r}" for k, x in v.items()) or "-"
        return str(v)

    keys = [k for k in s if k != "versions"]
    width = max(len(k) for k in keys)
    lines = [f"{k:<{width}}  {fmt(s[k])}" for k in keys]
    lines.append(f"{'versions':<{width}}  {fmt(s.get('versions', {}))}")
    return "\n".join(lines)


def _cmd_run(args: argparse.Namespace) -> int:
    summary = run_summary(args)
    if args.format == "json":
        print(_dumps(summary, allow_nan=False))
    else:
        print(_format_run_table(summary))
    return EXIT_OK


# -- privenv audit --------------------------------------------------------------------------------


def _cmd_audit(args: argparse.Namespace) -> int:
    from privenv import audits

    targets = None if args.targets is None else [t.strip() for t in args.targets.split(",")
                                                  if t.strip()]
    if targets == []:
        raise UsageError(f"--targets names no target (got {args.targets!r}); known targets: "
                         f"{', '.join(audits.CASES)}")
    records = audits.run(targets, size=args.size, seed=args.seed)
    if args.format == "json":
        print(_dumps([r.as_dict() for r in records], allow_nan=False))
    else:
        print(audits.format_table(records))
    return EXIT_OK if all(r.ok for r in records) else EXIT_FAILED_CELLS


# -- privenv reproduce ----------------------------------------------------------------------------


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from privenv.reproduce import FIGURES

    if args.list or not getattr(args, "figure", None):
        rows = [(fid, mod.DESCRIPTION) for fid, mod in FIGURES.items()]
        print(_table(rows, ("figure", "description")))
        if not args.list:
            print("\nusage: privenv reproduce FIGURE [--quick] [options]", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    return FIGURES[args.figure].main(args)


# -- privenv sweep / export / plot ---------------------------------------------------------------


def _cmd_sweep(args: argparse.Namespace) -> int:
    from privenv.sweep import load_config, run_sweep

    config = load_config(args.config)
    try:
        report = run_sweep(config, args.store, backend=args.backend, workers=args.workers,
                           address=args.address, resume=args.resume, progress=args.progress)
    except KeyboardInterrupt:
        print(f"privenv sweep: interrupted; the finished cells are in {args.store}; run the same "
              "command with --resume to continue", file=sys.stderr)
        return 130
    print(report.summary())
    if report.failed:
        for cell, error in report.failed:
            print(f"privenv sweep: failed: {cell.describe()}: {error}", file=sys.stderr)
        print(f"privenv sweep: {len(report.failed)} cells failed (errors and tracebacks are in "
              f"the store's cells table: privenv export {args.store} --table cells); rerun with "
              "--resume to retry them", file=sys.stderr)
        return EXIT_FAILED_CELLS
    return EXIT_OK


def _open_store(path: str) -> Any:
    from privenv.store import Store

    return Store(path, create=False)


def _cmd_export(args: argparse.Namespace) -> int:
    output = None if args.output == "-" else args.output
    with _open_store(args.store) as store:
        try:
            path = store.export(output, format=args.format, table=args.table)
        except BrokenPipeError:  # stdout closed early (e.g. `| head`): not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_OK
    if path is not None:
        print(f"privenv export: wrote {path}", file=sys.stderr)
    return EXIT_OK


def _cmd_plot(args: argparse.Namespace) -> int:
    from privenv.plotting import plot_regret

    with _open_store(args.store) as store:
        paths = plot_regret(store, args.output)
        rows = [(r["agent"], _kv(r["agent_kwargs"]), r["env"], _kv(r["env_kwargs"]),
                 str(r["horizon"]), str(r["runs"]), f"{r['regret_mean']:.6g}",
                 f"{r['regret_sd']:.3g}", str(r["failed_cells"]))
                for r in store.summary()]
        failed = store.counts()["failed"]
    print(_table(rows, ("agent", "agent params", "env", "env params", "T", "runs",
                        "regret mean", "sd", "failed cells")))
    if failed:
        print(f"({failed} failed cells are not plotted)", file=sys.stderr)
    for path in paths:
        print(f"{path.suffix[1:]:>4}: {path}")
    return EXIT_OK


def _kv(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_dumps(v)}" for k, v in kwargs.items()) or "-"


# -- parser ---------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse with a usage error on one line, ``privenv run: error: … (see privenv run
    --help)``, exit code 2 (its subcommands' parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(figures: bool = True) -> argparse.ArgumentParser:
    """The command line's parser. ``figures=False`` leaves out the options of each figure of
    ``privenv reproduce`` (it imports every reproduction module): :func:`main` adds them only
    when the command line names ``reproduce``, so the other commands, ``--help`` and a typo load
    none of them."""
    parser = _Parser(
        prog="privenv",
        description="Private bandit environments and the agent zoo: list, simulate, reproduce.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("envs", help="list the registered environments",
                       description="List the registered environments with their default instance.")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=_cmd_envs)

    p = sub.add_parser("agents", help="list the agent zoo",
                       description="List the agents with their privacy model, envs and "
                                   "description; with agent names, their parameters.")
    p.add_argument("names", nargs="*", metavar="AGENT",
                   help="show these agents' parameters (allowed values, defaults)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=_cmd_agents)

    p = sub.add_parser(
        "run", help="simulate one configuration",
        description="Simulate N runs of one agent on one environment and print a summary.",
        epilog="examples: privenv run --env HuberBandit-v0 --agent ucb1 --runs 30 --horizon 10000 "
               "--set sigma=2.2 --set env.alpha=0.1 --format json",
    )
    p.add_argument("--env", default="HuberBandit-v0", help="environment id (default: %(default)s)")
    p.add_argument("--agent", required=True, help="agent name (see `privenv agents`)")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="runs (default: %(default)s)")
    p.add_argument("--horizon", type=int, default=None, metavar="T",
                   help="horizon / sample budget (default: the env's)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed (default: %(default)s)")
    p.add_argument("--first-run", type=int, default=0, metavar="I",
                   help="index of the first run, to reproduce a slice of runs (default: 0)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="agent parameter (e.g. epsilon=0.5) or, prefixed env., env parameter "
                        "(e.g. env.alpha=0.1); repeatable; values parsed as JSON when possible")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.set_defaults(func=_cmd_run)

    from privenv.backends import BACKEND_METAVAR, BACKENDS

    p = sub.add_parser(
        "sweep", help="run a sweep config into a results store",
        description="Run every cell of a sweep config (TOML, JSON or YAML; see "
                    "examples/demo-sweep.toml) and write each finished cell to a SQLite results "
                    "store. Exit code 1 if some cells failed (stored with their errors).",
        epilog="example: privenv sweep examples/demo-sweep.toml --store results/demo.sqlite "
               "--workers 2",
    )
    p.add_argument("config", metavar="CONFIG", help="sweep config file (.toml, .json, .yaml)")
    p.add_argument("--store", required=True, metavar="PATH", help="results store (SQLite file)")
    p.add_argument("--backend", choices=BACKENDS, default="local", metavar=BACKEND_METAVAR,
                   help="local worker processes (default) or a Dask cluster (with --address)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="scheduler address of the distributed backend, e.g. tcp://host:8786")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="worker processes (local default: number of CPUs; 1 runs in-process)")
    p.add_argument("--resume", action="store_true",
                   help="continue a store of this config: skip done cells, retry failed ones")
    p.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                   help="progress on stderr: a bar on a terminal, else a line per cell (auto)")
    p.set_defaults(func=_cmd_sweep)

    p = sub.add_parser(
        "export", help="export a results store (one row per run)",
        description="Export a results store as CSV or Parquet, sorted deterministically.",
    )
    p.add_argument("store", metavar="STORE", help="results store (SQLite file)")
    p.add_argument("--format", choices=("csv", "parquet"), default="csv")
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="output file ('-': CSV on stdout)")
    p.add_argument("--table", choices=("runs", "curves", "cells"), default="runs",
                   help="runs: one row per run (default); curves: one row per run and "
                        "checkpoint; cells: one row per cell with status, error, wall time")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser(
        "plot", help="plot and summarize a results store",
        description="Regret against t (mean ± 1 sd) per env instance, one line per agent "
                    "configuration, as PNG and PDF; prints a summary table.",
    )
    p.add_argument("store", metavar="STORE", help="results store (SQLite file)")
    p.add_argument("--output", "-o", required=True, metavar="DIR", help="output directory")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser(
        "audit", help="privacy audits (ε lower bounds, exact preimages) with mutation tests",
        description="Run the privacy audits of privenv.audits: for each target an ε "
                    "lower bound from neighbouring inputs (Clopper–Pearson, false alarm ≤ 1e-6) "
                    "against the declared ε, or (preimage-* targets) the releases of one input "
                    "provably impossible from the other, and each injected bug, which must be "
                    "caught. Exit code 1 if a correct target violates its ε (a paper's own "
                    "flawed mechanism and the documented float samplers excepted) or a "
                    "mutation is missed.",
    )
    p.add_argument("--targets", default=None, metavar="LIST",
                   help="comma-separated targets (default: all)")
    p.add_argument("--size", choices=("quick", "full"), default="quick",
                   help="quick (default; minutes of CPU, far more the first time, while the "
                        "audited kernels compile) or full (10x the samples)")
    p.add_argument("--seed", type=int, default=20261129, help="master seed")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("reproduce", help="reproduce a paper figure",
                       description="Reproduce a paper figure (full scale by default).")
    p.add_argument("--list", action="store_true", help="list the figures")
    p.set_defaults(func=_cmd_reproduce)
    if not figures:
        return parser
    from privenv.reproduce import FIGURES

    figs = p.add_subparsers(dest="figure", metavar="FIGURE")
    for fid, mod in FIGURES.items():
        # (argparse %-formats help strings: a literal % in a description is written %%)
        fp = figs.add_parser(fid, help=mod.DESCRIPTION.replace("%", "%%"), description=mod.__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(fp)
        fp.set_defaults(func=_cmd_reproduce, list=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privenv`` script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(figures="reproduce" in argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    try:
        return args.func(args)
    except UsageError as e:
        return _error(args.command, str(e))
    except (ValueError, TypeError) as e:
        # the library's validation (ValueError naming the parameter) or a parameter of the wrong
        # type; surfaced as one line, no traceback (PRIVENV_DEBUG=1 shows it)
        if os.environ.get("PRIVENV_DEBUG"):
            raise
        return _error(args.command, str(e))
    except (ArithmeticError, MemoryError) as e:  # a value beyond what floats or memory hold
        if os.environ.get("PRIVENV_DEBUG"):
            raise
        what = "out of memory" if isinstance(e, MemoryError) else "numeric overflow"
        return _error(args.command, f"{what} ({type(e).__name__}: {e}); a parameter is too "
                                    "large for this machine (PRIVENV_DEBUG=1 shows where)")
    except BrokenPipeError:  # the reader of stdout quit (privenv run ... | head): nothing to say
        # (Python's recipe: point stdout at devnull, so the interpreter's last flush is quiet)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (ConnectionError, TimeoutError) as e:  # e.g. no scheduler at --address
        if os.environ.get("PRIVENV_DEBUG"):
            raise
        return _error(args.command, str(e))
    except OSError as e:  # a file or directory the command must read or write (e.g. --output)
        if os.environ.get("PRIVENV_DEBUG"):
            raise
        where = f" {str(e.filename)!r}" if e.filename is not None else ""
        return _error(args.command, f"cannot use{where}: {e.strerror or e}")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _error(command: str, message: str) -> int:
    print(f"privenv {command}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
