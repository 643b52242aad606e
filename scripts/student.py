"""Student and instructor notebooks, and slides, from the same chapter sources (``make student``, ``make slides``).

* **student** (``_build/student/<chapter>/<slug>.ipynb``): the chapter's jupytext ``.md`` with every cell tagged
  ``solution`` removed, inside an exercise section (a heading with "Exercise") every other ``hide-input`` code cell
  but the checker (solution code), and every dropdown/admonition titled "Solution…"; ``exercise`` answer cells
  (``answer_1 = None``) and the checker cells stay, so a student's checker says "not answered yet" until the answer
  is filled in, then "correct" or "not yet: …" (``helpers/core/exercises.py``). Outputs are cleared.
* **instructor** (``_build/instructor/…``): the executed ``.ipynb`` as it is — solutions, outputs, everything.
* ``--execute`` runs each student notebook (cwd: the chapter's own folder, as the book runs it) and fails, naming
  chapter and cell, on an error or on a checker that says anything but "not answered yet".
* ``--beside``: the student notebook beside its chapter as ``<slug>.student.ipynb`` (what ``binder/postBuild`` does,
  so the site's Binder button opens a notebook without solutions in the chapter's own folder).
* ``--slides``: one reveal.js deck per chapter (``_build/slides/``) with nbconvert; cells keep their slide tags
  (``slideshow.slide_type`` metadata); a chapter without any gets a slide per ``##`` heading and a sub-slide per
  ``###``; the launch cell and solution cells are skipped; MyST roles become their text and glued numbers their
  values. Offline: reveal.js, MathJax 3 and plotly.js come from the book's vendor folder (``make static`` fills
  ``_build/vendor``), copied into ``_build/slides/_vendor`` — no CDN, no jQuery/require.js.
* ``student_files(md)`` gives the student notebook and its MyST text: the book build offers them as each chapter's
  downloads (``book/_ext/bookpages.py``).

    python scripts/student.py [chapters/08-communication …] [--execute] [--beside] [--slides]
"""
from __future__ import annotations

import argparse
import copy
import re
import shutil
import sys
import warnings
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
    return _student(nb)[0]


def _student(nb):
    """(student copy of ``nb``, how many solutions it lost: cells and dropdowns)."""
    import nbformat
    out = copy.deepcopy(nb)
    cells, in_exercise, removed = [], False, 0
    for cell in out.cells:
        if cell.cell_type == "markdown":
            headings = _HEADING.findall(cell.source)
            if headings:
                in_exercise = bool(_EXERCISE.search(headings[-1]))
        if "solution" in tags(cell):
            removed += 1
            continue
        # inside an exercise, hidden code that is not the checker is solution code (it may read the solution's names)
        if in_exercise and cell.cell_type == "code" and "hide-input" in tags(cell) and not is_checker(cell):
            removed += 1
            continue
        if cell.cell_type == "markdown":
            cell.source, n = _DROPDOWN.subn("", cell.source)
            removed += n
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    if removed or any("exercise" in tags(c) for c in cells):
        first_heading = next((i for i, c in enumerate(cells) if c.cell_type == "markdown" and "# " in c.source), 0)
        cells.insert(first_heading + 1, nbformat.v4.new_markdown_cell(STUDENT_NOTE))
    out.cells = cells
    return out, removed


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


def student_files(md: Path) -> tuple[object, str, int]:
    """(student notebook, its MyST text, how many solutions were removed) for a chapter's jupytext ``.md``."""
    import jupytext
    nb, removed = _student(jupytext.read(md))
    text = jupytext.writes(nb, fmt="md:myst")
    nb.metadata.pop("jupytext", None)
    return nb, text, removed


def build_beside(md: Path) -> Path:
    import nbformat
    dest = md.with_name(md.stem + ".student.ipynb")
    nbformat.write(student_files(md)[0], dest)
    return dest


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


SKIP_ON_SLIDES = {"remove-cell", "launch-install", "solution"}


def with_slide_tags(nb):
    """Keep slide tags where the source has any; otherwise a slide per ## heading, a sub-slide per ###. Cells tagged
    remove-cell (the launch cell) or solution are skipped either way."""
    out = copy.deepcopy(nb)
    tagged = any("slideshow" in c.get("metadata", {}) for c in out.cells)
    for i, cell in enumerate(out.cells):
        if SKIP_ON_SLIDES & set(tags(cell)):
            cell.metadata["slideshow"] = {"slide_type": "skip"}
        elif not tagged:
            src = cell.source.lstrip() if cell.cell_type == "markdown" else ""
            kind = ("slide" if i == 0 or src.startswith(("# ", "## ")) else "subslide" if src.startswith("### ")
                    else "-")
            cell.metadata["slideshow"] = {"slide_type": kind}
    return out


GLUE_PREFIX = "application/papermill.record/"
_ROLE = re.compile(r"\{(?P<role>[a-z:]+)\}`(?P<body>[^`]*)`")
_LABEL_LINE = re.compile(r"^\([\w:-]+\)=[ \t]*\n", re.M)


def glued_values(nb) -> dict[str, str]:
    """name -> the text a ``{glue}`` role shows, from the executed notebook's glue outputs."""
    found = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None:
                found[name] = str(out.get("data", {}).get(GLUE_PREFIX + "text/plain", "")).strip("'\"")
    return found


def _glue_text(body: str, glued: dict[str, str]) -> str:
    name, _, spec = body.partition(":")
    value = glued.get(name.strip())
    if value is None:
        return name
    try:
        return format(float(value), spec) if spec else value
    except ValueError:
        return value


_ADMONITION = re.compile(r"^(?P<f>`{3,}|:{3,})\{(?P<kind>admonition|note|tip|warning|important|caution|seealso|"
                         r"dropdown|math)\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=f)[ \t]*$", re.S | re.M)
_OPTION_LINE = re.compile(r"^:[a-z-]+:.*\n", re.M)


def _admonition(m: re.Match) -> str:
    body = _OPTION_LINE.sub("", m.group("body")).strip("\n")
    if m.group("kind") == "math":
        return f"$$\n{body}\n$$"
    title = m.group("title").strip() or m.group("kind").capitalize()
    return f"**{title}.** {body}"


def myst_for_slides(text: str, glued: dict[str, str]) -> str:
    """MyST as a slide shows it: solution dropdowns dropped (their cells are skipped too), admonitions as a bold title
    and their text, math directives as $$…$$, roles as plain text (glued numbers as their values, references as their
    words, citations in brackets), label lines dropped."""
    text = _ADMONITION.sub(_admonition, _DROPDOWN.sub("", text))
    def role(m: re.Match) -> str:
        kind, body = m.group("role"), m.group("body")
        if kind.startswith("glue"):
            return _glue_text(body, glued)
        if kind in ("math",):
            return f"${body}$"
        if kind.startswith("cite"):
            return "[" + "; ".join(k.strip() for k in body.split(",")) + "]"
        label = re.match(r"(.*?)\s*<[^<>]+>$", body, re.S)
        return label.group(1) if label else body
    return _ROLE.sub(role, _LABEL_LINE.sub("", text))


# nbconvert's reveal template with every CDN replaced by the book's own files (``{{ resources.book_vendor }}``):
# plotly.js before the cells (their inline scripts call Plotly.newPlot), MathJax 3 (SVG, no fonts to fetch) instead
# of MathJax 2 from a CDN, reveal.js from script tags instead of require.js, and neither jQuery nor widgets.
SLIDES_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}
<script src="{{ resources.book_vendor }}/plotly/plotly.min.js"></script>
<style>.reveal .slides > section, .reveal .slides > section > section { height: 700px; overflow-y: auto; }</style>
{%- endblock html_head_js -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{%- block html_head_js_mathjax -%}
<script>
window.MathJax = {
  tex: {inlineMath: [["$", "$"], ["\\(", "\\)"]], displayMath: [["$$", "$$"], ["\\[", "\\]"]],
        processEscapes: true},
  svg: {fontCache: "global"},
  options: {skipHtmlTags: ["script", "noscript", "style", "textarea", "pre", "code"]}
};
</script>
<script defer src="{{ resources.book_vendor }}/mathjax/tex-svg.js"></script>
{%- endblock html_head_js_mathjax -%}
{% block footer_js %}
<script src="{{ resources.book_vendor }}/reveal.js/dist/reveal.js"></script>
<script src="{{ resources.book_vendor }}/reveal.js/plugin/notes/notes.js"></script>
<script>
Reveal.initialize({controls: true, progress: true, history: true, transition: "slide", slideNumber: "",
                   plugins: [RevealNotes], width: 960, height: 700});
Reveal.on("slidechanged", function (event) {   // a figure laid out while hidden takes the slide's size
  if (!window.Plotly) return;
  event.currentSlide.querySelectorAll(".plotly-graph-div").forEach(function (d) { Plotly.Plots.resize(d); });
});
</script>
{% endblock footer_js %}
"""
SLIDES_VENDOR = ("reveal.js", "mathjax", "plotly")


def slides_vendor(vendor: Path = OUT / "vendor", dest: Path = OUT / "slides" / "_vendor") -> Path:
    """Copy reveal.js, MathJax and plotly.js from the book's vendor folder beside the decks (once)."""
    missing = [name for name in SLIDES_VENDOR if not (vendor / name).is_dir()]
    if missing:
        raise SystemExit(f"{vendor}: {', '.join(missing)} missing: run `make static` (scripts/static_assets.py; "
                         "reveal.js comes from npm) before `make slides`")
    for name in SLIDES_VENDOR:
        if (dest / name).exists():
            shutil.rmtree(dest / name)
        shutil.copytree(vendor / name, dest / name)
    return dest


def slides(md: Path, out: Path = OUT / "slides", folder: Path | None = None) -> Path:
    """The deck of one chapter (its executed .ipynb, else the .md) at ``out/<folder>/<slug>.slides.html``; the
    vendored libraries are expected at ``out/_vendor`` (``slides_vendor``)."""
    import jupytext
    from nbconvert import SlidesExporter
    ipynb = md.with_suffix(".ipynb")
    nb = jupytext.read(ipynb if ipynb.exists() else md)
    glued = glued_values(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = myst_for_slides(cell.source, glued)
    folder = folder or md.parent.relative_to(ROOT)
    dest = out / folder / (md.stem + ".slides.html")
    vendor = "/".join([".."] * len(Path(folder).parts) + ["_vendor"])
    exporter = SlidesExporter(template_name="reveal", reveal_url_prefix=vendor + "/reveal.js",
                              reveal_theme="white")   # white: its fonts ship with reveal.js (simple's are Google's)
    exporter.raw_template = SLIDES_TEMPLATE
    with warnings.catch_warnings():   # glue records (application/papermill.record/…) have no HTML form: not shown
        warnings.filterwarnings("ignore", message="Your element with mimetype")
        body, _ = exporter.from_notebook_node(with_slide_tags(nb), resources={"book_vendor": vendor})
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Student/instructor notebooks and slides from the chapter sources.")
    ap.add_argument("chapters", nargs="*", help="chapter folders (default: all)")
    ap.add_argument("--execute", action="store_true", help="run each student notebook and check its checkers")
    ap.add_argument("--beside", action="store_true",
                    help="only write <slug>.student.ipynb beside each chapter (Binder's postBuild)")
    ap.add_argument("--slides", action="store_true", help="also write offline reveal.js slides (nbconvert)")
    args = ap.parse_args(argv)
    sources = chapter_sources(args.chapters)
    if args.beside:
        for md in sources:
            build_beside(md)
        print(f"student notebooks beside {len(sources)} chapters (<slug>.student.ipynb)")
        return 0
    if args.slides:
        slides_vendor()
    problems = []
    for md in sources:
        student, instructor = build(md)
        print(f"student: {student.relative_to(ROOT)}" + (f"   instructor: {instructor.relative_to(ROOT)}"
                                                          if instructor else ""), flush=True)
        if args.execute:
            found = execute(student, md.parent)
            problems.extend(found)
            print(f"  executed: {'ok' if not found else f'{len(found)} problem(s)'}", flush=True)
        if args.slides:
            print(f"  slides: {slides(md).relative_to(ROOT)}")
    for line in problems:
        print(f"FAIL {line}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
