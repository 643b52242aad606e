"""Exercises as a learner meets them (issue 29): in every stored notebook the answer cell is empty, the checker under
it says "not answered yet", and the solution (code and output) sits behind one toggle and sets solution_N, not the
learner's answer_N (nbval runs it and its assertion proves it correct)."""
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(ROOT.glob("chapters/*/*.ipynb"))


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", "") if o.get("output_type") == "stream" else str(o.get("data", {}).get("text/plain", "")))
    return "".join(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_exercises_are_unanswered_and_solutions_hidden(path):
    nb = nbformat.read(path, as_version=4)
    bad = []
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        tags = c.metadata.get("tags", [])
        if "solution" in tags:
            if "hide-cell" not in tags and "remove-cell" not in tags:
                bad.append(f"cell {i}: a solution cell must be tagged hide-cell (code and output behind a toggle)")
            if re.search(r"^\s*answer_\d+[a-z]?\s*=", c.source, re.M):
                bad.append(f"cell {i}: a solution sets the learner's answer_N; set solution_N")
        elif "exercises.check(" in c.source:
            shown = _text(c)
            if "not answered yet" not in shown or re.search(r": correct\b|'correct'", shown):
                bad.append(f"cell {i}: the stored checker must say 'not answered yet', not {shown.strip()[:80]!r}")
    assert not bad, f"{path.relative_to(ROOT)}: " + "; ".join(bad)
