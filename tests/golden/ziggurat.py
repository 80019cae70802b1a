"""Write ``privenv/_ziggurat.py``: numpy's ziggurat tables, read from the installed numpy.

numpy draws its standard normals and exponentials (``Generator.standard_normal``,
``standard_exponential``, and through them ``standard_t``, ``standard_gamma``, ``pareto``) with
the ziggurat method of Marsaglia and Tsang (2000) on 256 layers, whose tables are the constants
of ``numpy/random/src/distributions/ziggurat_constants.h`` (BSD-3-Clause, © NumPy Developers).
They cannot be recomputed bit for bit from the method's definition (the published area and
radius are rounded, and the tables were computed from unrounded ones), so this script reads
them from the compiled ``numpy.random._generator`` module, where they are stored as they are
in the header, each table located by values that pin it down: ``ki_double`` starts with
``0x000EF33D8025EF6A, 0``; ``wi_double`` ends with r/2⁵² and ``we_double`` with r_exp/2⁵³;
``fi_double`` and ``fe_double`` start at 1 and decrease to e^{−r²/2} and e^{−r_exp};
``ke_double`` has a 0 at index 1. ``tests/test_seeding.py`` then checks the compiled draws
against numpy's, value for value.

Run from the repository root: ``python tests/golden/ziggurat.py``.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import numpy.random._generator as generator

NOR_R = 3.6541528853610088  # ziggurat_nor_r
NOR_INV_R = 0.27366123732975828  # ziggurat_nor_inv_r = 1/r
EXP_R = 7.6971174701310497  # ziggurat_exp_r
OUT = Path(__file__).resolve().parents[2] / "privenv" / "_ziggurat.py"


def _find(data: bytes, pattern: bytes) -> list[int]:
    out, i = [], data.find(pattern)
    while i != -1:
        out.append(i)
        i = data.find(pattern, i + 1)
    return out


def _table(data: bytes, offset: int, dtype: str) -> np.ndarray:
    return np.frombuffer(data[offset: offset + 256 * 8], dtype=dtype).copy()


def _one(found: list[int], name: str) -> int:
    if len(found) != 1:
        raise RuntimeError(f"{name}: {len(found)} candidates in {generator.__file__}")
    return found[0]


def _decreasing_from_one(data: bytes, last: float) -> np.ndarray:
    """The table that starts at 1.0, decreases, and ends within 1e-12 of ``last``."""
    hits = []
    for offset in _find(data, struct.pack("<d", 1.0)):
        t = _table(data, offset, "<f8")
        if t.size == 256 and np.all(np.diff(t) < 0) and t[-1] > 0 and math.isclose(
                t[-1], last, rel_tol=1e-12):
            hits.append(offset)
    return _table(data, _one(hits, f"decreasing table ending at {last}"), "<f8")


def tables() -> dict[str, np.ndarray]:
    data = Path(generator.__file__).read_bytes()
    ki = _table(data, _one(_find(data, struct.pack("<QQ", 0x000EF33D8025EF6A, 0)), "ki"), "<u8")
    wi_end = _one(_find(data, struct.pack("<d", NOR_R / 2.0**52)), "wi")
    wi = _table(data, wi_end - 255 * 8, "<f8")
    we_end = _one(_find(data, struct.pack("<d", EXP_R / 2.0**53)), "we")
    we = _table(data, we_end - 255 * 8, "<f8")
    ke = _table(data, we_end + 8, "<u8")  # stored right after we_double
    fi = _decreasing_from_one(data, math.exp(-0.5 * NOR_R * NOR_R))
    fe = _decreasing_from_one(data, math.exp(-EXP_R))
    assert ke[1] == 0 and np.all(ke[2:] > 0) and np.all(ke < 2**53), "ke_double"
    assert ki[1] == 0 and np.all(ki[2:] > 0) and np.all(ki < 2**52), "ki_double"
    assert np.all(np.diff(wi[1:]) > 0) and np.all(np.diff(we[1:]) > 0), "wi/we_double"
    return {"KI": ki, "WI": wi, "FI": fi, "KE": ke, "WE": we, "FE": fe}


def _lines(values: np.ndarray, per_line: int, fmt: str) -> str:
    items = [fmt.format(v) for v in values.tolist()]
    rows = [", ".join(items[i: i + per_line]) for i in range(0, len(items), per_line)]
    return "".join(f"    {row},\n" for row in rows)


def main() -> None:
    t = tables()
    text = [
        '"""numpy\'s ziggurat tables for its double-precision standard normal and exponential\n'
        "(``numpy/random/src/distributions/ziggurat_constants.h``, BSD-3-Clause, © NumPy "
        "Developers;\nMarsaglia and Tsang 2000, 256 layers), read from numpy "
        f"{np.__version__}'s compiled generator by\n``tests/golden/ziggurat.py`` (which "
        "says how). Used by :mod:`privenv._pcg64`.\nDo not edit: regenerate.\n"
        '"""\n\n',
        "import numpy as np\n\n",
        f"NOR_R = {NOR_R!r}\nNOR_INV_R = {NOR_INV_R!r}\nEXP_R = {EXP_R!r}\n\n",
    ]
    doc = {"KI": "ki_double", "WI": "wi_double", "FI": "fi_double", "KE": "ke_double",
           "WE": "we_double", "FE": "fe_double"}
    for name, values in t.items():
        if values.dtype.kind == "u":
            body, dtype = _lines(values, 4, "0x{:016X}"), "np.uint64"
        else:
            body, dtype = _lines(values, 3, "{!r}"), "np.float64"
        text.append(f"#: {doc[name]}\n{name} = np.array([\n{body}], dtype={dtype})\n"
                    f"{name}.flags.writeable = False\n\n")
    OUT.write_text("".join(text).rstrip("\n") + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
