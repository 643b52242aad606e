"""Student and instructor notebooks, and slides, from the same chapter sources (``make student``, ``make slides``).

* **student** (``_build/student/<chapter>/<slug>.ipynb``): the chapter's jupytext ``.md`` with every cell tagged
  ``solution`` removed, inside an exercise section (a heading with "Exercise") every other ``hide-input`` code cell
  but the checker (solution code), and every dropdown/admonition titled "Solution…"; ``exercise`` answer cells
  (``answer_1 = None``) and the checker cells stay, so a student's checker says "not answered yet" until the answer
  is filled in, then "correct" or "not yet: …" (``helpers/core/exercises.py``). Outputs are cleared.
* **instructor** (``_build/instructor/…``): the executed ``.ipynb`` as it is — solutions, outputs, everything.
* ``--execute`` runs each student notebook (cwd: the chapter's own folder, as the book runs it) and fails, naming
  chapter and cell, on an error or on a checker that says anything but "not answered yet".
* ``--slides``: one reveal.js deck per chapter (``_build/slides/``) with nbconvert; cells keep their slide tags
  (``slideshow.slide_type`` metadata); a chapter without any gets a slide per ``##`` heading and a sub-slide per
  ``###``. reveal.js is served from ``--reveal`` (a local copy) when given, so the deck works offline.

    python scripts/student.py [chapters/08-communication …] [--execute] [--slides] [--reveal _build/vendor/reveal.js]
"""
from __future__ import annotations

import argparse
import copy
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build"
NOT_ANSWERED = "not answered yet"
STUDENT_NOTE = ("**Student notebook.** The solutions are removed. Fill in each exercise's answer cell "
                "(`answer_N = None`) and run the checker cell below it: it says *not answered yet*, *correct*, or "
                "*not yet: …* with a hint.")
# A MyST dropdown or admonition titled "Solution…" (``` or ::: fences, any length ≥ 3), up to its closing fence.
_DROPDOWN = re.compile(r"^(?P<f>`{3,}|:{3,})\{(?:dropdown|admonition)\}[ \t]*(?:Solution|solution|答案)[^\n]*\n.*?"
                       r"^(?P=f)[ \t]*$\n?", re.S | re.M)
_HEADING = re.compile(r"^#{1,6} +(.*)$", re.M)
_EXERCISE = re.compile(r"exercise|练习|习题", re.I)


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def is_checker(cell) -> bool:
    return cell.get("cell_type") == "code" and "exercises.check(" in cell.get("source", "")


def student_notebook(nb):
    """A copy of ``nb`` without solutions (cells tagged ``solution``, solution dropdowns) and without outputs."""
    import nbformat
    out = copy.deepcopy(nb)
    cells, in_exercise = [], False
    for cell in out.cells:
        if cell.cell_type == "markdown":
            headings = _HEADING.findall(cell.source)
            if headings:
                in_exercise = bool(_EXERCISE.search(headings[-1]))
        if "solution" in tags(cell):
            continue
        # inside an exercise, hidden code that is not the checker is solution code (it may read the solution's names)
        if in_exercise and cell.cell_type == "code" and "hide-input" in tags(cell) and not is_checker(cell):
            continue
        if cell.cell_type == "markdown":
            cell.source = _DROPDOWN.sub("", cell.source)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    first_heading = next((i for i, c in enumerate(cells) if c.cell_type == "markdown" and "# " in c.source), 0)
    cells.insert(first_heading + 1, nbformat.v4.new_markdown_cell(STUDENT_NOTE))
    out.cells = cells
    return out


def chapter_sources(args: list[str]) -> list[Path]:
    """The jupytext .md of each chapter folder given (default: every chapter with one)."""
    dirs = [ROOT / a for a in args] if args else sorted((ROOT / "chapters").glob("[0-9][0-9]-*"))
    found = []
    for d in dirs:
        d = d if d.is_dir() else d.parent
        mds = [p for p in d.glob("*.md") if p.with_suffix(".ipynb").exists() or "jupytext" in p.read_text()[:300]]
        if not mds:
            raise SystemExit(f"{d}: no jupytext .md chapter source here")
        found.extend(mds)
    return found


def build(md: Path) -> tuple[Path, Path | None]:
    import jupytext
    import nbformat
    rel = md.parent.relative_to(ROOT)
    nb = jupytext.read(md)
    student = OUT / "student" / rel / (md.stem + ".ipynb")
    student.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(student_notebook(nb), student)
    instructor = None
    if md.with_suffix(".ipynb").exists():
        instructor = OUT / "instructor" / rel / (md.stem + ".ipynb")
        instructor.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(md.with_suffix(".ipynb"), instructor)
    return student, instructor


def problems_of_run(nb, name: str) -> list[str]:
    """'chapter: cell N: …' for each error output and each checker line other than "not answered yet"."""
    bad = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                bad.append(f"{name}: cell {i}: {out.get('ename')}: {out.get('evalue')}")
            elif is_checker(cell) and out.get("output_type") == "stream":
                for line in out.get("text", "").splitlines():
                    if line.strip() and NOT_ANSWERED not in line:
                        bad.append(f"{name}: cell {i}: checker says {line.strip()!r}")
    return bad


def execute(student: Path, cwd: Path, timeout_s: int = 300) -> list[str]:
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(student, as_version=4)
    name = student.relative_to(OUT).as_posix() if student.is_relative_to(OUT) else student.name
    try:
        NotebookClient(nb, timeout=timeout_s, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(cwd)}}).execute()
    except Exception as e:  # a dead kernel or a timeout is this chapter's problem; go on with the others
        return [f"{name}: did not run: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"]
    nbformat.write(nb, student)
    return problems_of_run(nb, name)


def with_slide_tags(nb):
    """Keep slide tags where the source has any; otherwise a slide per ## heading, a sub-slide per ###."""
    out = copy.deepcopy(nb)
    if any("slideshow" in c.get("metadata", {}) for c in out.cells):
        return out
    for i, cell in enumerate(out.cells):
        src = cell.source.lstrip() if cell.cell_type == "markdown" else ""
        kind = ("slide" if i == 0 or src.startswith(("# ", "## ")) else "subslide" if src.startswith("### ")
                else "-")
        cell.metadata["slideshow"] = {"slide_type": kind}
    return out


def slides(md: Path, reveal: str | None) -> Path:
    import jupytext
    from nbconvert import SlidesExporter
    ipynb = md.with_suffix(".ipynb")
    nb = jupytext.read(ipynb if ipynb.exists() else md)
    exporter = SlidesExporter()
    if reveal:
        exporter.reveal_url_prefix = reveal
    body, _ = exporter.from_notebook_node(with_slide_tags(nb))
    dest = OUT / "slides" / md.parent.relative_to(ROOT) / (md.stem + ".slides.html")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Student/instructor notebooks and slides from the chapter sources.")
    ap.add_argument("chapters", nargs="*", help="chapter folders (default: all)")
    ap.add_argument("--execute", action="store_true", help="run each student notebook and check its checkers")
    ap.add_argument("--slides", action="store_true", help="also write reveal.js slides (nbconvert)")
    ap.add_argument("--reveal", default=None, help="reveal.js URL prefix for the slides, e.g. a local copy")
    ap.add_argument("--reveal-local", action="store_true",
                    help="reveal.js from _build/slides/reveal.js (make slides puts it there), relative to each deck")
    args = ap.parse_args(argv)
    problems = []
    for md in chapter_sources(args.chapters):
        student, instructor = build(md)
        print(f"student: {student.relative_to(ROOT)}" + (f"   instructor: {instructor.relative_to(ROOT)}"
                                                          if instructor else ""), flush=True)
        if args.execute:
            found = execute(student, md.parent)
            problems.extend(found)
            print(f"  executed: {'ok' if not found else f'{len(found)} problem(s)'}", flush=True)
        if args.slides:
            reveal = args.reveal
            if args.reveal_local:
                depth = len(md.parent.relative_to(ROOT).parts)
                reveal = "/".join([".."] * depth + ["reveal.js"])
            print(f"  slides: {slides(md, reveal).relative_to(ROOT)}")
    for line in problems:
        print(f"FAIL {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
