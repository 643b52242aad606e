"""Data loading: PyTorch DataLoader sweeps over one dataset stored three ways (chapter 11; read cost: chapter 04).

    python -m helpers dataload --dir /tmp --samples 4096 --workers 0,1,2 --batch 64,256 --json
    python -m helpers dataload --dir /tmp --workers 0,2,4,8,16 --pin 0,1 --out assets/measurements/h200/dataload.json

The dataset, its three formats (``files``, ``shard``, ``zshard``) and the map-style datasets that read them are in
:mod:`helpers.storage.dataformats`. :func:`measure` iterates a DataLoader over one of them, :func:`sweep` every
combination of format, workers, batch size, pinning and prefetch factor, and :func:`read_cost` times the raw
reads alone — many small files against one shard — with a cold or a warm page cache (chapter 04 uses it).

On a GPU machine the CLI also copies every batch to the GPU (``non_blocking`` when pinned), so ``pin_memory``
shows its effect; on a CPU machine ``pin_memory`` is ignored (it needs a CUDA context) and records say False.
The CLI's dataset folder is removed on exit of ``dataformats.dataset_dir``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli
from helpers.storage.dataformats import FORMATS, dataset_dir, make


@dataclass(frozen=True)
class LoaderResult:
    fmt: str
    batch_size: int
    num_workers: int
    pin_memory: bool
    prefetch_factor: int | None     # None when num_workers == 0 (no prefetching processes)
    epoch: int
    samples: int
    time_s: float                   # iterator creation (worker start) + every batch of the epoch
    first_batch_s: float            # time to the first batch: worker start-up + one batch
    samples_per_s: float
    MB_per_s: float                 # decoded float32 bytes delivered per second, 1 MB = 1e6 B
    simulated_latency_ms: float
    to_device: str                  # where each batch was copied ("cpu": not copied)


def measure(dataset, *, fmt: str = "?", batch_size: int = 64, num_workers: int = 0, pin_memory: bool = False,
            prefetch_factor: int | None = 2, epochs: int = 1, latency_ms: float = 0.0,
            to_device=None) -> list[LoaderResult]:
    """Iterate a DataLoader over ``dataset`` for ``epochs`` epochs (workers persist across epochs); one
    record per epoch. ``pin_memory`` is honoured only when a GPU exists (it needs a CUDA context). With
    ``to_device`` (a CUDA device) every batch is also copied there, ``non_blocking`` when pinned."""
    import torch
    from torch.utils.data import DataLoader

    dev = torch.device(to_device) if to_device is not None else torch.device("cpu")

    if num_workers < 0 or batch_size < 1:
        raise ValueError(f"num_workers={num_workers}, batch_size={batch_size}: need workers ≥ 0, batch ≥ 1")
    pin = bool(pin_memory and torch.cuda.is_available())
    pf = prefetch_factor if num_workers > 0 else None
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=num_workers,
                        pin_memory=pin, prefetch_factor=pf, persistent_workers=num_workers > 0)
    sample_bytes = int(np.prod(dataset[0][0].shape)) * 4
    out = []
    for epoch in range(1, epochs + 1):
        t0 = time.perf_counter()
        n, first = 0, None
        for x, _ in loader:
            if dev.type == "cuda":
                x = x.to(dev, non_blocking=pin)
            n += x.shape[0]
            if first is None:
                first = time.perf_counter() - t0
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        dt = time.perf_counter() - t0
        out.append(LoaderResult(fmt, batch_size, num_workers, pin, pf, epoch, n, round(dt, 4), round(first, 4),
                                round(n / dt, 1), round(n * sample_bytes / dt / 1e6, 2), latency_ms, str(dev)))
    del loader                                        # shuts the persistent workers down
    return out


def sweep(root, formats=("shard",), workers=(0, 1, 2), batch_sizes=(64,), pins=(False,), prefetch=(2,),
          latency_ms: float = 0.0, epochs: int = 1, to_device=None) -> list[LoaderResult]:
    """Every combination; prefetch factors only vary when there are workers."""
    from helpers.core.progress import progress

    combos = [(f, w, b, p, pf) for f in formats for w in workers for b in batch_sizes for p in pins
              for pf in (prefetch if w > 0 else prefetch[:1])]
    recs = []
    for f, w, b, p, pf in progress(combos, "dataloader sweep"):
        recs += measure(make(f, root, latency_ms), fmt=f, batch_size=b, num_workers=w, pin_memory=p,
                        prefetch_factor=pf, epochs=epochs, latency_ms=latency_ms, to_device=to_device)
    return recs


@dataclass(frozen=True)
class ReadCost:
    fmt: str
    cache: str              # "cold" (pages dropped with posix_fadvise) or "warm"
    files_opened: int
    bytes_read: int
    time_s: float
    us_per_sample: float
    MB_per_s: float


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_cost(root, cache: str = "cold") -> list[ReadCost]:
    """Raw read cost of every sample: one file each (``files``) vs one sequential pass over the shard."""
    root = Path(root)
    files = sorted((root / "files").iterdir())
    shard = root / "shard.npy"
    out = []
    for fmt, paths in (("files", files), ("shard", [shard])):
        for p in paths:
            _drop(p) if cache == "cold" else p.read_bytes()
        t0 = time.perf_counter()
        nbytes = sum(len(p.read_bytes()) for p in paths)
        dt = time.perf_counter() - t0
        out.append(ReadCost(fmt, cache, len(paths), nbytes, round(dt, 5), round(dt / len(files) * 1e6, 2),
                            round(nbytes / dt / 1e6, 1)))
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results

    ints = cli.csv_of(cli.bounded_int(0, 1024))
    ap = argparse.ArgumentParser(prog="python -m helpers dataload", description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=cli.existing_dir, default=None, help="parent folder for the temporary dataset (default: system temp)")
    ap.add_argument("--samples", type=cli.bounded_int(1, 10_000_000), default=4096)
    ap.add_argument("--formats", default="files,shard,zshard")
    ap.add_argument("--workers", default="0,1,2", type=ints, help="num_workers values to sweep (0..1024)")
    ap.add_argument("--batch", default="64,256", type=cli.csv_of(cli.bounded_int(1, 65536)))
    ap.add_argument("--pin", default="0", type=cli.csv_of(cli.bounded_int(0, 1)),
                    help="pin_memory values to sweep, e.g. 0,1 (GPU only)")
    ap.add_argument("--prefetch", default="2", type=cli.csv_of(cli.bounded_int(1, 64)))
    ap.add_argument("--latency-ms", type=cli.bounded_float(0.0, 60_000.0), default=0.0, help="simulated per-sample storage latency")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    fmts = tuple(a.formats.split(","))
    if any(f not in FORMATS for f in fmts):
        ap.error(f"--formats {a.formats!r}: use a comma-separated subset of {FORMATS}")
    if a.dir and not Path(a.dir).is_dir():
        ap.error(f"--dir {a.dir!r} is not an existing directory")
    from helpers.core.device import pick_device

    dev, why = pick_device()                     # on a GPU machine every batch is also copied to the GPU
    with dataset_dir(a.dir, n_samples=a.samples) as info:
        recs = sweep(info["root"], fmts, a.workers, a.batch, tuple(bool(p) for p in a.pin), a.prefetch,
                     a.latency_ms, to_device=dev if dev.type == "cuda" else None)
        costs = [results.to_dict(c) for c in read_cost(info["root"], "cold") + read_cost(info["root"], "warm")]
    results.emit(recs, "dataload", a, columns=["fmt", "batch_size", "num_workers", "pin_memory", "prefetch_factor",
                                               "samples_per_s", "MB_per_s", "first_batch_s"],
                 dataset={k: v for k, v in info.items() if k != "root"}, read_cost=costs, device_choice=why)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
