"""Host↔device copy bandwidth, pinned vs pageable, both directions (chapter 02; chapter 15's ``bench copy``).

A copy from ordinary (pageable) host memory cannot be DMA'd directly: the driver first copies it into a pinned
staging buffer, so pageable copies are slower and steal CPU time. Pinned (page-locked) host memory is what
``DataLoader(pin_memory=True)`` gives you. Both are bounded by the PCIe (or NVLink-C2C) link:
Gen5 x16 carries at most 63 GB/s each way before protocol overhead (``specs.pcie_GBps``).

    python -m helpers transfer --json
    python -m helpers transfer --sizes 1MiB,64MiB,1GiB --out assets/measurements/h200/transfer.json

On a machine without a GPU there is no host↔device link to measure: the same code times a host→host copy
(``direction="h2h"``) and says so, so a CPU reader sees what a memory copy costs on their machine — never a
fake GPU number.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import cli, results, timing
from helpers.core.progress import progress
from helpers.core.units import parse_size  # noqa: F401  (re-exported for callers)



@dataclass(frozen=True)
class TransferResult:
    direction: str          # "h2d", "d2h" (GPU) or "h2h" (CPU-only machine)
    pinned: bool            # host buffer page-locked (meaningless for h2h: always False there)
    size_bytes: int
    time_s: float           # median of the timed copies
    bw_GBps: float          # size_bytes / time_s / 1e9
    best_bw_GBps: float     # from the fastest copy
    device: str





def measure(sizes_bytes=(2**20, 2**24, 2**28), pinned=(True, False), directions=("h2d", "d2h"),
            repeats: int = 10, warmup: int = 2, device=None) -> list[TransferResult]:
    """Time copies of each size, pinned and pageable, in each direction. Returns one record per combination."""
    import torch

    from helpers.core.device import pick_device

    dev = pick_device()[0] if device is None else torch.device(device)
    out = []
    if dev.type != "cuda":
        combos = [(s, False, "h2h") for s in sizes_bytes]
        name = "cpu"
    else:
        combos = [(s, p, d) for s in sizes_bytes for p in pinned for d in directions]
        name = torch.cuda.get_device_name(dev)
    for size, pin, direction in progress(combos, "copy sweep"):
        n = size // 4
        if n < 1:
            raise ValueError(f"size {size} bytes is too small: need at least 4 bytes")
        host = torch.empty(n, dtype=torch.float32, pin_memory=pin).fill_(1.0)
        if direction == "h2h":
            dst = torch.empty_like(host)
            fn = lambda: dst.copy_(host)  # noqa: E731
        elif direction == "h2d":
            dst = torch.empty(n, dtype=torch.float32, device=dev)
            fn = lambda: dst.copy_(host, non_blocking=pin)  # noqa: E731
        elif direction == "d2h":
            src = torch.ones(n, dtype=torch.float32, device=dev)
            fn = lambda: host.copy_(src, non_blocking=pin)  # noqa: E731
        else:
            raise ValueError(f"direction {direction!r}: use 'h2d' or 'd2h'")
        t = timing.time_fn(fn, device=dev if dev.type == "cuda" else None, warmup=warmup, repeats=repeats)
        nbytes = n * 4
        out.append(TransferResult(direction, pin, nbytes, t.median_s, nbytes / t.median_s / 1e9,
                                  nbytes / t.min_s / 1e9, name))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers transfer", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=cli.csv_of(cli.size_bytes(1, 2**40)), default="1MiB,16MiB,256MiB,1GiB", help="comma-separated sizes (default %(default)s)")
    ap.add_argument("--repeats", type=cli.repeats, default=10)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = measure(a.sizes, repeats=a.repeats)
    results.emit(recs, "transfer", a, columns=["direction", "pinned", "size_bytes", "time_s", "bw_GBps", "best_bw_GBps"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
