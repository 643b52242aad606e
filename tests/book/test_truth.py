"""Prose that cannot drift (issue 24): chapter mentions are {ref} links, sources are {cite} keys of one bibliography
with well-formed identifiers, and every glued name in the prose is glued by a cell of the same chapter."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(ROOT.glob("chapters/*/*.md")) + [ROOT / "book" / "how-to-run.md", ROOT / "index.md"]
PAGES = [p for p in PAGES if not p.name.endswith(".zh.md")] + sorted(ROOT.glob("chapters/*/*.zh.md"))
MASK = re.compile(r"`[^`]*`|\]\([^)]*\)|https?://\S+|\$[^$\n]+\$")
PLAIN = re.compile(r"\b[Cc]hapters?\s+\d{1,2}\b|第\s*\d{1,2}\s*章")


def prose(text: str) -> str:
    """The page with code cells, fenced blocks, front matter, inline code, roles, links and maths blanked out."""
    out, fence, lines = [], None, text.split("\n")
    front = bool(lines) and lines[0].strip() == "---"
    for i, line in enumerate(lines):
        s = line.strip()
        if front:
            out.append("")
            front = not (i > 0 and s == "---")
            continue
        m = re.match(r"^(`{3,}|~{3,})", s)
        if m:
            fence = m.group(1) if fence is None else (None if s.strip("`~") == "" else fence)
            out.append("")
            continue
        out.append("" if fence else line)
    return MASK.sub(" ", "\n".join(out))          # inline code may span lines: mask on the joined text


def plain_mentions(text: str) -> list[str]:
    return [m.group(0) for m in PLAIN.finditer(prose(text))]


def test_the_scanner_sees_prose_only():
    page = ("---\nx: chapter 9\n---\nSee chapter 3 and {ref}`chapter 4 <ch04>`.\n```{code-cell}\n# chapter 5\n```\n"
            "`chapter 6`, [chapter 7](https://x/chapter 8) and 第 9 章\n")
    assert plain_mentions(page) == ["chapter 3", "chapter 7", "第 9 章"]   # link text is prose


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_plain_text_chapter_numbers(page):
    found = plain_mentions(page.read_text(encoding="utf-8"))
    assert not found, (f"{page.relative_to(ROOT)}: write {{ref}}`chapter N <chNN>` instead of a plain number "
                       f"(it is checked and links): {found[:5]}")


def test_ref_text_names_its_target():
    bad = []
    for page in PAGES:
        for m in re.finditer(r"\{ref\}`(?:[Cc]hapters?\s+|第\s*)?(\d{1,2})(?:\s*章)? <ch(\d\d)>`", page.read_text()):
            if int(m.group(1)) != int(m.group(2)):
                bad.append(f"{page.relative_to(ROOT)}: {m.group(0)}")
    assert not bad, bad


def _bib() -> dict[str, dict[str, str]]:
    from pybtex.database import parse_file

    db = parse_file(str(ROOT / "references.bib"))
    return {k: {f.lower(): v for f, v in e.fields.items()} for k, e in db.entries.items()}


ARXIV = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")
DOI = re.compile(r"^10\.\d{4,9}/\S+$")


def test_bibliography_identifiers_are_well_formed():
    bad = []
    for key, f in _bib().items():
        if not f.get("url", "").startswith(("https://", "http://")):
            bad.append(f"{key}: no url")
        if "eprint" in f and not ARXIV.match(f["eprint"]):
            bad.append(f"{key}: eprint {f['eprint']!r} is not an arXiv identifier")
        if "doi" in f and not DOI.match(f["doi"]):
            bad.append(f"{key}: doi {f['doi']!r} is not a DOI (10.NNNN/...)")
        if "eprint" in f and f.get("archiveprefix", "arXiv").lower() != "arxiv":
            bad.append(f"{key}: eprint without archivePrefix = {{arXiv}}")
    assert not bad, bad


def test_every_cite_key_resolves():
    keys = set(_bib())
    cited = {}
    for page in PAGES:
        for m in re.finditer(r"\{cite(?::[a-z]+)?\}`([^`]+)`", page.read_text()):
            for k in m.group(1).split(","):
                cited.setdefault(k.strip(), page.relative_to(ROOT))
    missing = {k: str(p) for k, p in cited.items() if k not in keys}
    assert not missing, f"cited but not in references.bib: {missing}"


def test_every_glued_name_is_glued_in_its_chapter():
    bad = []
    for page in PAGES:
        text = page.read_text()
        used = {m.group(1) for m in re.finditer(r"\{glue(?::[a-z]+)?\}`([\w-]+)", text)}
        made = set(re.findall(r"glue\(\s*[\"']([\w-]+)[\"']", text))
        bad += [f"{page.relative_to(ROOT)}: {n}" for n in sorted(used - made)]
    assert not bad, f"glued in prose but no cell glues it: {bad}"


def test_bibliography_has_no_tex_maths():
    """A `$` in an entry reaches the bibliography page as raw TeX (the browser check fails on it): write USD, λ."""
    bad = [f"{k}: {f}" for k, e in _bib().items() for f, v in e.items() if "$" in v]
    assert not bad, bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_chapter_numbers_in_code_comments_either(page):
    """Comments in code cells cannot link, so they name the chapter by topic ("the memory chapter"), which cannot go
    stale when chapters are renumbered."""
    text = re.sub(r"\{ref\}`[^`]*`|\]\([^)]*\)|https?://\S+", " ", page.read_text(encoding="utf-8"))
    found = [line.strip() for line in text.split("\n") if re.search(r"#.*\b[Cc]hapters?\s+\d", line)]
    assert not found, f"{page.relative_to(ROOT)}: {found[:3]}"


def test_reference_measurements_page_lists_every_record():
    """The appendix prints every recorded document with its date and commands; a record added or re-recorded without
    re-executing the page leaves its stored table stale (nbval then fails on it with a wall of HTML): say so plainly."""
    import json

    from helpers.core import measurements

    nb = json.loads((ROOT / "book" / "reference-measurements.ipynb").read_text(encoding="utf-8"))
    stored = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                       for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []))
    fix = "re-execute it: python scripts/notebooks.py execute book/reference-measurements.md"
    missing = [n for n in measurements.available() if f"{n} ←" not in stored]
    assert not missing, f"book/reference-measurements.ipynb does not list {missing}; {fix}"
    dates = {n: measurements.load(n)["provenance"]["date_utc"][:16].replace("T", " ") for n in measurements.available()}
    stale = [n for n, d in dates.items() if f"{n} ←" in stored and d not in stored]
    assert not stale, f"book/reference-measurements.ipynb shows an older run of {stale}; {fix}"
    gone = sorted(set(re.findall(r"^(\w+/\w+) ←", stored, re.M)) - set(measurements.available()))
    assert not gone, f"book/reference-measurements.ipynb lists {gone}, no longer under assets/measurements; {fix}"
