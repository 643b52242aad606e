"""The one input layer every reader opens its files and helper programs through (every chapter that reads a tool's
output: 03 fabric, 05 node health, 10 profiling, 12–13 operations, 15 resilience).

A reader is handed whatever a user types, and a path can be anything: a FIFO that blocks forever, ``/dev/zero`` that
never ends, a folder, a million-line log. So a file is opened here only after ``os.stat`` says it is a regular file
(a FIFO is never opened), the bytes and lines read are capped (the message names the cap and the variable that
raises it), and text is decoded by one stated policy: UTF-8, undecodable bytes replaced by U+FFFD, a NUL byte in
the first 64 KiB refused as binary. Every file read is registered, so ``--out`` can refuse to overwrite an input
(:func:`check_output`). Helper programs (``nvidia-smi``, ``promtool``, ``ncu``, ``dmesg`` …) run through
:func:`run_program`: a time limit, the whole process group killed past it, one line saying so. Numbers in parsed
output go through :func:`number`: ASCII digits only, finite, not negative where the quantity cannot be.
Checkpoints load with ``torch.load(weights_only=True)`` unless the user explicitly trusts the file.

Errors: :class:`BadInput` (a ``ValueError``: exit 2, the user's input is wrong) and :class:`ProgramFailed`
(a ``RuntimeError``: exit 1, a helper program hung, failed or printed garbage — the user gave nothing wrong).
"""
from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

MAX_BYTES = 128 * 2**20            # 128 MiB: far beyond any log these readers meet; BOOK_MAX_INPUT_BYTES raises it
MAX_ROWS = 500_000                 # lines (a 1e6-row file is refused); BOOK_MAX_INPUT_ROWS raises it
PROGRAM_TIMEOUT_S = 60.0           # BOOK_PROGRAM_TIMEOUT_S raises it


class BadInput(ValueError):
    """The user's input is wrong (exit 2): not a regular file, too big, not a number, an unsafe checkpoint …"""


class ProgramFailed(RuntimeError):
    """A helper program hung, could not run, or printed what it should not (exit 1: the user gave nothing wrong)."""


_INPUTS: dict[tuple[int, int], str] = {}        # (st_dev, st_ino) -> the path as read, for every file read


def forget_inputs() -> None:
    """A new run starts with no inputs (``cli.run`` calls this)."""
    _INPUTS.clear()


def register(path: str | os.PathLike) -> None:
    """Remember ``path`` as one of this run's inputs (done by every read here; ``cli.run`` also registers the
    existing files named on the command line), so :func:`check_output` can refuse to write over it."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        _INPUTS[(st.st_dev, st.st_ino)] = str(path)


def _env_int(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return number(text, what=name, allow_zero=False)
    except BadInput as e:
        raise BadInput(f"{e} (unset {name} for the default {default:g})") from None


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def regular_file(path: str | os.PathLike, what: str = "input") -> Path:
    """``path`` if it names an existing regular file (symlinks followed); otherwise BadInput naming what it is.
    Uses ``os.stat`` only: a FIFO or device is never opened."""
    text = os.fspath(path)
    if not str(text).strip():
        raise BadInput(f"{what}: an empty path: give a file name")
    try:
        st = os.stat(text)
    except FileNotFoundError:
        raise BadInput(f"{what} {text!r} does not exist") from None
    except (OSError, ValueError) as e:
        raise BadInput(f"{what} {text!r}: cannot stat it ({e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"{what} {text!r} is {_kind(st.st_mode)}, not a regular file: give the file itself")
    return Path(text)


def read_bytes(path: str | os.PathLike, *, what: str = "input", max_bytes: float | None = None) -> bytes:
    """The bytes of a regular file, refused (never partly read) beyond ``max_bytes``."""
    p = regular_file(path, what)
    cap = int(max_bytes if max_bytes is not None else _env_int("BOOK_MAX_INPUT_BYTES", MAX_BYTES))
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except PermissionError:
        raise                                    # the caller decides (a sysfs file root alone may read)
    except OSError as e:
        raise BadInput(f"{what} {str(p)!r}: cannot open it ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())                 # the file opened is the file checked (no swap in between)
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{what} {str(p)!r} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > cap:
            raise BadInput(f"{what} {str(p)!r} is {st.st_size} bytes, over the {cap} B cap: "
                           f"set BOOK_MAX_INPUT_BYTES to read it anyway")
        data = f.read(cap + 1)
    if len(data) > cap:
        raise BadInput(f"{what} {str(p)!r} is over the {cap} B cap: set BOOK_MAX_INPUT_BYTES to read it anyway")
    _INPUTS[(st.st_dev, st.st_ino)] = str(p)
    return data


def decode(data: bytes, *, what: str = "input", max_rows: float | None = None) -> str:
    """The decoding policy: UTF-8 (a BOM dropped), bad bytes -> U+FFFD, NUL in the first 64 KiB -> refused as
    binary, at most ``max_rows`` lines."""
    if b"\x00" in data[:65536]:
        raise BadInput(f"{what} holds NUL bytes: it is binary, not the text output expected")
    rows_cap = int(max_rows if max_rows is not None else _env_int("BOOK_MAX_INPUT_ROWS", MAX_ROWS))
    rows = data.count(b"\n")
    if rows > rows_cap:
        raise BadInput(f"{what} has {rows} lines, over the {rows_cap}-line cap: "
                       f"set BOOK_MAX_INPUT_ROWS to read it anyway")
    return data.decode("utf-8-sig", errors="replace")


def read_text(path: str | os.PathLike, *, what: str = "input", max_bytes: float | None = None,
              max_rows: float | None = None) -> str:
    """A regular file's text: capped in bytes and lines, decoded by :func:`decode`'s policy."""
    return decode(read_bytes(path, what=what, max_bytes=max_bytes), what=f"{what} {os.fspath(path)!r}",
                  max_rows=max_rows)


def iter_lines(path: str | os.PathLike, **kw) -> list[str]:
    """:func:`read_text` split into lines (line ends dropped)."""
    return read_text(path, **kw).splitlines()


def read_json(path: str | os.PathLike, *, what: str = "JSON input", allow_nan: bool = False, **kw):
    """A JSON file through :func:`read_text`; malformed JSON is BadInput with the line and column, and so are
    ``NaN``/``Infinity`` (which Python's parser accepts by default) unless ``allow_nan``."""
    import json

    def constant(name):
        if allow_nan:
            return float(name.replace("Infinity", "inf"))
        raise BadInput(f"{what} {os.fspath(path)!r} holds {name}: not a measurement")
    try:
        return json.loads(read_text(path, what=what, **kw), parse_constant=constant)
    except json.JSONDecodeError as e:
        raise BadInput(f"{what} {os.fspath(path)!r} is not valid JSON: {e}") from None


def read_yaml(path: str | os.PathLike, *, what: str = "YAML input", **kw):
    """A YAML file through :func:`read_text` with ``yaml.safe_load`` (never a loader that builds objects)."""
    import yaml
    try:
        return yaml.safe_load(read_text(path, what=what, **kw))
    except yaml.YAMLError as e:
        raise BadInput(f"{what} {os.fspath(path)!r} is not valid YAML: {' '.join(str(e).split())}") from None


def check_output(path: str | os.PathLike) -> None:
    """Refuse an output path that exists and is not a regular file (device, FIFO, socket, folder) or that is —
    by real path or by hard link (same device and inode) — one of this run's inputs."""
    text = os.fspath(path)
    try:
        st = os.stat(text)
    except FileNotFoundError:
        return
    except OSError as e:
        raise BadInput(f"--out {text!r}: cannot stat it ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"--out {text!r} is {_kind(st.st_mode)}: give a regular file name (it would be replaced)")
    src = _INPUTS.get((st.st_dev, st.st_ino))
    if src is not None:
        same = "the same file" if os.path.realpath(src) == os.path.realpath(text) else "a hard link to"
        raise BadInput(f"--out {text!r} is {same} the input {src!r}: writing it would destroy the input; "
                       f"give another file name")


# ---- numbers ---------------------------------------------------------------------------------------------------
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INT = re.compile(r"[+-]?[0-9]+")


def number(text, *, what: str = "value", allow_negative: bool = False, allow_zero: bool = True,
           integer: bool = False):
    """THE strict number parser: ASCII digits only (``'１２'`` and ``'٣'`` are refused, though ``float`` takes
    them), no NaN or infinity (``'1e400'`` is infinity), no negative unless ``allow_negative``, no zero unless
    ``allow_zero``. Returns an int when ``integer`` else a float; BadInput naming ``what`` otherwise. A value that
    is already a number (from JSON) gets the same checks."""
    if isinstance(text, bool) or text is None:
        raise BadInput(f"{what}: {text!r} is not a number")
    if isinstance(text, (int, float)):
        text = repr(text) if isinstance(text, int) or text == text and abs(text) != float("inf") else "nan"
        if integer and "." in text:
            raise BadInput(f"{what}: {text} is not an integer")
    s = str(text).strip()
    if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise BadInput(f"{what}: {s!r} is not a finite number")
    if not s.isascii() or not (_INT if integer else _FLOAT).fullmatch(s):
        raise BadInput(f"{what}: {s[:40]!r} is not a{'n integer' if integer else ' number'} (ASCII digits only)")
    x = int(s) if integer else float(s)
    if not integer and x != x or x in (float("inf"), float("-inf")):
        raise BadInput(f"{what}: {s[:40]!r} is not a finite number")
    if x < 0 and not allow_negative:
        raise BadInput(f"{what}: {s[:40]!r} is negative, which this quantity cannot be")
    if x == 0 and not allow_zero:
        raise BadInput(f"{what}: {s[:40]!r} is zero, which this quantity cannot be")
    return x


# ---- helper programs -------------------------------------------------------------------------------------------
def run_program(argv: list[str], *, timeout_s: float | None = None, what: str | None = None,
                env: dict | None = None, cwd: str | os.PathLike | None = None,
                max_bytes: float | None = None, max_rows: float | None = None) -> subprocess.CompletedProcess:
    """Run a helper program with a time limit; past it the program's whole process group is killed (a shell
    script's ``sleep`` child too) and :class:`ProgramFailed` says so in one line. A missing program raises
    ``FileNotFoundError`` (callers decide whether that is a fallback). Output beyond ``max_bytes`` is refused.
    ``BOOK_PROGRAM_TIMEOUT_S``, when set, replaces every program's limit (the caller's ``timeout_s`` included)."""
    name = what or os.path.basename(str(argv[0]))
    limit = _env_int("BOOK_PROGRAM_TIMEOUT_S", timeout_s if timeout_s is not None else PROGRAM_TIMEOUT_S)
    p = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         env=env, cwd=cwd, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        raise ProgramFailed(f"{name} did not finish within {limit:g} s and was killed (a hung driver or "
                            f"daemon?); set BOOK_PROGRAM_TIMEOUT_S to wait longer") from None
    except BaseException:
        _kill_group(p)
        raise
    cap = int(max_bytes if max_bytes is not None else _env_int("BOOK_MAX_INPUT_BYTES", MAX_BYTES))
    if len(out) > cap:
        raise ProgramFailed(f"{name} printed {len(out)} bytes, over the {cap} B cap; set BOOK_MAX_INPUT_BYTES")
    rows_cap = int(max_rows if max_rows is not None else _env_int("BOOK_MAX_INPUT_ROWS", MAX_ROWS))
    rows = out.count(b"\n")
    if rows > rows_cap:
        raise ProgramFailed(f"{name} printed {rows} lines, over the {rows_cap}-line cap; "
                            "set BOOK_MAX_INPUT_ROWS")
    text = lambda b: b.decode("utf-8", errors="replace")    # noqa: E731
    return subprocess.CompletedProcess(list(argv), p.returncode, text(out), text(err))


def _kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass


# ---- checkpoints -----------------------------------------------------------------------------------------------
def load_checkpoint(path: str | os.PathLike, *, trust: bool = False, map_location: str = "cpu"):
    """``torch.load`` of a checkpoint with ``weights_only=True`` (tensors, numbers, strings, dicts: no code can
    run); ``trust=True`` (the tools' ``--trust-checkpoint``) loads full pickle and says so on stderr."""
    p = regular_file(path, "checkpoint")
    register(p)
    import pickle

    import torch
    if trust:
        print(f"warning: loading checkpoint {str(p)!r} with full pickle (--trust-checkpoint): any code in it runs",
              file=sys.stderr)
        return torch.load(p, map_location=map_location, weights_only=False)
    import warnings
    try:
        with warnings.catch_warnings():          # torch warns about the pickle protocol of a file it then refuses
            warnings.simplefilter("ignore")
            return torch.load(p, map_location=map_location, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, AttributeError, TypeError) as e:
        raise BadInput(f"checkpoint {str(p)!r} holds more than weights (weights_only=True refused it: "
                       f"{' '.join(str(e).split())[:160]}); if you made it yourself, add --trust-checkpoint") from None
