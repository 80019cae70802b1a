"""docs/results/claims.md, the ledger of the four papers' claims: every line is complete (claim,
where it is tested, scale, verdict, link), its link reaches an existing results page and heading,
its verdict is one of the ledger's words, every number of its verdict is on the page it links to,
and the results index links to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
CLAIMS = DOCS / "results" / "claims.md"
#: the verdict words of the ledger (its legend says what each means)
VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "not reproducible",
            "finding", "untested")
LINK = re.compile(r"\[[^\]]+\]\(([^)#\s]+\.md)(?:#([^)\s]+))?\)")
#: a number as the pages write it (README's headline table is checked the same way)
NUMBER = re.compile(r"10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+|\d+(?: \d{3})*(?:\.\d+)?(?:–\d+(?:\.\d+)?)?"
                    r"(?:·10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)?")


def _slug(title: str) -> str:
    """MyST's heading anchor (``myst_heading_anchors``, its GitHub-style slug): lower case, spaces
    to hyphens, every character but word characters, CJK ideographs, hyphens dropped."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.lower().replace(" ", "-"))


def _anchors(page: Path) -> set[str]:
    return {_slug(m.group(2)) for m in re.finditer(r"^(#{1,3}) (.+)$", page.read_text(), re.M)}


def _rows() -> list[list[str]]:
    rows = []
    for line in CLAIMS.read_text().splitlines():
        if line.startswith("|") and not re.match(r"^\|[\s|:-]+\|$", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] != "#":  # a header row
                rows.append(cells)
    return rows


def test_every_claim_has_a_complete_line():
    rows = _rows()
    assert len(rows) >= 40  # the four papers' claims (the ledger's count is in its text)
    ids = [r[0] for r in rows]
    assert len(set(ids)) == len(ids), "claim ids repeat"
    # the four papers (1–4) and the zoo's three comparisons (D: dp-mab-regret, L: ldp-mab-regret,
    # O: dp-bai-optimal)
    assert {"1", "2", "3", "4"} <= {i.split(".")[0] for i in ids} <= {
        "1", "2", "3", "4", "D", "L", "O"}
    for row in rows:
        assert len(row) == 6, row
        ident, claim, where, scale, verdict, link = row
        assert all(len(c) > 2 for c in (claim, where, scale, link)), row
        # a verdict word first, then its qualifier ("… with the proofs' constants: …")
        assert any(re.match(rf"\**{v}\b", verdict) for v in VERDICTS), (ident, verdict)


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r[0])
def test_each_link_reaches_a_page_and_heading(row):
    links = LINK.findall(row[5])
    assert links, f"claim {row[0]} has no link to a results page"
    for target, anchor in links:
        page = (CLAIMS.parent / target).resolve()
        assert page.is_file(), f"claim {row[0]}: {target} does not exist"
        if anchor:
            assert anchor in _anchors(page), f"claim {row[0]}: no heading #{anchor} in {target}"


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r[0])
def test_each_verdict_number_is_on_its_page(row):
    """A verdict's numbers are the linked pages' measurements, so the ledger cannot drift from
    the pages that hold them (and from the commands that produced them)."""
    text = " ".join((CLAIMS.parent / target).read_text() for target, _ in LINK.findall(row[5]))
    absent = [n for n in NUMBER.findall(row[4]) if n not in text]
    assert not absent, f"claim {row[0]}: {absent} not on its page"


def test_the_index_links_the_ledger():
    assert "(claims.md)" in (DOCS / "results" / "index.md").read_text()


def test_slug_matches_myst_on_the_pages_own_links():
    """The anchors the results pages already link to (checked by the strict docs build) are
    found by this test's slug: the two agree."""
    bai = DOCS / "results" / "bai.md"
    for anchor in re.findall(r"\]\(#([^)]+)\)", bai.read_text()):
        assert anchor in _anchors(bai)
