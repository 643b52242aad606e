"""The Chinese edition (中文版): ``name.zh.md`` beside each ``name.md``, the same code cells, prose in Chinese.

    python scripts/zh.py blocks  chapters/18-llm-training          # the English prose blocks, numbered, to translate
    python scripts/zh.py assemble chapters/18-llm-training FILE    # FILE: translated blocks → name.zh.md (stamped)
    python scripts/zh.py stamp   FILE.zh.md [--sections 3,5 | --all]   # record the English sections' hashes
    python scripts/zh.py sync-code FILE.zh.md                      # copy the English code cells in (code is verbatim)
    python scripts/zh.py check   [--require-all] [PATH ...]        # fails naming chapter + section that drifted
    python scripts/zh.py todo    [PATH ...]                        # what to retranslate, one line per section
    python scripts/zh.py notebooks [PATH ...]                      # name.zh.md + executed name.ipynb → name.zh.ipynb
    python scripts/zh.py build   [--no-strict]                     # the Chinese book → _build/html/zh (after the English)

A **block** is the markdown between two code cells (the front matter and the code cells are never translated).
A **section** starts at a heading outside any fence. Under every Chinese heading a MyST comment
``% sync: <hash>`` records the hash of the English section it translates (``section_hash``); when the English
section changes and the Chinese one is not re-stamped, ``check`` fails naming both. Code cells must be identical.

One execution, two languages: ``name.zh.ipynb`` is *generated* (``notebooks``), never executed: its markdown cells
come from ``name.zh.md``, its code cells (source, outputs, tags) from the executed English ``name.ipynb``, each
tagged ``nbval-skip`` as well (nbval checks the English notebook only; ``scripts/notebooks.py`` ignores ``.zh.*``).
``check`` fails when a stored ``.zh.ipynb`` is not what ``notebooks`` would write now.

The Chinese book (``build``) is built from the same source tree with ``language = zh_CN`` and a table of contents
made from ``_toc.yml`` and the pages that have a ``.zh.md`` (plus ``book/glossary.zh.md``, which
``scripts/glossary.py`` writes); ``book/_ext/zhlang.py`` adds the language switch and links the chapters not yet
translated to their English pages (labelled 英文). Only translated pages are read, so the build stays short.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "book" / "_ext"))
from zhlang import zh_caption  # noqa: E402  (one copy: the extension's contents directive uses it too)

ROOT = Path(__file__).resolve().parent.parent
ZH_BUILD = ROOT / "_build" / "zh"          # the Chinese build (html, doctrees, toc) …
ZH_HTML = ROOT / "_build" / "html" / "zh"  # … copied here, beside the English book
GENERATED = {"book/glossary"}             # pages with a generated Chinese edition (scripts/glossary.py), not translated
TITLE = "算力集群技术 · GPU & AI Compute-Cluster Engineering（中文版）"
FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})")
CODE_CELL = re.compile(r"^(`{3,})\{code-cell\}")
HEADING = re.compile(r"^(#{1,6})\s+\S")
SYNC = re.compile(r"^% sync: (\S+)\s*$")
BLOCK_MARK = re.compile(r"^<<<block (\d+)>>>\s*$")


@dataclass(frozen=True)
class Parsed:
    front: list[str]                     # the front matter lines (--- … ---), verbatim
    parts: list[tuple[str, list[str]]]   # ("md", lines) and ("code", lines) in order, md and code alternating


def parse(text: str) -> Parsed:
    lines = text.split("\n")
    front: list[str] = []
    i = 0
    if lines and lines[0].strip() == "---":
        j = lines.index("---", 1)
        front, i = lines[: j + 1], j + 1
    parts: list[tuple[str, list[str]]] = [("md", [])]
    while i < len(lines):
        m = CODE_CELL.match(lines[i])
        if m:
            fence, j = m.group(1), i + 1
            while j < len(lines) and lines[j].rstrip() != fence:
                j += 1
            parts.append(("code", lines[i: j + 1]))
            parts.append(("md", []))
            i = j + 1
            continue
        parts[-1][1].append(lines[i])
        i += 1
    return Parsed(front, parts)


def md_blocks(p: Parsed) -> list[list[str]]:
    return [ls for kind, ls in p.parts if kind == "md"]


def code_cells(p: Parsed) -> list[str]:
    return ["\n".join(ls) for kind, ls in p.parts if kind == "code"]


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading line, the section's lines) for every heading outside a fence (code cells included in the lines)."""
    lines = text.split("\n")
    heads = _heading_lines(lines)
    return [(lines[h], lines[h + 1: nxt]) for h, nxt in zip(heads, heads[1:] + [len(lines)])]


def section_hash(heading: str, lines: list[str]) -> str:
    body = [ln.rstrip() for ln in lines if not SYNC.match(ln)]
    while body and not body[0]:
        body.pop(0)
    while body and not body[-1]:
        body.pop()
    return hashlib.sha256("\n".join([heading.rstrip(), *body]).encode()).hexdigest()[:10]


def zh_path(en: Path) -> Path:
    return en.with_name(en.stem + ".zh.md")


def en_path(zh: Path) -> Path:
    return zh.with_name(zh.name[: -len(".zh.md")] + ".md")


def toc_entries() -> list[str]:
    """Every page of _toc.yml in book order (root first), as written there (``….ipynb`` or without suffix)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *(c["file"] for part in toc.get("parts", []) for c in part["chapters"])]


def entry_source(entry: str) -> Path:
    stem = entry[: -len(".ipynb")] if entry.endswith(".ipynb") else entry.removesuffix(".md")
    return ROOT / f"{stem}.md"


def chapter_sources(paths: list[str]) -> list[Path]:
    """English sources: every page of _toc.yml (chapters, appendices, index.md) but the generated glossary."""
    if paths:
        out = []
        for p in map(Path, paths):
            p = p if p.is_absolute() else ROOT / p
            if p.is_dir():
                out += [f for f in sorted(p.glob("*.md")) if not f.name.endswith(".zh.md")]
            else:
                out.append(en_path(p) if p.name.endswith(".zh.md") else p.with_suffix(".md"))
        return out
    return [entry_source(e) for e in toc_entries() if e.removesuffix(".ipynb") not in GENERATED]


def zh_ipynb(en: Path) -> Path:
    return en.with_name(en.stem + ".zh.ipynb")


def zh_notebook(en: Path) -> str | None:
    """The text of ``name.zh.ipynb``: markdown cells from ``name.zh.md``, code cells (source, outputs, tags) from the
    executed English ``name.ipynb``, plus the tag nbval-skip; None when the English page is not a notebook.
    Raises ValueError when the two do not have the same cells (the check says which)."""
    import jupytext
    import nbformat

    ipynb = en.with_suffix(".ipynb")
    if not ipynb.exists():
        return None
    zh, nb = jupytext.read(zh_path(en)), nbformat.read(ipynb, as_version=4)
    kinds = [c.cell_type for c in zh.cells], [c.cell_type for c in nb.cells]
    if kinds[0] != kinds[1]:
        raise ValueError(f"{len(kinds[0])} cells, {ipynb.name} has {len(kinds[1])} (or their kinds differ): keep the "
                         "English `+++` lines and code cells where they are")
    cells = []
    for k, (z, e) in enumerate(zip(zh.cells, nb.cells)):
        if e.cell_type == "code":
            if z.source != e.source:
                raise ValueError(f"cell {k} differs from {ipynb.name} (run `make notebooks` for the English first?)")
            c = copy.deepcopy(e)
            tags = c.metadata.setdefault("tags", [])
            if "nbval-skip" not in tags:
                tags.append("nbval-skip")
        else:
            c = copy.deepcopy(z)
            c.pop("id", None)
        cells.append(c)
    out = copy.deepcopy(nb)
    out.cells = cells
    text = jupytext.writes(out, fmt="ipynb")
    return text if text.endswith("\n") else text + "\n"


def write_notebooks(ens: list[Path]) -> list[Path]:
    """(Re)write ``name.zh.ipynb`` for every English page in ``ens`` that has a Chinese edition; the changed ones."""
    changed = []
    for en in ens:
        if not zh_path(en).exists():
            continue
        try:
            text = zh_notebook(en)
        except ValueError as e:
            raise SystemExit(f"{zh_path(en).relative_to(ROOT)}: {e}") from e
        dest = zh_ipynb(en)
        if text is not None and (not dest.exists() or dest.read_text(encoding="utf-8") != text):
            dest.write_text(text, encoding="utf-8")
            changed.append(dest)
    return changed


def zh_entry(entry: str) -> str:
    """A _toc.yml entry's Chinese counterpart: chapters/x/name.ipynb → chapters/x/name.zh.ipynb, book/p → book/p.zh."""
    return entry[: -len(".ipynb")] + ".zh.ipynb" if entry.endswith(".ipynb") else entry.removesuffix(".md") + ".zh"


def zh_toc() -> dict:
    """The Chinese table of contents: _toc.yml's parts, with only the pages that have a Chinese edition."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    if not zh_path(entry_source(toc["root"])).exists():
        raise SystemExit(f"{zh_path(entry_source(toc['root'])).relative_to(ROOT)} is missing: the Chinese landing page")
    parts = []
    for part in toc.get("parts", []):
        files = [{"file": zh_entry(c["file"])} for c in part["chapters"] if zh_path(entry_source(c["file"])).exists()]
        if files:
            parts.append({"caption": zh_caption(part.get("caption", "")), "chapters": files})
    return {"format": toc.get("format", "jb-book"), "root": zh_entry(toc["root"]), "parts": parts}


def build(strict: bool = True) -> int:
    """The Chinese book into _build/zh/html, then copied to _build/html/zh (the English book must be built first:
    untranslated pages link to it through its objects.inv)."""
    from jupyter_book.sphinx import build_sphinx

    if not (ROOT / "_build" / "html" / "objects.inv").exists():
        raise SystemExit("_build/html/objects.inv is missing: build the English book first (make book)")
    t0 = time.perf_counter()
    for nb in write_notebooks(chapter_sources([])):
        print(f"zh: wrote {nb.relative_to(ROOT)}")
    ZH_BUILD.mkdir(parents=True, exist_ok=True)
    toc = ZH_BUILD / "_toc.yml"
    toc.write_text(yaml.safe_dump(zh_toc(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    rc = build_sphinx(ROOT, ZH_BUILD / "html", doctreedir=ZH_BUILD / ".doctrees", path_config=str(ROOT / "_config.yml"),
                      noconfig=True, use_external_toc=True, builder="html", warningiserror=strict, keep_going=True,
                      confoverrides={"external_toc_path": toc.as_posix(), "latex_individualpages": False,
                                     "nitpicky": True, "language": "zh_CN", "html_title": TITLE})
    if rc:
        print(f"zh: the Chinese build failed ({rc})", file=sys.stderr)
        return 1
    # Sphinx copies static files only when some page was rewritten: bring the book's own (the font subset that
    # `make static` just remade, book-lang.js …) up to date in any case
    import filecmp
    for folder in (ROOT / "_build" / "vendor", ROOT / "assets" / "css", ROOT / "assets" / "js"):
        for f in (f for f in folder.rglob("*") if f.is_file()):
            dest = ZH_BUILD / "html" / "_static" / f.relative_to(folder)
            if not dest.exists() or not filecmp.cmp(f, dest, shallow=False):
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
    if ZH_HTML.exists():
        shutil.rmtree(ZH_HTML)
    shutil.copytree(ZH_BUILD / "html", ZH_HTML)
    print(f"zh: {ZH_HTML.relative_to(ROOT)}/index.html ({time.perf_counter() - t0:.0f} s)")
    return 0


def stamp(zh: Path, which: set[int] | None) -> int:
    """Write ``% sync: hash`` under heading k of the Chinese file for k in ``which`` (None: every '?' or missing)."""
    en_secs = sections(en_path(zh).read_text(encoding="utf-8"))
    lines = zh.read_text(encoding="utf-8").split("\n")
    heads = _heading_lines(lines)
    if len(heads) != len(en_secs):
        raise SystemExit(f"{zh.relative_to(ROOT)}: {len(heads)} headings, the English has {len(en_secs)}: "
                         "translate heading for heading (same count and order) before stamping")
    done = 0
    for k in reversed(range(len(heads))):
        i = heads[k]
        has = i + 1 < len(lines) and SYNC.match(lines[i + 1])
        if which is None and has and SYNC.match(lines[i + 1]).group(1) != "?":
            continue
        if which is not None and k not in which:
            continue
        h = section_hash(*en_secs[k])
        if has:
            lines[i + 1] = f"% sync: {h}"
        else:
            lines.insert(i + 1, f"% sync: {h}")
        done += 1
    zh.write_text("\n".join(lines), encoding="utf-8")
    return done


def sync_code(zh: Path) -> int:
    """Copy the English code cells and front matter into the Chinese file. Cells added, removed or changed in the
    English are aligned by their text (difflib): each Chinese prose block stays after the code cell it followed; a
    prose block the English gained comes in English (the number returned; ``check`` then names its section as stale),
    one that lost its code cell is joined to the block before it."""
    import difflib

    pe, pz = parse(en_path(zh).read_text(encoding="utf-8")), parse(zh.read_text(encoding="utf-8"))
    ce, cz = code_cells(pe), code_cells(pz)
    en_md, zh_md = md_blocks(pe), md_blocks(pz)
    after: dict[int, int] = {0: 0}                 # Chinese prose block t → English prose block k
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, cz, ce, autojunk=False).get_opcodes():
        if tag in ("equal", "replace"):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                after[i + 1] = j + 1
    new: dict[int, list[str]] = {}
    last = 0
    for t, block in enumerate(zh_md):
        k = after.get(t)
        if k is None or k < last:                  # its code cell is gone: keep the text with the block before
            new[last] = new.get(last, []) + [""] + block
            continue
        new[k], last = block, k
    added = 0
    out, k = list(pe.front), 0
    for kind, ls in pe.parts:
        if kind == "code":
            out += ls
            continue
        if k not in new and "\n".join(ls).strip():
            added += 1
        out += new.get(k, ls)
        k += 1
    zh.write_text("\n".join(out), encoding="utf-8")
    return added


def _heading_lines(lines: list[str]) -> list[int]:
    out, fence = [], None
    start = lines.index("---", 1) + 1 if lines and lines[0].strip() == "---" else 0
    for i in range(start, len(lines)):
        m = FENCE.match(lines[i])
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and lines[i].rstrip() == fence:
            fence = None
        elif fence is None and HEADING.match(lines[i]):
            out.append(i)
    return out


def problems(en: Path) -> list[str]:
    """Why the Chinese file of ``en`` is out of sync (empty: in sync)."""
    zh = zh_path(en)
    rel = zh.relative_to(ROOT)
    en_text, zh_text = en.read_text(encoding="utf-8"), zh.read_text(encoding="utf-8")
    pe, pz = parse(en_text), parse(zh_text)
    out = []
    ce, cz = code_cells(pe), code_cells(pz)
    if ce != cz:
        k = next((i for i, (a, b) in enumerate(zip(ce, cz)) if a != b), min(len(ce), len(cz)))
        out.append(f"{rel}: code cell {k + 1} differs from the English (code cells are verbatim: "
                   f"python scripts/zh.py sync-code {rel})")
    if pe.front != pz.front:
        out.append(f"{rel}: front matter differs from the English (copy it verbatim)")
    es, lines = sections(en_text), zh_text.split("\n")
    heads = _heading_lines(lines)
    if len(heads) != len(es):
        return out + [f"{rel}: {len(heads)} headings, the English has {len(es)} (translate heading for heading)"]
    for k, ((head, body), i) in enumerate(zip(es, heads)):
        m = SYNC.match(lines[i + 1]) if i + 1 < len(lines) else None
        if not m:
            out.append(f"{rel}: section {k + 1} ({lines[i].strip()}) has no '% sync:' line under its heading")
        elif m.group(1) != section_hash(head, body):
            out.append(f"{rel}: section {k + 1} is stale: the English '{head.strip()}' changed since it was "
                       f"translated (retranslate, then: python scripts/zh.py stamp {rel} --sections {k + 1})")
    if ce == cz:
        try:
            nb = zh_notebook(en)
        except ValueError as e:
            return out + [f"{rel}: {e}"]
        if nb is not None and (not zh_ipynb(en).exists() or zh_ipynb(en).read_text(encoding="utf-8") != nb):
            out.append(f"{zh_ipynb(en).relative_to(ROOT)} is missing or stale (it is generated from {zh.name} and the "
                       f"English {en.with_suffix('.ipynb').name}): python scripts/zh.py notebooks {rel}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/zh.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("blocks")
    b.add_argument("path")
    a = sub.add_parser("assemble")
    a.add_argument("path")
    a.add_argument("blocks_file")
    s = sub.add_parser("stamp")
    s.add_argument("zh")
    s.add_argument("--sections", default="")
    s.add_argument("--all", action="store_true")
    c = sub.add_parser("sync-code")
    c.add_argument("zh")
    n = sub.add_parser("notebooks")
    n.add_argument("paths", nargs="*")
    bd = sub.add_parser("build")
    bd.add_argument("--no-strict", action="store_true", help="warnings do not fail the build")
    for name in ("check", "todo"):
        x = sub.add_parser(name)
        x.add_argument("paths", nargs="*")
        x.add_argument("--require-all", action="store_true")
    args = ap.parse_args(argv)

    if args.cmd == "blocks":
        en = chapter_sources([args.path])[0]
        for k, ls in enumerate(md_blocks(parse(en.read_text(encoding="utf-8")))):
            print(f"<<<block {k}>>>")
            print("\n".join(ls).strip("\n"))
        return 0
    if args.cmd == "assemble":
        en = chapter_sources([args.path])[0]
        pe = parse(en.read_text(encoding="utf-8"))
        tr: dict[int, list[str]] = {}
        cur = None
        for line in Path(args.blocks_file).read_text(encoding="utf-8").split("\n"):
            m = BLOCK_MARK.match(line)
            if m:
                cur = int(m.group(1))
                tr[cur] = []
            elif cur is not None:
                tr[cur].append(line)
        n_md = len(md_blocks(pe))
        missing = [k for k in range(n_md) if k not in tr]
        if missing:
            raise SystemExit(f"{args.blocks_file}: blocks {missing} missing (the English has {n_md}: 0…{n_md - 1})")
        out, k = list(pe.front), 0
        for kind, ls in pe.parts:
            if kind == "code":
                out += ls
            else:
                body = "\n".join(tr[k]).strip("\n")
                lead = "\n" if ls and not ls[0].strip() else ""
                trail = "\n" if ls and len(ls) > 1 and not ls[-1].strip() else ""
                out.append(lead + body + trail if body else "\n".join(ls))
                k += 1
        zh = zh_path(en)
        zh.write_text("\n".join(out), encoding="utf-8")
        n = stamp(zh, None)
        print(f"{zh.relative_to(ROOT)}: {n} sections stamped")
        return 0
    if args.cmd == "stamp":
        zh = Path(args.zh).resolve()
        which = None if not (args.sections or args.all) else (
            set(range(10**6)) if args.all else {int(x) - 1 for x in args.sections.split(",")})
        print(f"{zh.relative_to(ROOT)}: {stamp(zh, which)} sections stamped")
        return 0
    if args.cmd == "sync-code":
        zh = Path(args.zh).resolve()
        added = sync_code(zh)
        print(f"{zh.relative_to(ROOT)}: code cells copied from the English"
              + (f"; {added} prose block(s) new in the English kept in English: translate them" if added else ""))
        return 0
    if args.cmd == "build":
        return build(strict=not args.no_strict)
    ens = chapter_sources(args.paths)
    if args.cmd == "notebooks":
        changed = write_notebooks(ens)
        print(f"zh: {len(changed)} Chinese notebook(s) written" + "".join(f"\n  {c.relative_to(ROOT)}" for c in changed))
        return 0
    todo = [e for e in ens if not zh_path(e).exists()]
    found = [p for e in ens if zh_path(e).exists() for p in problems(e)]
    for p in found:
        print(p)
    if args.cmd == "todo":
        for e in todo:
            print(f"{zh_path(e).relative_to(ROOT)}: not translated yet")
        return 0
    done = len(ens) - len(todo)
    print(f"zh: {done} of {len(ens)} sources have a Chinese edition; {len(found)} problem(s)", file=sys.stderr)
    if args.require_all and todo:
        print("zh: missing: " + ", ".join(str(zh_path(e).relative_to(ROOT)) for e in todo), file=sys.stderr)
        return 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
