"""Numbers from a cell into the prose: ``glue("name", value)`` in a cell, ``{glue:text}`name:.1f``` in the text
(every chapter; MyST-NB's glue, https://myst-nb.readthedocs.io/en/latest/render/glue.html).

The book is built from the stored outputs, so a number glued here is the number the cell computed — prose cannot
drift from output. This writes the same output MyST-NB's ``myst_nb.glue(name, value, display=False)`` writes (a
display_data record keyed ``application/papermill.record/…`` with ``scrapbook`` metadata), without importing
myst-nb, so a notebook also runs where only the notebook stack is installed (a GPU machine, Colab). Strings are
glued without quotes; numbers keep full precision and take a format in the role.
"""
from __future__ import annotations

from typing import Any

PREFIX = "application/papermill.record/"


class _Text(str):
    """A string whose repr is itself, so ``{glue:text}`` shows it without quotes."""

    def __repr__(self) -> str:
        return str(self)


def glue(name: str, value: Any) -> None:
    """Record ``value`` under ``name`` for ``{glue:text}``/``{glue}`` in the prose. Returns None, so a cell that ends
    with a glue shows nothing more (nbval runs cells where a trailing ``;`` does not hide a value)."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"glue name {name!r}: use letters, digits, '_' or '-' (it is typed in the prose)")
    from IPython import get_ipython
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    shown = _Text(value) if isinstance(value, str) else value
    if hasattr(value, "item") and getattr(value, "shape", None) == ():     # numpy / torch scalar -> Python number
        shown = value.item()
    if get_ipython() is None:                     # a plain script: nothing to record into
        return None
    bundle, meta = format_display_data(shown)
    display({PREFIX + k: v for k, v in bundle.items() if k == "text/plain"}, raw=True,
            metadata={"scrapbook": {"name": name, "mime_prefix": PREFIX}})
    return None
