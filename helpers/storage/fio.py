"""fio beside ``helpers.storage.iobench``: the same patterns, on the same file, parsed from fio's JSON (chapter 04).

fio (Jens Axboe's Flexible I/O tester, github.com/axboe/fio) is the reference storage benchmark. When it is
installed we run the test ``iobench.run`` just ran — same file, block size, O_DIRECT flag and number of requests
in flight — and put the two side by side with their ratio. The matched engine is fio's ``psync`` (one
``pread``/``pwrite`` per block, like our threads) with ``numjobs`` threads; ``libaio`` with ``iodepth`` is the
asynchronous engine storage vendors quote, shown as an extra row.

    python scripts/bench_io.py --path /tmp --size 256MiB        # helpers vs fio ratios, measured in one run

fio is optional: without it ``available()`` returns ``(False, reason)`` and callers skip with that line.
Percentiles are fio's completion latency (clat), which for a synchronous engine is the whole system call.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from helpers.storage.iobench import IOResult, _warm, run as helpers_run

_RW = {"seq_read": "read", "seq_write": "write", "rand_read": "randread", "rand_write": "randwrite"}


def available() -> tuple[bool, str]:
    """(True, "fio-3.33") when fio runs here, else (False, a one-line reason with the fix)."""
    exe = shutil.which("fio")
    if exe is None:
        return False, "fio is not installed (Debian/Ubuntu: apt-get install fio); the fio comparison is skipped"
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"fio found at {exe} but did not run ({type(e).__name__}); the fio comparison is skipped"
    return True, out.stdout.strip() or "fio (unknown version)"


def command(filename: str | Path, pattern: str, block_bytes: int, *, direct: bool, threads: int = 1,
            ioengine: str = "psync", iodepth: int = 1, fsync: bool = False, cache: str = "cold",
            runtime_s: float = 1.5, size_bytes: int | None = None, seed: int = 0) -> list[str]:
    """The fio command line for one test on an existing file (fio never creates or lays out a file here)."""
    if pattern not in _RW:
        raise ValueError(f"pattern={pattern!r}: use one of {sorted(_RW)}")
    if ioengine == "psync" and iodepth != 1:
        raise ValueError(f"iodepth={iodepth} with psync: a synchronous engine has one request per job; use libaio")
    size = size_bytes if size_bytes is not None else Path(filename).stat().st_size
    cmd = ["fio", "--name=iobench", f"--filename={str(filename).replace(':', chr(92) + ':')}",
           f"--size={size}", f"--bs={block_bytes}", f"--rw={_RW[pattern]}", f"--direct={int(direct)}",
           f"--ioengine={ioengine}", f"--iodepth={iodepth}", f"--numjobs={threads}", "--thread",
           "--group_reporting", f"--runtime={int(runtime_s * 1000)}ms", "--allow_file_create=0",
           f"--randseed={seed}", f"--invalidate={int(cache == 'cold')}", "--output-format=json"]
    if fsync:
        cmd.append("--fdatasync=1")
    return cmd


def parse(doc: dict, pattern: str, block_bytes: int, *, direct: bool, threads: int, fsync: bool = False,
          cache: str = "cold", ioengine: str = "psync") -> IOResult:
    """One IOResult from fio's ``--output-format=json`` document (group_reporting: one job entry)."""
    try:
        job = doc["jobs"][0]
        side = job["read" if pattern.endswith("read") else "write"]
        clat = side["clat_ns"]
        pct = clat["percentile"]
        ops, runtime_ms = int(side["total_ios"]), float(side["runtime"])
    except (KeyError, IndexError, TypeError) as e:
        raise ValueError(f"not a fio JSON result with a {pattern} job: missing {e}") from None
    if job.get("error"):
        raise RuntimeError(f"fio reported error {job['error']} for {pattern}")
    if ops == 0 or runtime_ms <= 0:
        raise RuntimeError(f"fio completed no {pattern} IO (runtime {runtime_ms} ms)")
    us = lambda key: float(pct[key]) / 1e3  # noqa: E731
    reading = pattern.endswith("read")
    return IOResult(f"fio/{ioengine}", pattern, block_bytes, direct, threads, fsync,
                    cache if reading and not direct else "n/a", ops, int(side["io_bytes"]), runtime_ms / 1e3,
                    round(float(side["bw_bytes"]) / 1e6, 2), round(float(side["iops"]), 1),
                    round(float(side["lat_ns"]["mean"]) / 1e3, 2), round(us("50.000000"), 2),
                    round(us("90.000000"), 2), round(us("99.000000"), 2), round(us("99.900000"), 2))


def run(filename: str | Path, pattern: str, block_bytes: int, *, direct: bool, threads: int = 1,
        ioengine: str = "psync", iodepth: int = 1, fsync: bool = False, cache: str = "cold",
        runtime_s: float = 1.5, seed: int = 0, timeout_s: float = 120) -> IOResult:
    """Run fio once and parse it. Raises RuntimeError (with fio's own message) when fio fails."""
    ok, why = available()
    if not ok:
        raise RuntimeError(why)
    if cache == "warm" and not direct and pattern.endswith("read"):
        import os

        fd = os.open(filename, os.O_RDONLY)
        try:
            _warm(fd, os.path.getsize(filename))
        finally:
            os.close(fd)
    cmd = command(filename, pattern, block_bytes, direct=direct, threads=threads, ioengine=ioengine,
                  iodepth=iodepth, fsync=fsync, cache=cache, runtime_s=runtime_s, seed=seed)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    text = p.stdout[p.stdout.find("{"):] if "{" in p.stdout else ""
    if p.returncode != 0 or not text:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise RuntimeError(f"fio failed (exit {p.returncode}): {msg[-1] if msg else 'no output'}")
    return parse(json.loads(text), pattern, block_bytes, direct=direct, threads=threads * iodepth,
                 fsync=fsync, cache=cache, ioengine=ioengine)


@dataclass(frozen=True)
class Comparison:
    case: str
    metric: str             # "bw_MBps" for 1 MiB blocks, "iops" for 4 KiB blocks
    helpers: float
    fio: float
    ratio: float            # helpers ÷ fio
    within_15pct: bool
    target: bool            # one of the cases the ±15 % target applies to
    helpers_p50_us: float
    fio_p50_us: float


# (label, run keywords, metric, target?) — the target cases are the brief's: 1 MiB seq read, 4 KiB rand read.
CASES = [("seq read 1 MiB, direct, QD1", dict(pattern="seq_read", block_bytes=2**20, direct=True), "bw_MBps", True),
         ("rand read 4 KiB, direct, QD1", dict(pattern="rand_read", block_bytes=4096, direct=True), "iops", True),
         ("rand read 4 KiB, direct, QD4", dict(pattern="rand_read", block_bytes=4096, direct=True, threads=4),
          "iops", True),
         ("seq write 1 MiB, direct, QD1", dict(pattern="seq_write", block_bytes=2**20, direct=True), "bw_MBps", False),
         ("rand read 4 KiB, buffered warm", dict(pattern="rand_read", block_bytes=4096, direct=False, cache="warm"),
          "iops", False)]


def compare(filename: str | Path, cases=None, runtime_s: float = 1.5, direct_ok: bool = True,
            rounds: int = 1) -> tuple[list[Comparison], list[IOResult]]:
    """Run each case with helpers, then fio, on the same file (``rounds`` alternations, medians kept).
    Without O_DIRECT the direct cases run buffered with a cold cache on both sides."""
    import statistics

    comps, raw = [], []
    for label, kw, metric, target in (cases or CASES):
        kw = dict(kw, direct=kw["direct"] and direct_ok)
        h, f = [], []
        for _ in range(rounds):
            h.append(helpers_run(filename, runtime_s=runtime_s, **kw))
            f.append(run(filename, runtime_s=runtime_s, **kw))
        raw += h + f
        hv = statistics.median(getattr(r, metric) for r in h)
        fv = statistics.median(getattr(r, metric) for r in f)
        ratio = hv / fv
        comps.append(Comparison(label, metric, round(hv, 1), round(fv, 1), round(ratio, 3),
                                abs(ratio - 1) <= 0.15, target,
                                round(statistics.median(r.lat_p50_us for r in h), 2),
                                round(statistics.median(r.lat_p50_us for r in f), 2)))
    return comps, raw
