"""helpers.core.progress: items pass through unchanged, and nothing is printed under BOOK_QUIET=1."""
from helpers.core import progress


def test_quiet_progress_yields_items_and_prints_nothing(monkeypatch, capsys):
    monkeypatch.setenv("BOOK_QUIET", "1")
    assert progress.quiet()
    assert list(progress.progress(iter(range(5)), "sweep")) == [0, 1, 2, 3, 4]
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("BOOK_QUIET", "0")
    assert not progress.quiet()
    assert list(progress.progress([1, 2], "sweep", total=2)) == [1, 2]     # not a tty here: still silent
