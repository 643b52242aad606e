"""helpers.core.exercises: the three statuses of an exercise checker (every chapter's exercises)."""
from helpers.core import exercises as ex


def test_status_numbers_sequences_and_tests():
    assert ex.status(None, 1.0) == ex.NOT_ANSWERED
    assert ex.status(1.004, 1.0, rel_tol=0.01) == ex.CORRECT and ex.status(1.2, 1.0, rel_tol=0.01) == ex.NOT_YET
    assert ex.status([1, 2], [1, 2]) == ex.CORRECT and ex.status([1], [1, 2]) == ex.NOT_YET
    assert ex.status("ring", "ring") == ex.CORRECT and ex.status("abc", 1.0) == ex.NOT_YET
    assert ex.status(7, test=lambda a: a % 7 == 0) == ex.CORRECT


def test_check_prints_one_line_with_the_hint(capsys):
    assert ex.check("Exercise 9", 3.0, expected=4.0, hint="count again", unit="GB") == ex.NOT_YET
    assert capsys.readouterr().out == "Exercise 9: not yet: 3.0 GB is not it — hint: count again\n"
    ex.check("Exercise 9", None, expected=4.0)
    assert "not answered yet" in capsys.readouterr().out


def test_an_answer_in_parts_none_filled_is_not_answered():
    from helpers.core import exercises
    assert exercises.status([None, None], expected=[1, 2]) == exercises.NOT_ANSWERED
    assert exercises.status([1, None], expected=[1, 2]) == exercises.NOT_YET
