"""helpers.storage.iobench vs fio on the same file, in the same run: the ratios chapter 04 discusses.

    python scripts/bench_io.py                               # /tmp, 256 MiB, 3 alternating rounds
    python scripts/bench_io.py --path /data --size 1GiB --rounds 5 --json --out bench-io.json

Each case runs with the helpers (Python threads, one pread/pwrite per block) and with fio (psync engine,
numjobs = the same number of threads), alternating ``--rounds`` times; the medians and their ratio
(helpers ÷ fio) are printed. The target is ±15 % for 1 MiB sequential reads and 4 KiB random reads at matched
queue depth. Without fio the script prints one line saying why and exits 0 (skipped).
"""
from __future__ import annotations

import argparse
import sys

from helpers.core import results
from helpers.core.units import parse_size
from helpers.storage import fio, iofile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--path", default="/tmp", help="directory on the storage to test (default %(default)s)")
    ap.add_argument("--size", default="256MiB")
    ap.add_argument("--runtime", type=float, default=1.5, help="seconds cap per test and engine")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of helpers and fio per case")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    ok, why = fio.available()
    if not ok:
        print(f"bench_io: skipped: {why}")
        return 0
    try:
        size = parse_size(a.size)
    except ValueError as e:
        ap.error(str(e))
    try:
        with iofile.workfile(a.path, size) as f:
            direct_ok, note = iofile.direct_supported(f)
            comps, _ = fio.compare(f, runtime_s=a.runtime, direct_ok=direct_ok, rounds=a.rounds)
    except iofile.IOBenchError as e:
        print(f"bench_io: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bench_io: interrupted; the work file was removed", file=sys.stderr)
        return 130
    if not a.json:
        print(f"# {why} · {a.path} ({iofile.fs_type(a.path)}) · {size / 2**20:.0f} MiB · {note} · "
              f"median of {a.rounds} alternating rounds · ratio = helpers / fio")
    results.emit(comps, "bench_io", a, fio=why, direct_note=note, size_bytes=size)
    targets = [c for c in comps if c.target]
    print(f"within ±15 % of fio: {sum(c.within_15pct for c in targets)}/{len(targets)} target cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
