"""Host→device copies overlapped with compute: the double-buffered CUDA prefetcher (chapter 11).

    python -m helpers prefetch --json
    python -m helpers prefetch --batch 64MiB --batches 16 --out assets/measurements/h200/prefetch.json

A training step cannot start until its batch is in GPU memory. Copied on the compute stream, every copy is
a pause; copied on a second stream from *pinned* host memory while the previous batch computes, the copy time
hides behind compute (``DataLoader(pin_memory=True)`` + ``.to(device, non_blocking=True)`` is the first half
of that; the second stream is what prefetchers such as NVIDIA DALI's or Lightning's add). The result to expect:
overlapped ≈ max(copy only, compute only) while serial ≈ their sum.

On a machine without a GPU there is no host→device link: ``overlap`` returns one "skipped" record saying so.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, timing


@dataclass(frozen=True)
class OverlapResult:
    mode: str               # "copy only", "compute only", "serial", "overlapped", or "skipped"
    batches: int
    batch_bytes: int
    time_s: float           # median of the timed repeats (CUDA events)
    note: str


def overlap(batch_bytes: int = 64 * 2**20, batches: int = 16, matmul_n: int = 4096, device=None) -> list[OverlapResult]:
    """Host→device copies of pinned batches overlapped with compute on a second CUDA stream, vs serial.

    The compute per batch (``k`` bf16 matmuls, ``k`` chosen so compute ≈ copy time) reads the batch, so
    overlap is only legal with double buffering: batch i+1 is copied on the copy stream while batch i is
    used on the compute stream, and events order the reuse of each buffer. Without a GPU: one "skipped"
    record that says why."""
    import torch

    from helpers.core.device import pick_device

    dev, why = pick_device() if device is None else (torch.device(device), f"given: {device}")
    if dev.type != "cuda":
        return [OverlapResult("skipped", 0, batch_bytes, 0.0, f"no host-to-device link to overlap: {why}")]
    n = batch_bytes // 4
    host = [torch.empty(n, dtype=torch.float32, pin_memory=True).fill_(float(i)) for i in range(batches)]
    buf = [torch.empty(n, dtype=torch.float32, device=dev) for _ in range(2)]
    a = torch.randn(matmul_n, matmul_n, device=dev, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    copy_stream = torch.cuda.Stream(dev)
    t_copy = timing.time_fn(lambda: buf[0].copy_(host[0], non_blocking=True), device=dev, warmup=2, repeats=5)
    t_mm = timing.time_fn(lambda: torch.mm(a, a, out=c), device=dev, warmup=2, repeats=5)
    k = max(1, round(t_copy.median_s / t_mm.median_s))

    def compute(x):
        x.mul_(1.0001)                          # the batch is used, so its buffer must not be overwritten early
        for _ in range(k):
            torch.mm(a, a, out=c)

    def copy_only():
        for i in range(batches):
            buf[i % 2].copy_(host[i], non_blocking=True)

    def compute_only():
        for i in range(batches):
            compute(buf[i % 2])

    def serial():
        for i in range(batches):
            buf[0].copy_(host[i], non_blocking=True)   # same stream: the compute waits for the copy
            compute(buf[0])

    def overlapped():
        cur = torch.cuda.current_stream(dev)
        ready, free = [None, None], [None, None]
        copy_stream.wait_stream(cur)
        with torch.cuda.stream(copy_stream):
            buf[0].copy_(host[0], non_blocking=True)
        ready[0] = copy_stream.record_event()
        for i in range(batches):
            j = i % 2
            if i + 1 < batches:
                nj = (i + 1) % 2
                with torch.cuda.stream(copy_stream):
                    if free[nj] is not None:
                        copy_stream.wait_event(free[nj])      # batch i-1 is done with that buffer
                    buf[nj].copy_(host[i + 1], non_blocking=True)
                ready[nj] = copy_stream.record_event()
            cur.wait_event(ready[j])
            compute(buf[j])
            free[j] = cur.record_event()

    note = f"{batches} × {batch_bytes / 2**20:.0f} MiB pinned batches; {k} bf16 {matmul_n}² matmuls per batch"
    return [OverlapResult(mode, batches, batch_bytes,
                          round(timing.time_fn(fn, device=dev, warmup=1, repeats=3).median_s, 6), note)
            for mode, fn in (("copy only", copy_only), ("compute only", compute_only), ("serial", serial),
                             ("overlapped", overlapped))]


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results
    from helpers.storage.iobench import parse_size

    ap = argparse.ArgumentParser(prog="python -m helpers prefetch", description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=cli.size_bytes(1, 2**36), default="64MiB", help="bytes per batch (default %(default)s)")
    ap.add_argument("--batches", type=cli.bounded_int(1, 100_000), default=16)
    ap.add_argument("--matmul-n", type=cli.bounded_int(1, 65536), default=4096)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    try:
        size = parse_size(a.batch)
    except ValueError as e:
        ap.error(str(e))
    if size < 4 or a.batches < 2:
        ap.error(f"--batch {a.batch} and --batches {a.batches}: need at least 4 bytes and 2 batches")
    recs = overlap(size, a.batches, a.matmul_n)
    results.emit(recs, "prefetch", a, columns=["mode", "batches", "batch_bytes", "time_s", "note"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
