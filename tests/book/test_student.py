"""scripts/student.py: student notebooks lose solutions, keep answer and checker cells, and run to "not answered yet"."""
import importlib.util
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
