"""A claim about wall time measured on the reader's own machine, checked without failing on a noisy one.

A timing order ("a cached read beats a device read") holds on a quiet machine and can flip on a busy, shared one:
the book's 2-core CI runner once measured a 1 MiB host copy slower than a 64 MiB one. Speed is judged by
benchmarks, not by assertions, so a notebook cell checks such a claim with :func:`measured`: where it held, nothing
is printed; where it did not, the cell prints one line starting with :data:`MARK` and carries on.
``tests/book/test_measured_claims.py`` fails if a stored notebook — the run the prose quotes — carries that line, so
every published claim was seen in the published run. Claims that do not depend on the machine's speed (counts,
bytes, a model's output) stay plain ``assert`` statements.
"""
from __future__ import annotations

MARK = "⚠ not seen on this machine:"


def measured(ok: bool, claim: str, detail: str = "") -> bool:
    """``ok`` is the claim evaluated on this run; print why it did not hold (and what was measured) and return it."""
    if not ok:
        print(f"{MARK} {claim}" + (f" (measured: {detail})" if detail else "")
              + ". A busy or shared machine can do this; re-run the cell on a quiet one.")
    return bool(ok)
