"""The Chinese edition (中文版): ``name.zh.md`` beside each ``name.md``, the same code cells, prose in Chinese.

    python scripts/zh.py blocks  chapters/18-llm-training          # the English prose blocks, numbered, to translate
    python scripts/zh.py assemble chapters/18-llm-training FILE    # FILE: translated blocks → name.zh.md (stamped)
    python scripts/zh.py stamp   FILE.zh.md [--sections 3,5 | --all]   # record the English sections' hashes
    python scripts/zh.py sync-code FILE.zh.md                      # copy the English code cells in (code is verbatim)
    python scripts/zh.py check   [--require-all] [PATH ...]        # fails naming chapter + section that drifted
    python scripts/zh.py todo    [PATH ...]                        # what to retranslate, one line per section

A **block** is the markdown between two code cells (the front matter and the code cells are never translated).
A **section** starts at a heading outside any fence. Under every Chinese heading a MyST comment
``% sync: <hash>`` records the hash of the English section it translates (``section_hash``); when the English
section changes and the Chinese one is not re-stamped, ``check`` fails naming both. Code cells must be identical.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def chapter_sources(paths: list[str]) -> list[Path]:
    """English sources: chapters/*/*.md, book/*.md notebooks and index.md (not glossary pages, not .zh.md)."""
    if paths:
        out = []
        for p in map(Path, paths):
            p = p if p.is_absolute() else ROOT / p
            if p.is_dir():
                out += [f for f in sorted(p.glob("*.md")) if not f.name.endswith(".zh.md")]
            else:
                out.append(en_path(p) if p.name.endswith(".zh.md") else p)
        return out
    return [f for f in sorted((ROOT / "chapters").glob("*/*.md")) if not f.name.endswith(".zh.md")]


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
        pe, pz = parse(en_path(zh).read_text(encoding="utf-8")), parse(zh.read_text(encoding="utf-8"))
        if len(code_cells(pe)) != len(code_cells(pz)):
            raise SystemExit(f"{zh.relative_to(ROOT)}: {len(code_cells(pz))} code cells, the English has "
                             f"{len(code_cells(pe))}: add or remove cells by hand, then run sync-code again")
        en_code = iter([ls for kind, ls in pe.parts if kind == "code"])
        out = list(pe.front)
        for kind, ls in pz.parts:
            out += next(en_code) if kind == "code" else ls
        zh.write_text("\n".join(out), encoding="utf-8")
        return 0
    ens = chapter_sources(args.paths)
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
