"""Merge the ``points.csv`` of a ``privenv reproduce bai-local`` / ``bai-global`` store into a
points CSV of docs/results (``bai-local-grid-points.csv``, ``bai-global-grid-points.csv``), whose
points come from several stores and run counts.

The CSV keeps the columns it has (``bai-global-grid-points.csv`` a subset of the store's); a
point is (figure, instance, agent, threshold, ε, δ), those of them the CSV has. For each point of
the store:

* not in the CSV: added;
* in the CSV with fewer runs: replaced (a point raised from 25 to 1000 runs);
* in the CSV with as many runs: kept, and every column but the times (``wall_s``,
  ``estimated_s``) the CSV has must be the store's: same seed, same numbers, whatever store ran it. A
  difference is printed and the script exits with 1, writing nothing;
* in the CSV with more runs: kept.

Replacing a private agent's point replaces its ``tau_over_ttucb`` too, which the store computed
against its own TTUCB runs (the same runs as the CSV's where their counts agree).

    python docs/results/measure/merge_bai_points.py docs/results/bai-local-grid-points.csv \\
        results/bai-local-005/points.csv
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

TIMES = ("wall_s", "estimated_s")
POINT = ("figure", "instance", "agent", "threshold", "epsilon", "delta")
NUMBERS = ("epsilon", "delta")  # '0.1' and '0.10' are one point


def key(row: dict[str, str], fields: list[str]) -> tuple[str, ...]:
    """The point a row measures, from the columns of ``POINT`` among ``fields``."""
    return tuple(repr(float(row[c])) if c in NUMBERS and row[c] else row[c]
                 for c in POINT if c in fields)


def read(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def merge(fields: list[str], grid: list[dict[str, str]], store: list[dict[str, str]],
          ) -> tuple[list[dict[str, str]], list[str]]:
    """The merged rows, in the CSV's ``fields`` (the CSV's order, new points at the end), and
    one line per change or disagreement; a disagreement's line starts with ``differs``."""
    rows = {key(r, fields): r for r in grid}
    named = [c != "figure" for c in POINT if c in fields]
    lines: list[str] = []
    for full in store:
        new = {c: full[c] for c in fields}
        k = key(new, fields)
        old = rows.get(k)
        name = " ".join(x for x, shown in zip(k, named, strict=True) if x and shown)
        if old is None:
            lines.append(f"added    {name}: {full['runs']} runs, mean τ {full['tau_mean']}")
            rows[k] = new
        elif int(new["runs"]) > int(old["runs"]):
            lines.append(f"replaced {name}: {old['runs']} -> {full['runs']} runs, mean τ "
                         f"{old.get('tau_mean')} -> {full['tau_mean']}, at the budget "
                         f"{old.get('non_stopping')} -> {full['non_stopping']}")
            rows[k] = new
        elif int(new["runs"]) == int(old["runs"]):
            diff = [c for c in new if c not in TIMES and new[c] != old[c]]
            if diff:
                lines.append(f"differs  {name}: " + ", ".join(
                    f"{c} {old[c]!r} (CSV) against {new[c]!r} (store)" for c in diff))
    return list(rows.values()), lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: merge_bai_points.py GRID_CSV STORE_POINTS_CSV", file=sys.stderr)
        return 2
    grid_path, store_path = Path(argv[0]), Path(argv[1])
    for path in (grid_path, store_path):
        if not path.is_file():
            print(f"merge_bai_points.py: no such file: {path}", file=sys.stderr)
            return 2
    fields, grid = read(grid_path)
    store_fields, store = read(store_path)
    missing = [c for c in fields if c not in store_fields]
    if missing or "runs" not in fields:
        print(f"{store_path} lacks the CSV's columns {missing or ['runs']}", file=sys.stderr)
        return 1
    rows, lines = merge(fields, grid, store)
    print("\n".join(lines) or "nothing to change")
    if any(line.startswith("differs") for line in lines):
        print(f"{grid_path} left as it was", file=sys.stderr)
        return 1
    partial = grid_path.with_name(grid_path.name + ".partial")
    with partial.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    partial.replace(grid_path)  # the CSV is the old one or the new one, never half of each
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
