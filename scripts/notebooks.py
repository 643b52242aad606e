"""Pair, execute and check the book's notebooks. The MyST ``.md`` is the source; the ``.ipynb`` is derived.

    python scripts/notebooks.py list                       # notebooks named in _toc.yml
    python scripts/notebooks.py execute [PATH ...]         # .md → executed .ipynb (all listed, or those given)
    python scripts/notebooks.py check                      # fail, naming the chapter, on drift / unexecuted cells
    python scripts/notebooks.py sources [PATH ...]         # .md sources → .ipynb, stored outputs kept (a rename)
    python scripts/notebooks.py run-fresh --out DIR [PATH ...]   # execute into DIR, fail on any cell error
                                                           # (the GPU check: outputs differ from stored CPU ones)
    python scripts/notebooks.py run-fresh --out DIR --without PKG,PKG [PATH ...]   # as where PKGs are absent

Execution is deterministic: the kernel's working directory is the notebook's folder, no per-cell timing
metadata is recorded, the kernel runs in the portable numeric mode of ``scripts/numeric_env.py`` (the same on any
x86-64 CPU: AVX2 kernels, one thread, ``PYTHONHASHSEED=0``, ``BOOK_QUIET=1``), widget state is not stored. PATH may be a chapter folder, a .md or an .ipynb.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import yaml
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from scripts import numeric_env  # noqa: E402

KERNEL_ENV = {**numeric_env.PORTABLE, "PYTHONWARNINGS": "ignore::DeprecationWarning"}


def rel(p: Path) -> str:
    try:
        return p.relative_to(ROOT).as_posix()
    except ValueError:
        return str(p)


def toc_notebooks() -> list[Path]:
    """Every .ipynb named in _toc.yml, in book order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found: list[Path] = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "file" and isinstance(v, str) and v.endswith(".ipynb"):
                    found.append(ROOT / v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk(toc)
    return found


def resolve(paths: list[str]) -> list[Path]:
    if not paths:
        return toc_notebooks()
    out = []
    for p in paths:
        p = (Path.cwd() / p).resolve()
        if p.is_dir():
            mds = [m for m in sorted(p.glob("*.md"))   # name.zh.md: the Chinese edition, never executed (scripts/zh.py)
                   if "jupytext:" in m.read_text()[:800] and not m.name.endswith(".zh.md")]
            if not mds:
                sys.exit(f"{p}: no jupytext-paired .md notebook in this folder")
            out += [m.with_suffix(".ipynb") for m in mds]
        else:
            out.append(p.with_suffix(".ipynb"))
    return out


def _client(nb, folder: Path, timeout: int) -> NotebookClient:
    return NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                          store_widget_state=False, resources={"metadata": {"path": str(folder)}})


def execute(ipynb: Path, timeout: int = 600) -> float:
    md = ipynb.with_suffix(".md")
    if not md.exists():
        sys.exit(f"{rel(md)} is missing: the .md is the source of {ipynb.name}")
    nb = jupytext.read(md)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    t0 = time.perf_counter()
    _client(nb, ipynb.parent, timeout).execute()
    for cell in nb.cells:  # ids are random per conversion: make them stable so re-runs give no diff
        cell.pop("id", None)
    nb.nbformat_minor = 4
    nb.metadata.pop("widgets", None)
    nb.metadata.get("language_info", {}).pop("version", None)
    jupytext.write(nb, ipynb, fmt="ipynb")
    return time.perf_counter() - t0


def copy_sources(ipynb: Path) -> bool:
    """Copy every cell's source and tags from the .md into the .ipynb, keeping the stored outputs; True if changed.

    For a change that cannot alter an output (a module path in an import, a renamed helper): nbval then re-runs
    the cells against the kept outputs. Refuses when the cells differ in number or kind — execute instead."""
    src = jupytext.read(ipynb.with_suffix(".md"))
    nb = nbformat.read(ipynb, as_version=4)
    kinds = ([c.cell_type for c in src.cells], [c.cell_type for c in nb.cells])
    if kinds[0] != kinds[1]:
        sys.exit(f"{rel(ipynb)}: the .md has {len(kinds[0])} cells, the .ipynb {len(kinds[1])} (or their kinds "
                 f"differ): outputs cannot be kept; run `make notebooks NB={rel(ipynb.parent)}`")
    changed = False
    for a, b in zip(src.cells, nb.cells):
        tags_a, tags_b = a.metadata.get("tags", []), b.metadata.get("tags", [])
        if a.source != b.source or sorted(tags_a) != sorted(tags_b):
            b.source = a.source
            if tags_a:
                b.metadata["tags"] = tags_a
            else:
                b.metadata.pop("tags", None)
            changed = True
    if changed:
        jupytext.write(nb, ipynb, fmt="ipynb")
    return changed


def drift(ipynb: Path) -> list[str]:
    """Problems with one pair, as sentences (empty = in sync and fully executed)."""
    md = ipynb.with_suffix(".md")
    chapter = rel(ipynb.parent)
    fix = f"run `make notebooks NB={chapter}`"
    if not ipynb.exists():
        return [f"{chapter}: {ipynb.name} is missing; {fix}"]
    if not md.exists():
        return [f"{chapter}: {md.name} (the source of {ipynb.name}) is missing"]
    src = jupytext.read(md)
    nb = nbformat.read(ipynb, as_version=4)
    problems = []
    a = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in src.cells]
    b = [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", []))) for c in nb.cells]
    if a != b:
        first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        problems.append(f"{chapter}: {md.name} and {ipynb.name} have drifted (first difference at cell {first}, "
                        f"{len(a)} vs {len(b)} cells); {fix}")
    unrun = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.get("execution_count") is None
             and "nbval-skip" not in c.metadata.get("tags", [])]
    if unrun:
        problems.append(f"{chapter}: {ipynb.name} has {len(unrun)} unexecuted code cell(s) (cells {unrun[:5]}); {fix}")
    errors = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.get("outputs", []) if o.get("output_type") == "error"]
    if errors:
        problems.append(f"{chapter}: {ipynb.name} stores an error output in cell(s) {sorted(set(errors))}; {fix}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["list", "execute", "check", "sources", "run-fresh"])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--out", help="run-fresh: folder for the executed copies")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("--without", default="", help="run-fresh: packages the kernels cannot import (comma-separated)")
    args = ap.parse_intermixed_args(argv)  # options may come before or after the paths
    if args.without and args.command != "run-fresh":
        ap.error("--without goes with run-fresh")
    os.environ.update(KERNEL_ENV)
    targets = resolve(args.paths)
    if args.command == "list":
        print("\n".join(rel(p) for p in targets))
        return 0
    if args.command == "check":
        problems = [p for nb in targets for p in drift(nb)]
        listed = toc_notebooks()
        for md in sorted(ROOT.glob("chapters/*/*.md")):
            if "jupytext:" in md.read_text()[:800] and md.with_suffix(".ipynb") not in listed \
                    and not md.name.endswith(".zh.md"):
                problems.append(f"{md.parent.relative_to(ROOT)}: {md.with_suffix('.ipynb').name} is not in _toc.yml")
        print("\n".join(problems) if problems else f"pairing check: {len(targets)} notebooks in sync and executed")
        return 1 if problems else 0
    if args.command == "sources":
        for nb in targets:
            if copy_sources(nb):
                print(f"sources copied into {rel(nb)} (outputs kept)", flush=True)
        return 0
    if args.command == "execute":
        for nb in targets:
            dt = execute(nb, args.timeout)
            print(f"executed {rel(nb)} in {dt:.1f} s", flush=True)
        return 0
    out = Path(args.out or "_build/fresh")
    out.mkdir(parents=True, exist_ok=True)
    failed = []
    if args.without:
        from scripts import without
        try:
            names = without.parse(args.without)
        except ValueError as e:
            ap.error(str(e))
        blocker = without.install(names)
        print(f"run-fresh as on a machine without {', '.join(names)}", flush=True)
    for ipynb in targets:
        nb = jupytext.read(ipynb.with_suffix(".md"))
        t0 = time.perf_counter()
        try:
            _client(nb, ipynb.parent, args.timeout).execute()
            status = "ok"
        except Exception as e:  # report every notebook, then fail
            tail = [ln for ln in str(e).splitlines() if ln.strip()][-3:]     # the error's last lines
            status = f"FAILED: {type(e).__name__}: " + " | ".join(tail)
            failed.append(ipynb)
        nbformat.write(nb, out / ipynb.name)
        print(f"{rel(ipynb)}: {status} ({time.perf_counter() - t0:.1f} s)", flush=True)
    if args.without:
        import shutil
        shutil.rmtree(blocker, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
