"""Sizes as people type them: ``4096``, ``64K``, ``64KiB``, ``1GiB``, ``1GB`` (used by every benchmark CLI).

K/M/G/T alone or with ``iB`` are powers of 2, as in nccl-tests' ``-b/-e`` and fio's ``bs=``; ``KB``/``MB``/``GB``
(a ``B`` with no ``i``) are powers of 10. The book's units legend: 1 GB = 10^9 bytes, 1 GiB = 2^30 bytes.
Imports no other helper.
"""
from __future__ import annotations

import re

_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTkmgt]?)(i?)([Bb]?)\s*")


def parse_size(text: str | int) -> int:
    """Bytes in ``text``; raises ValueError naming the bad value and how to write it."""
    if isinstance(text, int):
        return text
    m = _SIZE.fullmatch(str(text))
    if not m:
        raise ValueError(f"size {text!r}: write bytes as a number with an optional K, M or G suffix, "
                         "e.g. 4096, 64K, 64MiB or 1GiB (KB/MB/GB are powers of 10)")
    num, prefix, i, b = m.groups()
    base = 1000 if (b and not i and prefix) else 1024
    return int(float(num) * base ** _POWER[prefix.upper()])
