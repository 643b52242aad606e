"""Storage IO benchmark: sequential and random, buffered and O_DIRECT, cold and warm cache (chapter 04).

    python -m helpers iobench --path /tmp --size 256MiB            # a table
    python -m helpers iobench --path /tmp --size 512MiB --json --out assets/measurements/h200/iobench.json

What it runs, each test on one work file it creates under ``--path`` (and nothing else):
sequential read/write with 1 MiB blocks, random read/write with 4 KiB blocks, through the page cache
(buffered) and around it (``O_DIRECT``, where the filesystem allows it), writes with ``fdatasync`` after every
block, buffered reads with a cold cache (dropped with ``posix_fadvise(DONTNEED)``) and a warm one, and a sweep
of threads (= requests in flight, the queue depth of a synchronous engine) for 4 KiB random reads.

Each thread issues ``os.preadv``/``os.pwritev`` — one system call per block, like fio's ``psync`` engine — into
its own buffer from ``mmap`` (page-aligned, as ``O_DIRECT`` requires), timing every call with
``perf_counter_ns``. Random offsets are a seeded permutation of the file's blocks (each block once, like fio's
default random map). The work file (:mod:`helpers.storage.iofile`) is removed on success, on error and on
Ctrl-C/SIGTERM.
"""
from __future__ import annotations

import argparse
import mmap
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli
from helpers.core.units import parse_size  # noqa: F401  (re-exported for callers)
from helpers.storage.iofile import (IOBenchError, direct_supported, drop_cache, fill_random, fs_type, warm_cache,
                                    workfile)

PATTERNS = ("seq_read", "seq_write", "rand_read", "rand_write")
COLUMNS = ["engine", "pattern", "block_bytes", "direct", "threads", "fsync", "cache", "bw_MBps", "iops",
           "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us"]


@dataclass(frozen=True)
class IOResult:
    engine: str             # "helpers" (this module) or "fio/<ioengine>"
    pattern: str            # one of PATTERNS
    block_bytes: int
    direct: bool            # O_DIRECT: bypasses the page cache
    threads: int            # requests in flight: threads here, numjobs × iodepth for fio
    fsync: bool             # fdatasync after every block (writes)
    cache: str              # "cold" / "warm" for buffered reads, "n/a" otherwise
    ops: int
    io_bytes: int
    time_s: float
    bw_MBps: float          # io_bytes / time_s / 1e6
    iops: float             # ops / time_s
    lat_mean_us: float
    lat_p50_us: float
    lat_p90_us: float
    lat_p99_us: float
    lat_p999_us: float


def run(path: str | os.PathLike, pattern: str, block_bytes: int = 2**20, *, direct: bool = False,
        threads: int = 1, fsync: bool = False, cache: str = "cold", runtime_s: float = 2.0,
        seed: int = 0) -> IOResult:
    """One test on an existing work file: ``threads`` threads, each one system call per block, until every
    block was done once or ``runtime_s`` passed. ``cache`` ("cold"/"warm") applies to buffered reads."""
    if pattern not in PATTERNS:
        raise ValueError(f"pattern={pattern!r}: use one of {PATTERNS}")
    if block_bytes < 512 or block_bytes % 512:
        raise ValueError(f"block_bytes={block_bytes}: use a multiple of 512 (4096 for 4 KiB pages)")
    if cache not in ("cold", "warm"):
        raise ValueError(f"cache={cache!r}: use 'cold' or 'warm'")
    size = os.path.getsize(path)
    nblocks = size // block_bytes
    if threads < 1 or nblocks < threads:
        raise ValueError(f"threads={threads}: need 1 ≤ threads ≤ {nblocks} blocks of {block_bytes} B in the file")
    reading = pattern.endswith("read")
    flags = (os.O_RDONLY if reading else os.O_WRONLY) | (os.O_DIRECT if direct else 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise IOBenchError(f"cannot open {path} {'with O_DIRECT ' if direct else ''}({e.strerror}); "
                           "check direct_supported() first") from None
    idx = np.arange(nblocks) if pattern.startswith("seq") else np.random.default_rng(seed).permutation(nblocks)
    parts = np.array_split(idx, threads)       # seq: one contiguous range per thread; rand: a slice each
    lats: list[np.ndarray | None] = [None] * threads
    errors: list[BaseException] = []
    stop = threading.Event()
    workers: list[threading.Thread] = []

    def work(i: int, deadline_ns: int) -> None:
        try:
            buf = mmap.mmap(-1, block_bytes)          # page-aligned: what O_DIRECT needs
            if not reading:
                fill_random(buf, seed + i)
            io = os.preadv if reading else os.pwritev
            offs = (parts[i] * block_bytes).tolist()
            out = np.empty(len(offs), dtype=np.int64)
            n = 0
            for off in offs:
                if stop.is_set():
                    break
                t0 = time.perf_counter_ns()
                done = io(fd, [buf], off)
                if fsync:
                    os.fdatasync(fd)
                t1 = time.perf_counter_ns()
                if done != block_bytes:
                    raise IOBenchError(f"short {'read' if reading else 'write'} of {done} B at offset {off}")
                out[n] = t1 - t0
                n += 1
                if t1 > deadline_ns:
                    break
            lats[i] = out[:n]
        except BaseException as e:  # re-raised in the caller's thread below
            errors.append(e)

    try:
        if reading and not direct:
            drop_cache(fd) if cache == "cold" else warm_cache(fd, size)
        t_start = time.perf_counter_ns()
        deadline = t_start + int(runtime_s * 1e9)
        workers = [threading.Thread(target=work, args=(i, deadline), daemon=True) for i in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            while t.is_alive():
                t.join(0.05)                      # a timed join lets Ctrl-C through
        elapsed_s = (time.perf_counter_ns() - t_start) / 1e9
        if not reading:
            os.fsync(fd)        # untimed: buffered writes are timed into the page cache (fio without end_fsync)
    finally:
        stop.set()
        for t in workers:
            if t.ident is not None:           # a signal can land between two start() calls
                t.join()
        os.close(fd)
    if errors:
        raise errors[0]
    lat = np.concatenate([x for x in lats if x is not None]) / 1e3        # µs
    ops = int(lat.size)
    if ops == 0:
        raise IOBenchError(f"{pattern}: no IO completed within runtime_s={runtime_s}; raise it")
    p50, p90, p99, p999 = np.percentile(lat, [50, 90, 99, 99.9])
    return IOResult("helpers", pattern, block_bytes, direct, threads, fsync,
                    cache if reading and not direct else "n/a", ops, ops * block_bytes, round(elapsed_s, 6),
                    round(ops * block_bytes / elapsed_s / 1e6, 2), round(ops / elapsed_s, 1),
                    round(float(lat.mean()), 2), round(float(p50), 2), round(float(p90), 2), round(float(p99), 2),
                    round(float(p999), 2))


def plan(direct_ok: bool, threads_sweep=(1, 2, 4, 8)) -> list[dict]:
    """The default suite as keyword sets for ``run``. Without O_DIRECT, "direct" tests run buffered + cold."""
    d = direct_ok
    mib, k4 = 2**20, 4096
    tests = [dict(pattern="seq_write", block_bytes=mib, direct=d),
             dict(pattern="seq_write", block_bytes=mib, direct=False),
             dict(pattern="seq_write", block_bytes=mib, direct=False, fsync=True),
             dict(pattern="seq_read", block_bytes=mib, direct=d),
             dict(pattern="seq_read", block_bytes=mib, direct=False, cache="cold"),
             dict(pattern="seq_read", block_bytes=mib, direct=False, cache="warm"),
             dict(pattern="rand_write", block_bytes=k4, direct=d),
             dict(pattern="rand_read", block_bytes=k4, direct=False, cache="warm")]
    tests += [dict(pattern="rand_read", block_bytes=k4, direct=d, threads=t) for t in threads_sweep]
    uniq = []
    for t in tests:
        if t not in uniq:
            uniq.append(t)
    return uniq


def suite(directory: str | os.PathLike, size_bytes: int, *, runtime_s: float = 1.5,
          threads_sweep=(1, 2, 4, 8), seed: int = 0, tests: list[dict] | None = None):
    """Run the default suite (or ``tests``) on one work file. Returns (records, meta)."""
    from helpers.core.progress import progress

    with workfile(directory, size_bytes, seed) as f:
        ok, why = direct_supported(f)
        pending = plan(ok, threads_sweep) if tests is None else tests
        recs = [run(f, runtime_s=runtime_s, seed=seed, **t) for t in progress(pending, "iobench")]
    meta = {"path": str(Path(directory).resolve()), "fs_type": fs_type(directory), "size_bytes": size_bytes,
            "direct_supported": ok, "direct_note": why, "runtime_s": runtime_s}
    return recs, meta


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers iobench", description=__doc__.split("\n")[0])
    ap.add_argument("--path", required=True, type=cli.existing_dir, help="an existing, writable directory on the storage to test")
    ap.add_argument("--size", type=cli.size_bytes(4096, 2**44), default="512MiB", help="work file size (default %(default)s)")
    ap.add_argument("--runtime", type=cli.bounded_float(0.0, 3600.0, lo_open=True), default=1.5, help="seconds cap per test (default %(default)s)")
    ap.add_argument("--threads", type=cli.csv_of(cli.bounded_int(1, 1024)), default="1,2,4,8", help="threads sweep for 4 KiB random reads (default %(default)s)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    try:
        size = parse_size(a.size)
        sweep = tuple(a.threads)
    except ValueError as e:
        ap.error(str(e))
    signal.signal(signal.SIGTERM, _raise_interrupt)
    # Ctrl-C must interrupt even when our parent started us with SIGINT ignored (as pytest-xdist and
    # nohup do; an ignored signal stays ignored in the child unless a handler is installed)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        recs, meta = suite(a.path, size, runtime_s=a.runtime, threads_sweep=sweep)
    except IOBenchError as e:
        print(f"iobench: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("iobench: interrupted; the work file was removed", file=sys.stderr)
        return 130
    if not a.json:
        print(f"# {meta['path']} ({meta['fs_type']}), {size / 2**20:.0f} MiB file; {meta['direct_note']}")
    results.emit(recs, "iobench", a, columns=COLUMNS, **meta)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
