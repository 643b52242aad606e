"""The work file a storage benchmark runs on, and what its file system allows (chapter 04).

:func:`workfile` checks the folder (:func:`check_dir`: exists, is a folder, is writable, has room), creates one
fresh, uniquely named file in it, writes it full of incompressible random data (:func:`layout`), and removes it
on success, on error and on an interrupt (``iobench``'s CLI turns SIGTERM into one) — it never touches a file
it did not create. :func:`direct_supported` asks the file system whether ``O_DIRECT`` works there,
:func:`fs_type` names the file system, and :func:`drop_cache` / :func:`warm_cache` put a file's pages out of /
into the page cache before a timed read.
:mod:`helpers.storage.iobench` and :mod:`helpers.storage.fio` run their tests on this file.
"""
from __future__ import annotations

import mmap
import os
import secrets
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

_MARGIN_BYTES = 64 * 2**20          # free space kept beyond the work file


class IOBenchError(RuntimeError):
    """A refusal or failure with a one-line reason that names the value and the fix."""


def fs_type(path: str | os.PathLike) -> str:
    """Filesystem type of ``path`` from /proc/mounts (longest matching mount point), or "unknown"."""
    p, best, kind = str(Path(path).resolve()), -1, "unknown"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            f = line.split()
            mnt = f[1].replace("\\040", " ")
            if (p == mnt or p.startswith(mnt.rstrip("/") + "/")) and len(mnt) > best:
                best, kind = len(mnt), f[2]
    except OSError:
        pass
    return kind


def check_dir(path: str | os.PathLike, size_bytes: int) -> Path:
    """Refuse, with a one-line reason, a DIR that is missing, not a folder, read-only or too small."""
    d = Path(path)
    if size_bytes < 2**20:
        raise IOBenchError(f"--size {size_bytes} bytes is too small: use at least 1MiB")
    if not d.exists():
        raise IOBenchError(f"--path {str(d)!r} does not exist: pass an existing directory")
    if not d.is_dir():
        raise IOBenchError(f"--path {str(d)!r} is not a directory: pass the folder to test, not a file")
    probe = d / f".iobench-probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.touch(exist_ok=False)
        probe.unlink()
    except OSError as e:
        raise IOBenchError(f"--path {str(d)!r} is not writable ({e.strerror}): pass a directory you can write to") from None
    free = shutil.disk_usage(d).free
    if free < size_bytes + _MARGIN_BYTES:
        raise IOBenchError(f"--path {str(d)!r} has {free / 2**20:.0f} MiB free but --size needs "
                           f"{(size_bytes + _MARGIN_BYTES) / 2**20:.0f} MiB (file + 64 MiB margin): pass a smaller --size")
    return d


def fill_random(buf: mmap.mmap, seed: int) -> None:
    """Fill ``buf`` with seeded random bytes."""
    buf[:] = np.random.default_rng(seed).bytes(len(buf))   # incompressible, so no device can cheat


def layout(path: Path, size_bytes: int, seed: int = 0) -> None:
    """Write ``size_bytes`` of random data to ``path`` (untimed), flush it, and drop it from the page cache."""
    blk = 2**20
    buf = mmap.mmap(-1, blk)
    fill_random(buf, seed)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for off in range(0, size_bytes, blk):
            os.pwritev(fd, [memoryview(buf)[: min(blk, size_bytes - off)]], off)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@contextmanager
def workfile(directory: str | os.PathLike, size_bytes: int, seed: int = 0):
    """Create and lay out one work file under ``directory``; yield its Path; always remove it."""
    d = check_dir(directory, size_bytes)
    p = d / f"iobench-{os.getpid()}-{secrets.token_hex(4)}.dat"
    try:
        os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        layout(p, size_bytes, seed)
        yield p
    finally:
        p.unlink(missing_ok=True)


def direct_supported(path: str | os.PathLike) -> tuple[bool, str]:
    """Can ``path`` (an existing file, at least 4 KiB) be read with O_DIRECT? Returns (ok, reason)."""
    kind = fs_type(path)
    if not hasattr(os, "O_DIRECT"):
        return False, f"this OS ({sys.platform}) has no O_DIRECT; direct tests run buffered"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:
        return False, f"{kind} refuses O_DIRECT ({e.strerror}); direct tests run buffered with a cold cache"
    try:
        os.preadv(fd, [mmap.mmap(-1, 4096)], 0)
    except OSError as e:
        return False, f"{kind} refuses O_DIRECT reads ({e.strerror}); direct tests run buffered with a cold cache"
    finally:
        os.close(fd)
    return True, f"O_DIRECT works on {kind}"


def drop_cache(fd: int) -> None:
    """Flush dirty pages, then ask the kernel to drop this file's pages (clean pages only go)."""
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def warm_cache(fd: int, size: int) -> None:
    """Read the whole file once, 1 MiB at a time, so its pages are in the page cache."""
    buf = mmap.mmap(-1, 2**20)
    for off in range(0, size, 2**20):
        os.preadv(fd, [buf], off)
