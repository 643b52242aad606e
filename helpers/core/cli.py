"""The one error boundary of every tool, and argument types that validate before any work starts.

Every tool's ``main(argv)`` runs inside :func:`run` — from ``python -m helpers TOOL`` and from
``python -m helpers.WING.MODULE`` alike — so bad input never ends in a Python traceback:

* exit 2 and one line on stderr for bad input (``ValueError``, ``argparse`` errors, a file that is not there);
* exit 1 and one line for a run that failed (a rank that died, an ``OSError`` writing output, a timeout);
* ``--debug`` (or ``BOOK_DEBUG=1``) re-raises, with the traceback, for whoever is fixing the tool.

The argument types (``positive_int``, ``size_bytes`` …) reject a bad value at parse time with the value and the fix,
so a tool never silently replaces it by a default.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from helpers.core import inputs, procs, units

BAD_INPUT = 2
RUN_FAILED = 1


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 600 else text[:597] + "..."


def run(main: Callable[[list[str] | None], int | None], argv: Sequence[str] | None = None, prog: str = "") -> int:
    """Call ``main(argv)`` and turn the library's exceptions into one stderr line and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("BOOK_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    name = prog or "python -m helpers"
    # SIGTERM / SIGHUP become an exception in the main thread, so every `finally` and `with` of the tool runs:
    # work files, datasets, log folders and ranks are cleaned up exactly as after Ctrl-C.
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            saved[sig] = signal.signal(sig, procs.raise_stop)
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:    # started with SIGINT ignored (nohup, xdist)
            saved[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    # argparse prints a multi-line usage before its error; every tool answers bad input with ONE line instead
    # (patched here, in the one boundary, rather than in two dozen parsers; restored in `finally`).
    saved_error = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = _one_line_argparse_error
    _register_named_inputs(args)
    _RUN_TMP.append(None)                        # run_tmpdir() fills it in when a tool asks for one
    procs.last_signal = None
    try:
        return int(main(args) or 0)
    except procs.Stopped as e:
        print(f"{name}: stopped by signal {int(e.code) - 128}; cleaned up", file=sys.stderr)
        return int(e.code)
    except SystemExit as e:                      # argparse: it has printed its own usage line already
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else BAD_INPUT)
        if not isinstance(e.code, (int, type(None))):
            print(f"{name}: {e.code}", file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:                       # noqa: BLE001 - this *is* the boundary
        if procs.last_signal is not None:        # a signal's Stopped, rewrapped by C code (torch.save: RuntimeError)
            print(f"{name}: stopped by signal {procs.last_signal}; cleaned up", file=sys.stderr)
            return 128 + procs.last_signal
        if debug:
            raise
        # bad input (2): the user's value, file or inventory is wrong (malformed JSON is a ValueError; YAML too);
        # a failed run (1): everything else, including a helper program's garbage output (inputs.ProgramFailed)
        bad_input = isinstance(e, (ValueError, KeyError, FileNotFoundError, IsADirectoryError, NotADirectoryError,
                                   argparse.ArgumentTypeError)) or type(e).__module__.split(".")[0] == "yaml"
        kind = "bad input" if bad_input else f"failed ({type(e).__name__})"
        print(f"{name}: {kind}: {_one_line(e)}  (add --debug for the traceback)", file=sys.stderr)
        return BAD_INPUT if bad_input else RUN_FAILED
    finally:
        argparse.ArgumentParser.error = saved_error
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        _remove_run_tmp(_RUN_TMP.pop())


# ---- a per-run temporary folder (distributed tools: torch.compile's inductor cache), removed on every exit --------

_RUN_TMP: list = []          # one entry per cli.run in progress: None, or (folder, the variable's previous value)


def run_tmpdir() -> str | None:
    """Inside :func:`run`: a temporary folder for this run, removed when the tool ends — after a signal too — and
    ``TORCHINDUCTOR_CACHE_DIR`` pointed inside it unless the user set it (so torch.compile's caches do not pile up
    in TMPDIR). None outside ``cli.run`` (a notebook keeps its own caches)."""
    import tempfile

    if not _RUN_TMP:
        return None
    if _RUN_TMP[-1] is None:
        folder = tempfile.mkdtemp(prefix="book-run-")
        _RUN_TMP[-1] = (folder, os.environ.get("TORCHINDUCTOR_CACHE_DIR"))
        os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(folder, "inductor"))
    return _RUN_TMP[-1][0]


def _remove_run_tmp(entry) -> None:
    import shutil

    if entry is None:
        return
    folder, previous = entry
    if previous is None:
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    shutil.rmtree(folder, ignore_errors=True)


def _register_named_inputs(args: list[str]) -> None:
    """Every existing regular file named on the command line (other than ``--out``'s) is an input of this run:
    ``--out`` may not overwrite it (``inputs.check_output``). Readers also register what they open."""
    inputs.forget_inputs()
    skip = False
    for a in args:
        if skip or a == "--out" or a.startswith("--out="):
            skip = a == "--out"
            continue
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if value and not value.startswith("-") and "\x00" not in value:
            inputs.register(value)


def _one_line_argparse_error(parser: argparse.ArgumentParser, message: str):
    print(f"{parser.prog}: bad input: {_one_line(message)}  (see --help)", file=sys.stderr)
    raise SystemExit(BAD_INPUT)


# ---- argument types: each raises ArgumentTypeError naming the value and what would be accepted ----------------

def _number(text: str, kind=float) -> float:
    if not str(text).isascii() or "_" in str(text):     # int() and float() take '١٢', '１２' and '1_0'
        raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number "
                                         "(ASCII digits only)")
    try:
        x = kind(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
    if kind is float and not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return x


def bounded_int(lo: int, hi: int) -> Callable[[str], int]:
    """An integer in [lo, hi], e.g. ``type=bounded_int(1, 64)`` for a world size."""
    def parse(text: str) -> int:
        x = int(_number(text, int))
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"{x} is out of range: give {lo}..{hi}")
        return x
    parse.__name__ = f"integer {lo}..{hi}"
    return parse


def bounded_float(lo: float, hi: float, lo_open: bool = False) -> Callable[[str], float]:
    """A finite float in [lo, hi] (``lo_open=True`` for (lo, hi])."""
    def parse(text: str) -> float:
        x = _number(text)
        if not (lo < x if lo_open else lo <= x) or x > hi:
            raise argparse.ArgumentTypeError(f"{x:g} is out of range: give {'(' if lo_open else '['}{lo:g}, {hi:g}]")
        return x
    parse.__name__ = f"number {lo:g}..{hi:g}"
    return parse


positive_int = bounded_int(1, 2**31 - 1)
positive_float = bounded_float(0.0, 1e18, lo_open=True)
# ranks: beyond 4 per core (or the 8 GPUs of one host) a CPU run only thrashes; say so instead of hanging
MAX_WORLD_SIZE = procs.local_rank_limit()[0]
world_size = bounded_int(1, MAX_WORLD_SIZE)
timeout_s = bounded_float(0.0, 24 * 3600.0, lo_open=True)      # a run's limit in seconds: (0, one day]
repeats = bounded_int(1, 100_000)


def size_bytes(lo: int = 1, hi: int = 2**50) -> Callable[[str], int]:
    """A size such as ``512MiB``, ``4K`` or ``1048576`` (bytes) in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            n = units.parse_size(text)
        except (TypeError, ValueError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError(f"{text!r} = {n} B is out of range: give {lo}..{hi} bytes")
        return n
    parse.__name__ = "size"
    return parse


def nonempty_path(text: str) -> str:
    """A path that is not the empty string (which would silently mean the working directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path: give a folder or file name")
    return text


def out_file(text: str) -> str:
    """``--out FILE``: checked before the run starts (not empty, not a folder, device, FIFO or socket, not one of
    the run's input files, its folder existing and writable), so an hour of measuring never ends in "permission
    denied" or a destroyed input. Nothing is created here, and no folder ever is for it (the one output layer:
    ``records.save`` re-checks at write time and writes via an exclusive temporary file + rename)."""
    if not text.strip() or "\x00" in text:
        raise argparse.ArgumentTypeError("an empty file name: give --out a path such as results/x.json")
    p = os.path.abspath(text)
    if os.path.isdir(p):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file name inside it, e.g. {text}/x.json")
    try:
        inputs.check_output(p)
    except inputs.BadInput as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if os.path.exists(p) and not os.access(p, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not writable")
    parent = os.path.dirname(p)
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"{text!r}: its folder {parent} does not exist; create it first "
                                         "(--out creates no folder)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: cannot write in {parent} (not a writable folder)")
    return text


def existing_dir(text: str) -> str:
    """A folder that exists (for work files: the tool creates its own uniquely named files inside it)."""
    nonempty_path(text)
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an existing folder: create it first or pick another")
    if not os.access(text, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable by this user")
    return text


def name_of(choices) -> Callable[[str], str]:
    """One of ``choices`` exactly (a name, never a glob or a prefix)."""
    allowed = tuple(choices)

    def parse(text: str) -> str:
        if text not in allowed:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(allowed)}")
        return text
    parse.__name__ = "name"
    return parse


def csv_of(item: Callable[[str], object]) -> Callable[[str], list]:
    """A comma-separated list, each element parsed by ``item`` (``--world-size 1,2,4``)."""
    def parse(text: str) -> list:
        parts = [p.strip() for p in text.split(",")]
        if not parts or any(not p for p in parts):
            raise argparse.ArgumentTypeError(f"{text!r}: give comma-separated values with none empty")
        return [item(p) for p in parts]
    parse.__name__ = "list"
    return parse


def add_training_args(ap: argparse.ArgumentParser, steps: int, max_steps: int = 100_000) -> None:
    """The options every small training run takes, checked the same way: --steps, --global-batch, --lr, --seed."""
    ap.add_argument("--steps", type=bounded_int(1, max_steps), default=steps)
    ap.add_argument("--global-batch", type=bounded_int(1, 1_000_000), default=8)
    ap.add_argument("--lr", type=bounded_float(0.0, 100.0, lo_open=True), default=1e-2)
    ap.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
