"""scripts/student.py: student notebooks lose solutions, keep answer and checker cells, and run to "not answered yet"."""
import importlib.util
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("student", ROOT / "scripts" / "student.py")
student = importlib.util.module_from_spec(_spec)
sys.modules["student"] = student
_spec.loader.exec_module(student)

v4 = nbformat.v4


def _code(src, *tags):
    c = v4.new_code_cell(src)
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def _chapter():
    """A book-written chapter in the three-cell exercise convention (helpers/core/exercises.py)."""
    return v4.new_notebook(cells=[
        v4.new_markdown_cell("# A chapter\n\nSome text."),
        _code("from helpers.core import exercises\nx = 6 * 7"),
        v4.new_markdown_cell("## Exercises\n\n### Exercise 1: the answer\n\nWhat is x?"),
        _code("answer_1 = None  # a number", "exercise"),
        _code("answer_1 = x\nassert exercises.status(answer_1, expected=x) == 'correct'", "solution", "hide-input"),
        _code('exercises.check("Exercise 1", answer_1, expected=x)', "hide-input"),
        _code("extra = answer_1 * 2  # reads the solution", "hide-input"),
        v4.new_markdown_cell("### Exercise 2: discuss\n\nWhy?\n\n:::{dropdown} Solution\nBecause.\n:::\n\n"
                             "````{admonition} Solution — longer\n:class: dropdown\nIt is so.\n````\nAfter."),
        v4.new_markdown_cell("## What to remember\n\nx is 42."),
        _code("print('hidden but not an exercise')", "hide-input"),
    ])


def test_student_drops_solutions_keeps_answers_and_checkers():
    nb = student.student_notebook(_chapter())
    sources = [c.source for c in nb.cells]
    text = "\n".join(sources)
    assert "answer_1 = None  # a number" in sources
    assert any("exercises.check(" in s for s in sources)
    assert "answer_1 = x" not in text and "reads the solution" not in text
    assert "Because." not in text and "It is so." not in text and "After." in text
    assert "hidden but not an exercise" in text                  # hide-input outside exercises stays
    assert student.STUDENT_NOTE in sources[1]                    # the note right after the title
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_instructor_keeps_everything():
    nb = _chapter()
    assert len(student.student_notebook(nb).cells) < len(nb.cells)   # the original is not changed
    assert any("solution" in student.tags(c) for c in nb.cells)


def test_student_notebook_executes_to_not_answered_yet(tmp_path):
    path = tmp_path / "ch.ipynb"
    nbformat.write(student.student_notebook(_chapter()), path)
    problems = student.execute(path, tmp_path, timeout_s=120)
    assert problems == [], problems
    ran = nbformat.read(path, as_version=4)
    lines = [o["text"] for c in ran.cells if student.is_checker(c) for o in c.get("outputs", [])
             if o.get("output_type") == "stream"]
    assert lines and all(student.NOT_ANSWERED in line for line in lines)


def test_a_checker_that_says_something_else_is_reported():
    nb = _chapter()
    checker = next(c for c in nb.cells if student.is_checker(c))
    checker.outputs = [v4.new_output("stream", name="stdout", text="Exercise 1: correct\n")]
    nb.cells[1].outputs = [v4.new_output("error", ename="NameError", evalue="name 'y' is not defined", traceback=[])]
    problems = student.problems_of_run(nb, "ch")
    assert any("checker says 'Exercise 1: correct'" in p for p in problems)
    assert any("cell 1: NameError" in p for p in problems)


def test_slides_tags_from_headings_when_source_has_none():
    nb = student.with_slide_tags(_chapter())
    kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
    assert kinds[0] == "slide" and kinds[2] == "slide" and kinds[7] == "subslide" and "-" in kinds
    tagged = _chapter()
    tagged.cells[3].metadata["slideshow"] = {"slide_type": "fragment"}
    assert "slideshow" not in student.with_slide_tags(tagged).cells[0].metadata   # the source's tags win


def test_unknown_chapter_folder_fails_clearly(tmp_path):
    with pytest.raises(SystemExit, match="no jupytext .md chapter source"):
        student.chapter_sources([str(tmp_path)])


def test_student_files_count_what_they_remove_and_note_only_for_exercises(tmp_path):
    import jupytext
    md = tmp_path / "ch.md"
    jupytext.write(_chapter(), md, fmt="md:myst")
    nb, text, removed = student.student_files(md)
    assert removed == 4                        # the solution cell, the hidden exercise code, two dropdowns
    assert "answer_1 = None" in text and "Because." not in text and student.STUDENT_NOTE in text
    plain = v4.new_notebook(cells=[v4.new_markdown_cell("# Reference\n\nNo exercises."), _code("x = 1")])
    jupytext.write(plain, md, fmt="md:myst")
    nb, text, removed = student.student_files(md)
    assert removed == 0 and student.STUDENT_NOTE not in text   # nothing was removed: no note


def test_beside_writes_the_student_notebook_next_to_its_chapter(tmp_path):
    import jupytext
    md = tmp_path / "chapters" / "99-t" / "t.md"
    md.parent.mkdir(parents=True)
    jupytext.write(_chapter(), md, fmt="md:myst")
    dest = student.build_beside(md)
    assert dest == md.with_name("t.student.ipynb")
    assert not any("solution" in student.tags(c) for c in nbformat.read(dest, as_version=4).cells)


def test_myst_roles_read_as_text_on_slides():
    glued = {"ring_GiB": "1.75", "name": "ring"}
    text = ("(sec-x)=\n## A {term}`ring <Ring all-reduce>` of {glue:text}`ring_GiB:.1f` GiB, {glue}`name`, "
            "see {ref}`the overview <ch01>` {cite:p}`a2020,b2021` and {math}`\\alpha`.")
    out = student.myst_for_slides(text, glued)
    assert out == "## A ring of 1.8 GiB, ring, see the overview [a2020; b2021] and $\\alpha$."


def test_slides_load_nothing_from_a_cdn(tmp_path):
    import jupytext
    nb = _chapter()
    nb.cells.insert(1, _code("import os  # launch", "remove-cell", "launch-install"))
    nb.cells.insert(2, v4.new_markdown_cell("The ratio is $p/2$ and {glue:text}`missing` stays a name."))
    md = tmp_path / "t.md"
    jupytext.write(nb, md, fmt="md:myst")
    deck = student.slides(md, out=tmp_path / "slides", folder=Path("chapters/99-t"))
    html = deck.read_text()
    sources = re.findall(r'<(?:script|link)[^>]*(?:src|href)="([^"]+)"', html)
    assert sources and not [s for s in sources if "://" in s], sources
    for lib in ("_vendor/reveal.js/dist/reveal.js", "_vendor/mathjax/tex-svg.js", "_vendor/plotly/plotly.min.js"):
        assert f"../../{lib}" in sources
    assert "require.js" not in html and "jquery" not in html.lower() and "MathJax.Hub" not in html
    assert "# launch" not in html and "answer_1 = x" not in html       # launch and solution cells skipped
    assert "$p/2$" in html and "stays a name" in html


def test_directives_read_as_text_on_slides():
    text = (":::{admonition} Solution\n:class: dropdown\nThe answer.\n:::\n\n```{note} Careful\n:class: tip\n"
            "Measure twice.\n```\n\n```{math}\n:label: eq-x\nt = n / B\n```\n")
    out = student.myst_for_slides(text, {})
    assert "The answer" not in out and "**Careful.** Measure twice." in out and "$$\nt = n / B\n$$" in out
