"""Stopping time against ε for private best-arm identification: ``bai-local`` and ``bai-global``.

Paper 3 (Azize, Jourdan, Al Marjani, Basu, *Differentially Private Best-Arm Identification*), §5
and Appendix I: Bernoulli instances μ1 … μ6 (Sajed and Sheffet 2019), risk δ = 0.01, 1000 runs per
point; the mean ± sd stopping time τ against the privacy budget ε, on log–log axes, with the
lower bound and the ε at which it switches regime. This module runs the two figures (the modules
:mod:`~privenv.reproduce.bai_local` and :mod:`~privenv.reproduce.bai_global` hold their
command-line entry); :mod:`~privenv.reproduce.bai_plan` defines them (:class:`FigureSpec`), their
points, bounds and cost model, and :mod:`~privenv.reproduce.bai_results` reads their runs back and
writes the table, CSVs and figure:

* ``bai-local`` (Figures 1 and 3): CTB-TT (ε-local DP) against the non-private TTUCB, ε in
  {0.01, 0.05, 0.1, 0.2, …, 0.9, 1, 10, 100}; lower bound max{T*_KL, T*_TV²/c(ε)}·log(1/(2.4δ))
  (Corollary 11).
* ``bai-global`` (Figures 2, 4 and 5): AdaP-TT, AdaP-TT* and DP-SE (ε-global DP) against TTUCB,
  ε in {0.001, 0.005, 0.01, 0.05, 0.1, 0.2, …, 0.9, 1, 10, 100, 1000}; lower bounds T*_g(ε)
  (Theorem 17, exact) and its relaxation max{T*_KL, T*_TV/ε} (Corollary 18), × log(1/(2.4δ)).

Results go to the results store ``results.sqlite`` (``--resume`` continues an interrupted
reproduction, or extends it with more points); CSVs and figure are drawn from it. Full scale is
days on a small machine (the cost model: :mod:`~privenv.reproduce.bai_plan`). ``--instances``,
``--epsilons``, ``--runs``, ``--agents``, ``--threshold`` and ``--horizon`` restrict a
reproduction; ``--quick`` (μ4 and μ5, three ε on both sides of the switch, 100 runs) takes a few
minutes on two cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, NamedTuple

from privenv.reproduce.bai_plan import (
    CONFIDENCE,
    COST_FACTORS,
    DELTA,
    ENV_ID,
    FIGURES,
    GLOBAL,
    GLOBAL_EPSILONS,
    INSTANCES,
    LOCAL,
    LOCAL_EPSILONS,
    PULL_SECONDS,
    THRESHOLD_CHOICES,
    FigureSpec,
    Plan,
    Point,
    Scale,
    characteristic_times,
    default_chunk,
    duration_text,
    estimated_seconds,
    estimated_steps,
    is_private,
    make_points,
    plan,
)
from privenv.reproduce.bai_results import PointResult, Reproduction, runs_to_show, write_csvs
from privenv.reproduce.cells import (
    Execution,
    add_common_arguments,
    default_workers,
    finish_figure,
    output_dir,
    run_metadata,
    stored_chunk,
    utc_now,
)
from privenv.sweep import Cell as SweepCell

# -- the reproduction -----------------------------------------------------------------------------


def reproduce(
    spec: FigureSpec,
    output: str | Path | None = None,
    *,
    quick: bool = False,
    instances: Sequence[str] | None = None,
    epsilons: Sequence[float] | None = None,
    runs: int | None = None,
    agents: Sequence[str] | None = None,
    threshold: str | None = None,
    horizon: int | None = None,
    chunk: int | None = None,
    seed: int = 0,
    deltas: Sequence[float] | None = None,
    log: Callable[[str], None] | None = None,
    execution: Execution | None = None,
    **options: Any,
) -> Reproduction:
    """Run a stopping-time reproduction and write its files; returns the results.

    Args:
        spec: :data:`LOCAL`, :data:`GLOBAL` or :data:`~privenv.reproduce.bai_delta.DEFINITION`.
        output: directory (created); default ``results/<id>`` (``…-quick`` with ``quick``).
        quick: the figure's quick scale (instances, ε, runs) instead of the full one.
        instances, epsilons, runs, agents, deltas: override the scale's (restrict a
            reproduction).
        threshold: ``"theory"``, ``"empirical"`` or ``"both"`` for the Top Two agents (default:
            the figure's, ``spec.threshold``).
        horizon: the sample budget per run (default: the env's, 10⁸).
        chunk: runs per cell (default :func:`default_chunk`; when resuming, the store's
            (:func:`~privenv.reproduce.cells.stored_chunk`), so that more runs extend it).
        seed: the seed of every point.
        log: called with the cost estimate before running (e.g. ``print``).
        execution, options: how it runs (workers, backend, address, resume, progress, figure):
            an :class:`~privenv.reproduce.cells.Execution`, or its fields as keywords.

    Raises:
        RuntimeError: if a cell failed (its error is in the store; ``resume`` retries it).
    """
    ex = Execution.of(execution, **options)
    out = output_dir(output, spec.default_output, quick)
    pl = plan(spec, quick=quick, instances=instances, epsilons=epsilons, runs=runs,
              agents=agents, threshold=spec.threshold if threshold is None else threshold,
              horizon=horizon, chunk=_chunk(chunk, ex.resume, out), seed=seed, deltas=deltas)
    if log is not None:
        log(pl.describe_cost(ex.workers or default_workers()))
    config = pl.sweep_config().validate()
    start = time.perf_counter()
    report, store_path, stored = ex.run(config, out)
    config_ids = dict(zip(config.configurations, config.config_ids(), strict=True))
    results = [PointResult.from_store(spec, p, stored[config_ids[p.configuration(pl.horizon)]],
                                      pl.estimates[p])
               for p in pl.points]
    rep = Reproduction(spec, out, pl, results, 0.0, ex.worker_count, sweep=report)
    rep.simulation_wall_s = time.perf_counter() - start
    rep.files["store"] = store_path
    return finish_figure(rep, start, lambda: spec.write_files(results, out, pl.seed),
                         (lambda: spec.draw(results, out, pl.runs)) if ex.figure else None,
                         lambda: _metadata(rep, quick))


def _chunk(chunk: int | None, resume: bool, out: Path) -> int | None:
    """Runs per cell: ``chunk`` if given; else, when resuming, the store's, so that more runs
    extend its cells; else ``None`` (:func:`default_chunk`)."""
    return stored_chunk(out) if chunk is None and resume else chunk


def _metadata(rep: Reproduction, quick: bool) -> dict[str, Any]:
    from privenv.problems.bai import INSTANCES as MEANS

    spec, pl = rep.spec, rep.plan
    deltas = sorted({p.delta for p in pl.points}, reverse=True)
    points = []
    for r in rep.results:
        p = r.point
        cell = SweepCell(ENV_ID, p.env_kwargs, p.agent, p.agent_kwargs, pl.horizon, pl.seed, 0,
                         pl.runs, 1)
        points.append({**r.row(spec), "agent_kwargs": p.agent_kwargs, "env_kwargs": p.env_kwargs,
                       "agent_params": r.agent_params, **r.privacy,
                       "lower_bounds": r.lower_bounds, "command": cell.command()})
    instances = {}
    for inst in dict.fromkeys(p.instance for p in pl.points):
        instances[inst] = {"means": list(MEANS[inst]), **characteristic_times(inst),
                           "non_private_bound": spec.lower_bounds(inst, None),
                           "regime_switch_epsilon": spec.switch(inst)}
    return {
        "figure": spec.id,
        "description": spec.description,
        "paper": ("Azize, Jourdan, Al Marjani, Basu, Differentially Private Best-Arm "
                  f"Identification, {spec.paper}"),
        "created": utc_now(),
        "argv": list(sys.argv),
        "quick": quick,
        "env": ENV_ID,
        "delta": deltas[0] if len(deltas) == 1 else deltas,
        "runs": pl.runs,
        "budget": pl.horizon,
        "seed": pl.seed,
        "chunk": pl.chunk,
        "thresholds": sorted({p.threshold for p in pl.points if p.threshold}),
        "confidence": CONFIDENCE,
        "seeding": "every point uses the same seed; run i owns SeedSequence(seed, spawn_key=(i,)) "
                   "(privenv.seeding), so agents and ε are compared on common random numbers",
        "instances": instances,
        "points": points,
        "cost_model": {"pull_seconds": PULL_SECONDS,
                       "factors": {f"{a} [{t}]" if t else a: {"bound": f, "rate": r}
                                   for (a, t), (f, r) in COST_FACTORS.items()},
                       "estimated_cpu_s": pl.total_seconds},
        **run_metadata(rep),
        "scale": {"full": asdict(spec.full), "quick": asdict(spec.quick)},
    }


# -- command line ---------------------------------------------------------------------------------


def _names(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"{what} must name at least one item, got {text!r}")
    return items


def _floats(text: str, what: str = "epsilons", allowed: str = "> 0") -> list[float]:
    out = []
    for x in _names(text, what):
        try:
            out.append(float(x))
        except ValueError:
            raise ValueError(f"{what} must be comma-separated numbers {allowed}, got {x!r}"
                             ) from None
    return out


def add_arguments(parser: argparse.ArgumentParser, spec: FigureSpec) -> None:
    """Options of ``privenv reproduce bai-local`` / ``bai-global``."""
    add_common_arguments(parser, spec.default_output)
    q, f = spec.quick, spec.full
    parser.add_argument("--instances", default=None, metavar="LIST",
                        help=f"comma-separated instances among {','.join(INSTANCES)} (default: "
                             f"all; {','.join(q.instances)} with --quick)")
    parser.add_argument("--epsilons", default=None, metavar="LIST",
                        help=f"comma-separated ε values (default: Appendix I's grid "
                             f"{','.join(f'{e:g}' for e in f.epsilons)}; "
                             f"{','.join(f'{e:g}' for e in q.epsilons)} with --quick)")
    parser.add_argument("--runs", type=int, default=None,
                        help=f"runs per point (default {f.runs}; {q.runs} with --quick)")
    parser.add_argument("--agents", default=",".join(spec.agents),
                        help=f"comma-separated agent names (default: {','.join(spec.agents)})")
    parser.add_argument("--threshold", choices=THRESHOLD_CHOICES, default=spec.threshold,
                        help="stopping thresholds of the Top Two agents: the δ-correct ones of "
                             "the paper's lemmas (theory), the authors' code (empirical, what "
                             "the paper's figures used) or both (the comparison is reported "
                             f"under both); default: {spec.threshold}")
    if len(f.deltas) > 1:
        parser.add_argument("--deltas", default=None, metavar="LIST",
                            help=f"comma-separated risks δ (default: "
                                 f"{','.join(f'{d:g}' for d in f.deltas)}; "
                                 f"{','.join(f'{d:g}' for d in q.deltas)} with --quick)")
    parser.add_argument("--horizon", type=int, default=None, metavar="BUDGET",
                        help="sample budget per run (default: the env's, 1e8); runs reaching it "
                             "are reported as non-stopping")
    parser.add_argument("--chunk", type=int, default=None, metavar="N",
                        help="runs per cell (default: all runs below 200, else two halves; "
                             "with --resume, the store's, so that more --runs extend it)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the points and the estimated cost, run nothing")


def main(args: argparse.Namespace, spec: FigureSpec) -> int:
    """Run from parsed command-line options; prints the cost estimate and the summary table."""
    kwargs = dict(
        quick=args.quick,
        instances=None if args.instances is None else _names(args.instances, "instances"),
        epsilons=None if args.epsilons is None else _floats(args.epsilons),
        runs=args.runs, agents=_names(args.agents, "agents"), threshold=args.threshold,
        horizon=args.horizon, chunk=args.chunk, seed=args.seed,
        deltas=(None if getattr(args, "deltas", None) is None
                else _floats(args.deltas, "deltas", "in (0, 1)")),
    )
    if args.dry_run:
        kwargs["chunk"] = _chunk(args.chunk, args.resume, output_dir(  # as a run would
            args.output, spec.default_output, args.quick))
        pl = plan(spec, **kwargs)
        print(pl.describe_cost(args.workers or default_workers()))
        return 0
    try:
        rep = reproduce(spec, args.output, log=print, execution=Execution.from_args(args),
                        **kwargs)
    except RuntimeError as e:
        print(f"privenv reproduce {spec.id}: {e}", file=sys.stderr)
        return 1
    pl = rep.plan
    deltas = ", ".join(f"{d:g}" for d in sorted({p.delta for p in pl.points}, reverse=True))
    print(f"{spec.id}: {len(pl.points)} points, {pl.runs} runs each, δ = {deltas}, budget "
          f"{pl.horizon:.3g}, {rep.sweep.backend if rep.sweep else ''}, "
          f"wall time {rep.wall_s:.1f} s "
          f"(estimated {duration_text(pl.total_seconds)} CPU)")
    print(f"stopping time τ (mean ± sd over runs; non-stopping runs count as the budget), the "
          f"lower bound × log(1/(2.4δ)), wrong recommendations with their one-sided "
          f"{100 * CONFIDENCE:g} % Clopper–Pearson upper bound:")
    print(rep.table())
    verdicts = [r.error_verdict() for r in rep.results]  # (shown, consistent) per point
    bad = [r for r, (_, consistent) in zip(rep.results, verdicts, strict=True) if not consistent]
    below = [r for r in rep.results if r.tau_mean < r.lower_bound]

    def where(r: PointResult) -> str:
        return f"{r.point.instance} {r.point.label} ε={r.point.epsilon} δ={r.point.delta:g}"

    # few runs are always consistent with error ≤ δ; showing it takes runs_to_show(δ) runs
    shown = sum(s for s, _ in verdicts)
    need = runs_to_show(min(r.point.delta for r in rep.results))
    print(f"error ≤ δ consistent at every point: {'yes' if not bad else 'NO'}"
          + "".join(f"\n  rejected: {where(r)}" for r in bad)
          + f"\nerror ≤ δ shown (upper bound ≤ δ) at {shown} of {len(rep.results)} points"
          + ("" if shown == len(rep.results) else
             f" (with no wrong recommendation that takes ≥ {need} runs per point)"))
    print(f"every mean τ above its lower bound: {'yes' if not below else 'NO'}"
          + "".join(f"\n  below: {where(r)}" for r in below))
    summary = spec.summary(rep.results)
    if summary:
        print(summary)
    for name, path in rep.files.items():
        print(f"{name:>9}: {path}")
    return 0


class EntryPoints(NamedTuple):
    """The command-line and Python entry points of one figure's module (the interface of
    :mod:`privenv.reproduce`), bound to its :class:`FigureSpec`."""

    add_arguments: Callable[[argparse.ArgumentParser], None]
    main: Callable[[argparse.Namespace], int]
    reproduce: Callable[..., Reproduction]


def entry_points(spec: FigureSpec) -> EntryPoints:
    """``add_arguments``, ``main`` and ``reproduce`` of the module of figure ``spec`` (e.g.
    :mod:`~privenv.reproduce.bai_global`: ``add_arguments, main, reproduce =
    entry_points(GLOBAL)``)."""

    def add(parser: argparse.ArgumentParser) -> None:
        add_arguments(parser, spec)

    def run(args: argparse.Namespace) -> int:
        return main(args, spec)

    def rep(output: str | Path | None = None, **kwargs: Any) -> Reproduction:
        return reproduce(spec, output, **kwargs)

    add.__doc__ = f"Options of ``privenv reproduce {spec.id}``."
    run.__doc__ = "Run from parsed command-line options."
    rep.__doc__ = f":func:`privenv.reproduce.bai.reproduce` for ``{spec.id}``."
    return EntryPoints(add, run, rep)


__all__ = ["CONFIDENCE", "DELTA", "FIGURES", "GLOBAL", "GLOBAL_EPSILONS", "INSTANCES",
           "LOCAL", "LOCAL_EPSILONS", "EntryPoints", "FigureSpec", "Plan", "Point", "PointResult",
           "Reproduction", "Scale", "add_arguments", "default_chunk", "entry_points",
           "estimated_seconds", "estimated_steps", "is_private", "main", "make_points", "plan",
           "reproduce", "write_csvs"]
