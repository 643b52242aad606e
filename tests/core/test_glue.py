"""helpers.core.glue writes what MyST-NB's glue writes, so {glue:text} finds the cell's value."""
import pytest

from helpers.core import glue


def test_glue_outside_a_kernel_records_nothing_and_shows_nothing():
    assert glue.glue("x_ms", 1.5) is None


def test_glue_in_a_kernel_matches_myst_nb(monkeypatch):
    shown = []
    import IPython
    import IPython.display

    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw, metadata: shown.append((obj, metadata)))
    glue.glue("ratio", 0.5)
    glue.glue("name", "H200 SXM")
    assert shown[0] == ({"application/papermill.record/text/plain": "0.5"},
                        {"scrapbook": {"name": "ratio", "mime_prefix": "application/papermill.record/"}})
    assert shown[1][0] == {"application/papermill.record/text/plain": "H200 SXM"}     # no quotes


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="glue name"):
        glue.glue("two words", 1)
