"""Exercise checkers: every exercise with a numeric or code answer ends with a cell that says whether it is right.

A chapter's exercise is three cells (the convention ``make student`` relies on):

1. an answer cell, tagged ``exercise``: ``answer_1 = None  # your number (GB/s)`` — what the student fills in;
2. the solution, tagged ``solution`` and ``hide-cell`` (code and output behind one toggle): it sets ``solution_1``,
   never ``answer_1``, and asserts ``status(solution_1, expected=…) == "correct"`` — so nbval proves every solution
   on every run, while the learner's answer stays empty (student notebooks drop the cell);
3. the checker, tagged ``hide-input``: ``exercises.check("Exercise 1", answer_1, expected=…, rel_tol=0.01)``, where
   ``expected`` comes from the helpers (never a typed constant the prose could contradict).

``check`` prints one line — "not answered yet", "correct" or "not yet: …" with a hint — so the stored notebook, which
the book shows, says "not answered yet" under the empty answer. It returns the status (a ``str`` that displays
nothing, so a checker cell prints its line and no stray ``'not answered yet'``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

NOT_ANSWERED, CORRECT, NOT_YET = "not answered yet", "correct", "not yet"


class Status(str):
    """The status string ``check`` returns; as a cell's last value it displays nothing (its line is printed)."""

    def _ipython_display_(self) -> None:
        pass


def status(answer: Any, expected: Any = None, rel_tol: float = 1e-6, abs_tol: float = 0.0,
           test: Callable[[Any], bool] | None = None) -> str:
    """The status of ``answer``: numbers within ``rel_tol``/``abs_tol``; sequences element-wise; ``test(answer)``
    for answers that are code or a set of valid choices (``test`` returns True when correct)."""
    if answer is None or answer is Ellipsis:
        return NOT_ANSWERED
    if isinstance(answer, (list, tuple)) and answer and all(a is None or a is Ellipsis for a in answer):
        return NOT_ANSWERED                      # an answer in parts, none filled in yet
    if test is not None:
        return CORRECT if test(answer) else NOT_YET
    if isinstance(expected, (list, tuple)):
        if not isinstance(answer, (list, tuple)) or len(answer) != len(expected):
            return NOT_YET
        ok = all(status(a, e, rel_tol, abs_tol) == CORRECT for a, e in zip(answer, expected))
        return CORRECT if ok else NOT_YET
    if isinstance(expected, bool) or isinstance(expected, str):
        return CORRECT if answer == expected else NOT_YET
    try:
        a, e = float(answer), float(expected)
    except (TypeError, ValueError):
        return NOT_YET
    return CORRECT if math.isclose(a, e, rel_tol=rel_tol, abs_tol=abs_tol) else NOT_YET


def check(name: str, answer: Any, expected: Any = None, rel_tol: float = 1e-6, abs_tol: float = 0.0,
          test: Callable[[Any], bool] | None = None, hint: str = "", unit: str = "") -> str:
    """Print and return the status line of one exercise (see the module docstring for the three-cell pattern)."""
    s = status(answer, expected, rel_tol, abs_tol, test)
    if s == NOT_ANSWERED:
        print(f"{name}: {NOT_ANSWERED} — set the answer in the cell above and run this cell again")
    elif s == CORRECT:
        print(f"{name}: {CORRECT}")
    else:
        shown = f"{answer!r}{(' ' + unit) if unit else ''}"
        print(f"{name}: {NOT_YET}: {shown} is not it" + (f" — hint: {hint}" if hint else ""))
    return Status(s)
