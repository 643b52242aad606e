"""A failed rank in one line: which rank, what failed, the fix, and where the traceback is (chapters 03, 06-08).

``helpers.core.rankspawn`` and ``helpers.core.rankenv`` raise :class:`RankFailed` with a one-line message built here;
the traceback stays in the rank's log file (named in the line) and in ``RankFailed.detail``, and is shown only under
``BOOK_DEBUG=1``. :func:`fix_for` turns the errors a reader meets most into the fix:

* a ``GLOO_SOCKET_IFNAME`` that names no interface → the interfaces this machine has;
* a rendezvous that never completes (``RANK``/``WORLD_SIZE`` set, the other ranks never started) → ``MASTER_ADDR``
  and ``MASTER_PORT``, and how many ranks joined;
* a rank killed by a signal → its signal, and what sends it (the OOM killer, a user, a scheduler).
"""
from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

# c10d's C++ log lines: "[W1208 00:50:42.1 ProcessGroupGloo.cpp:…] …", "[c10d] …", glog's "W1208 00:50:42.15 …]"
_CPP_LOG = re.compile(r"^\s*(\[[WEIF]\d{4} [^\]]*\]|\[c10d\]|[WEIF]\d{4} \d\d:\d\d:\d\d\S* +\d+ \S+\])")


def debug() -> bool:
    """``--debug`` on the command line or ``BOOK_DEBUG=1``: show everything (tracebacks, c10d's C++ log lines)."""
    return os.environ.get("BOOK_DEBUG") == "1" or "--debug" in sys.argv


def quiet(text: str) -> str:
    """``text`` without c10d's C++ log lines (all of it under :func:`debug`)."""
    if debug():
        return text
    return "\n".join(ln for ln in text.splitlines() if not _CPP_LOG.match(ln))


class RankFailed(RuntimeError):
    """A rank raised, died or hung. ``rank`` is the first failing rank (None if unknown); ``detail`` holds the
    traceback or log tail, ``log`` the file that keeps it. ``str()`` is one line (plus the detail under
    ``BOOK_DEBUG=1``)."""

    def __init__(self, rank: int | None, message: str, detail: str = "", ranks: Sequence[int] = (),
                 log: str | None = None):
        self.rank, self.detail, self.log = rank, detail, log
        self.ranks = tuple(ranks) or ((rank,) if rank is not None else ())  # every rank at fault
        self.message = " ".join(message.split())
        text = self.message
        if debug() and detail:
            text += "\n" + detail
        super().__init__(text)


def interfaces() -> list[str]:
    """Network interfaces of this machine (``/sys/class/net``, else ``socket.if_nameindex``)."""
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        import socket
        return sorted(name for _i, name in socket.if_nameindex())


def last_error(traceback_text: str) -> str:
    """The exception line of a traceback (its last non-indented line), shortened."""
    lines = [ln for ln in traceback_text.strip().splitlines()
             if ln.strip() and not ln.startswith((" ", "\t")) and not _CPP_LOG.match(ln)]
    text = " ".join((lines[-1] if lines else traceback_text).split())
    text = re.sub(r"\[enforce fail at [^\]]*\]\s*", "", text)
    return text if len(text) <= 240 else text[:237] + "..."


def signal_name(exitcode: int) -> str:
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def fix_for(error: str) -> str:
    """The fix for a rank's error text, or '' where none is known."""
    ifname = os.environ.get("GLOO_SOCKET_IFNAME") or os.environ.get("NCCL_SOCKET_IFNAME")
    if ifname and ("Unable to find address for" in error or "ifname" in error.lower()):
        return (f"GLOO_SOCKET_IFNAME/NCCL_SOCKET_IFNAME={ifname} names no interface here; this machine has "
                f"{', '.join(interfaces())}: set it to one of them or unset it")
    if re.search(r"Timed out .*clients joined|wait timeout after .*ms.*keys|Socket Timeout|connect.*timed out", error):
        return rendezvous_fix()
    if "out of memory" in error.lower() or "CUDA error: out of memory" in error:
        return "lower the sizes (batch, sequence, model) or use more ranks"
    return ""


def rendezvous_fix() -> str:
    addr, port = os.environ.get("MASTER_ADDR", "(unset)"), os.environ.get("MASTER_PORT", "(unset)")
    world = os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "?"))
    return (f"the process group never formed at MASTER_ADDR={addr} MASTER_PORT={port}: start all {world} ranks "
            "(WORLD_SIZE) with the same MASTER_ADDR/MASTER_PORT, reachable from every rank, or unset RANK and "
            "WORLD_SIZE to let the tool spawn its own local ranks")


def raised(rank: int, world_size: int, traceback_text: str, log: str | None) -> RankFailed:
    """RankFailed for a rank whose worker raised: the exception line, the fix, the log."""
    err = last_error(traceback_text)
    fix = fix_for(traceback_text)
    msg = f"rank {rank} of {world_size} failed: {err}" + (f"; fix: {fix}" if fix else "")
    return RankFailed(rank, msg + _where(log), traceback_text.rstrip(), log=log)


def died(rank: int, world_size: int, exitcode: int, detail: str, log: str | None) -> RankFailed:
    """RankFailed for a rank that died: by a signal (negative exit code) or with an exit code and no traceback."""
    if exitcode < 0:
        msg = (f"rank {rank} of {world_size} died ({signal_name(exitcode)}); the others stopped (a signal from "
               "outside: the kernel's out-of-memory killer (see dmesg), a user or the scheduler)")
    elif "Traceback (most recent call last)" in (text := _read(log) or detail):   # failed loading its worker
        err = last_error(text.rsplit("Traceback (most recent call last)", 1)[1])
        msg = f"rank {rank} of {world_size} failed before it joined the process group: {err}; the others stopped"
    else:
        msg = f"rank {rank} of {world_size} died (exit code {exitcode}) without a Python traceback; the others stopped"
    return RankFailed(rank, msg + _where(log), detail, log=log)


def _read(log: str | None) -> str:
    try:
        return Path(log).read_text(errors="replace") if log else ""
    except OSError:
        return ""


def _where(log: str | None) -> str:
    return f" (its output: {log})" if log else ""


def log_tail(log_dir: str, rank: int, lines: int = 15) -> str:
    """The last lines of a rank's log (c10d's C++ log lines left out unless :func:`debug`), headed by its path."""
    path = Path(log_dir) / f"rank{rank}.log"
    if not path.exists():
        return ""
    tail = quiet(path.read_text(errors="replace")).splitlines()[-lines:]
    head = f"--- last lines of rank {rank}'s output ({path}; the folder is kept for you to read) ---"
    return head + "\n" + "\n".join(tail) if tail else f"(rank {rank} printed nothing; logs kept in {log_dir})"
