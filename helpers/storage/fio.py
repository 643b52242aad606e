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
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from helpers.storage.iobench import IOResult, run as helpers_run
from helpers.storage.iofile import warm_cache

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


def loads(text: str) -> dict:
    """fio's JSON document out of ``text`` — also when fio printed its job line and "Starting N process" before it
    (``--output-format=json`` with stderr merged, as logs and issue threads show it)."""
    i = text.find("\n{")
    i = 0 if text.lstrip().startswith("{") else (i + 1 if i >= 0 else -1)
    if i < 0:
        raise ValueError(f"not fio JSON: no line starting with '{{' in {len(text)} characters "
                         "(for fio's normal text output use fio.parse_text)")
    return json.JSONDecoder().raw_decode(text[i:].lstrip())[0]


def _job(doc: dict, job: int | str):
    jobs = doc.get("jobs") or []
    if isinstance(job, str):
        named = [j for j in jobs if j.get("jobname") == job]
        if not named:
            raise ValueError(f"no fio job named {job!r}; the document has {[j.get('jobname') for j in jobs]}")
        return named[0]
    if not -len(jobs) <= job < len(jobs):
        raise ValueError(f"not a fio JSON result with job {job}: it has {len(jobs)} jobs")
    return jobs[job]


def parse(doc: dict, pattern: str, block_bytes: int, *, direct: bool, threads: int, fsync: bool = False,
          cache: str = "cold", ioengine: str = "psync", job: int | str = 0) -> IOResult:
    """One IOResult from fio's ``--output-format=json`` document: fio 3.x (``clat_ns``/``lat_ns``, bytes) and fio 2.x
    (``clat``/``lat`` in µs, ``io_bytes`` and ``bw`` in KiB). Percentiles are the completion latency's (clat); a run
    with ``lat_percentiles=1`` (and clat percentiles off) reports them for the total latency, which is used then."""
    try:
        j = _job(doc, job)
        side = j["read" if pattern.endswith("read") else "write"]
        if "clat_ns" in side:
            clat, lat, scale = side["clat_ns"], side.get("lat_ns", {}), 1e3
            io_bytes, bw_Bps = int(side["io_bytes"]), float(side["bw_bytes"])
        else:                                                   # fio 2.x: microseconds and KiB
            clat, lat, scale = side["clat"], side.get("lat", {}), 1.0
            io_bytes, bw_Bps = int(side["io_bytes"]) * 1024, float(side["bw"]) * 1024
        pct = clat.get("percentile") or lat.get("percentile")
        if not pct:
            raise KeyError("percentile (run fio with clat_percentiles=1 or lat_percentiles=1)")
        runtime_ms = float(side["runtime"])
        ops = int(side["total_ios"]) if "total_ios" in side else round(io_bytes / block_bytes)
    except (KeyError, IndexError, TypeError) as e:
        raise ValueError(f"not a fio JSON result with a {pattern} job: missing {e}") from None
    if j.get("error"):
        raise RuntimeError(f"fio reported error {j['error']} for {pattern}")
    if ops == 0 or runtime_ms <= 0:
        raise RuntimeError(f"fio completed no {pattern} IO (runtime {runtime_ms} ms)")
    us = lambda key: float(pct[key]) / scale  # noqa: E731
    reading = pattern.endswith("read")
    return IOResult(f"fio/{ioengine}", pattern, block_bytes, direct, threads, fsync,
                    cache if reading and not direct else "n/a", ops, io_bytes, runtime_ms / 1e3,
                    round(bw_Bps / 1e6, 2), round(float(side["iops"]), 1),
                    round(float((lat or clat)["mean"]) / scale, 2), round(us("50.000000"), 2),
                    round(us("90.000000"), 2), round(us("99.000000"), 2), round(us("99.900000"), 2))


@dataclass(frozen=True)
class TextResult:
    """One direction of one job group in fio's normal (text) output."""
    jobname: str
    jobs: int
    rw: str                   # "read" | "write" | "trim"
    iops: float
    bw_Bps: float             # bytes per second
    io_bytes: float
    runtime_ms: float
    clat_mean_us: float | None
    lat_mean_us: float | None
    percentiles_us: dict      # {50.0: µs, 99.0: µs, …} of the block that follows (clat, or lat with lat_percentiles)
    percentile_of: str        # "clat" | "lat" | ""
    fio_version: str


_UNIT = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 2**20, "MB": 2**20, "MIB": 2**20, "G": 2**30,
         "GB": 2**30, "GIB": 2**30, "T": 2**40, "TIB": 2**40}   # fio 2.x's "KB" is KiB; fio 3 prints KiB/MiB
_TIME_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3, "sec": 1e6}


def _size(num: str, unit: str) -> float:
    return float(num) * _UNIT[unit.upper().removesuffix("/S")]


def _si(v: str) -> float:
    m = re.match(r"([0-9.]+)([kKMG]?)", v)
    return float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def parse_text(text: str) -> list[TextResult]:
    """fio's default output (fio 2.x ``read : io=…, bw=…KB/s, iops=…`` and fio 3.x ``read: IOPS=…, BW=…``), also with
    a log prefix before every line. One TextResult per job group and direction."""
    ver = (re.search(r"\bfio-([0-9][\w.-]*)", text) or re.search(r"\bfio ([0-9][\w.-]*)", text))
    out, name, jobs, cur, pct_unit, pct_of = [], "?", 1, None, None, ""
    for ln in text.splitlines():
        if (m := re.search(r"(\S+): \(groupid=[0-9]+, jobs=([0-9]+)\): err=\s*([0-9]+)", ln)):
            name, jobs, cur, pct_unit = m.group(1), int(m.group(2)), None, None
            continue
        m3 = re.search(r"\b(read|write|trim)\s*: IOPS=([0-9.]+[kKM]?), BW=([0-9.]+)([KMGT]?i?B)/s(?: \(([0-9.]+)([kMGT]?B)/s\))?"
                       r"\(([0-9.]+)([KMGT]?i?B)/([0-9]+)msec\)", ln)
        m2 = re.search(r"\b(read|write|trim)\s*: io=([0-9.]+)([KMGT]?B), bw=([0-9.]+)([KMGT]?B)/s, iops=([0-9]+), "
                       r"runt=\s*([0-9]+)msec", ln)
        if m3 or m2:
            if m3:     # "BW=11.0MiB/s (12.6MB/s)": the decimal figure in brackets, when printed, is the finer one
                bw = (float(m3.group(5)) * {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}[m3.group(6)]
                      if m3.group(5) else _size(m3.group(3), m3.group(4)))
                rw, iops, io, rt = (m3.group(1), _si(m3.group(2)), _size(m3.group(7), m3.group(8)),
                                    float(m3.group(9)))
            else:
                rw, iops, bw, io, rt = (m2.group(1), float(m2.group(6)), _size(m2.group(4), m2.group(5)),
                                        _size(m2.group(2), m2.group(3)), float(m2.group(7)))
            cur = dict(jobname=name, jobs=jobs, rw=rw, iops=iops, bw_Bps=bw, io_bytes=io, runtime_ms=rt,
                       clat_mean_us=None, lat_mean_us=None, percentiles_us={}, percentile_of="",
                       fio_version=ver.group(1) if ver else "?")
            out.append(cur)
            pct_unit = None
            continue
        if cur is None:
            continue
        if (m := re.search(r"\b(clat|lat) \((nsec|usec|msec)\): min=[^,]+, max=[^,]+, avg=\s*([0-9.]+)", ln)):
            cur[f"{m.group(1)}_mean_us"] = float(m.group(3)) * _TIME_US[m.group(2)]
        elif (m := re.search(r"\b(clat|lat) percentiles \((nsec|usec|msec)\):", ln)):
            pct_unit, pct_of = _TIME_US[m.group(2)], m.group(1)
            cur["percentile_of"] = pct_of
        elif pct_unit and "|" in ln and "th=[" in ln:
            for p, v in re.findall(r"([0-9.]+)th=\[\s*([0-9]+)\]", ln):
                cur["percentiles_us"][float(p)] = float(v) * pct_unit
        elif pct_unit and "th=[" not in ln:
            pct_unit = None
    if not out:
        raise ValueError("fio text: no \"read: IOPS=…\" (fio 3) or \"read : io=…\" (fio 2) line found"
                         + (f" in the output of fio-{ver.group(1)}" if ver else "; is this fio's output?"))
    return [TextResult(**r) for r in out]


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
            warm_cache(fd, os.path.getsize(filename))
        finally:
            os.close(fd)
    cmd = command(filename, pattern, block_bytes, direct=direct, threads=threads, ioengine=ioengine,
                  iodepth=iodepth, fsync=fsync, cache=cache, runtime_s=runtime_s, seed=seed)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    text = p.stdout[p.stdout.find("{"):] if "{" in p.stdout else ""
    if p.returncode != 0 or not text:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise RuntimeError(f"fio failed (exit {p.returncode}): {msg[-1] if msg else 'no output'}")
    return parse(loads(text), pattern, block_bytes, direct=direct, threads=threads * iodepth,
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
