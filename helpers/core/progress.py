"""Progress for long sweeps: visible when a person runs a notebook, silent when the book is built.

Chapter 01 ("How to run this book") explains the rule: a stored notebook output must be the same on every
run, so progress bars must never land in it. ``make notebooks``, ``make test`` and the book build set
``BOOK_QUIET=1``; a learner's Jupyter does not, so they see a line that updates in place and disappears.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def quiet() -> bool:
    """True when progress must stay out of outputs (book build, nbval, CI, non-interactive runs)."""
    return os.environ.get("BOOK_QUIET", "") not in ("", "0")


def _in_kernel() -> bool:
    if "IPython" not in sys.modules:
        return False
    ip = sys.modules["IPython"].get_ipython()
    return ip is not None and hasattr(ip, "kernel")


def progress(items: Iterable[T], desc: str = "", total: int | None = None) -> Iterator[T]:
    """Yield ``items`` unchanged, showing ``desc  i/total`` while a person watches.

    In a Jupyter kernel the line is a display that is updated in place and emptied at the end; on a
    terminal it goes to stderr with a carriage return. Under ``BOOK_QUIET=1`` nothing is shown.
    """
    items = list(items) if total is None and not hasattr(items, "__len__") else items
    n = total if total is not None else len(items)  # type: ignore[arg-type]
    if quiet():
        yield from items
        return
    if _in_kernel():
        from IPython.display import display

        handle = display({"text/plain": f"{desc} 0/{n}"}, raw=True, display_id=True)
        try:
            for i, item in enumerate(items, 1):
                yield item
                handle.update({"text/plain": f"{desc} {i}/{n}"}, raw=True)
        finally:
            handle.update({"text/plain": ""}, raw=True)
        return
    tty = sys.stderr.isatty()
    for i, item in enumerate(items, 1):
        yield item
        if tty:
            print(f"\r{desc} {i}/{n}", end="", file=sys.stderr, flush=True)
    if tty:
        print("\r" + " " * (len(desc) + 24) + "\r", end="", file=sys.stderr, flush=True)
