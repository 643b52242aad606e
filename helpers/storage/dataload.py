"""Data loading: one synthetic image dataset stored three ways, and PyTorch DataLoader sweeps (chapter 11;
the small-files vs one-shard read cost is also used in chapter 04).

    python -m helpers dataload --dir /tmp --samples 4096 --workers 0,1,2 --batch 64,256 --json
    python -m helpers dataload --dir /tmp --workers 0,2,4,8,16 --pin 0,1 --out assets/measurements/h200/dataload.json

On a GPU machine the CLI also copies every batch to the GPU (``non_blocking`` when pinned), so ``pin_memory``
shows its effect; on a CPU machine ``pin_memory`` is ignored (it needs a CUDA context) and records say False.

The same ``n_samples`` images (uint8, C×H×W, smooth gradients plus seeded noise, so they compress like real
pictures) and labels are written as

* ``files``  — one ``.npy`` file per sample (the "many small files" layout of a raw image folder);
* ``shard``  — one ``.npy`` array opened with ``numpy.memmap`` (the WebDataset/FFCV/Megatron "big shard" idea);
* ``zshard`` — one file of per-sample compressed records plus an offsets index (``helpers.storage.compress`` codecs).

Every dataset returns ``(float32 tensor C×H×W scaled to [0, 1], label)``. ``latency_ms`` adds a sleep per
sample read to *simulate* remote storage (an object store's first-byte time) — it is labelled as simulated
wherever it is used. ``SharedCache`` keeps decoded samples in shared memory so that worker processes fill it
in epoch 1 and every worker hits it in epoch 2. The work folder is removed on exit of ``dataset_dir``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli

FORMATS = ("files", "shard", "zshard")


def synth_images(n_samples: int, shape=(3, 32, 32), seed: int = 0, n_classes: int = 10):
    """(uint8 images N×C×H×W, int64 labels N): a per-image gradient + colour + noise, seeded."""
    if n_samples < 1:
        raise ValueError(f"n_samples={n_samples}: need at least 1")
    rng = np.random.default_rng(seed)
    c, h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi, n_samples).astype(np.float32)[:, None, None]
    ramp = (np.cos(angle) * xx / w + np.sin(angle) * yy / h)[:, None]            # (N, 1, H, W)
    colour = rng.uniform(40, 200, (n_samples, c, 1, 1)).astype(np.float32)
    noise = rng.normal(0, 3, (n_samples, c, h, w)).astype(np.float32)
    imgs = np.clip(colour + 50 * ramp + noise, 0, 255).astype(np.uint8)
    return imgs, rng.integers(0, n_classes, n_samples).astype(np.int64)


def write_formats(root: str | os.PathLike, n_samples: int = 2048, shape=(3, 32, 32), seed: int = 0,
                  codec: str | None = None) -> dict:
    """Write the dataset in every format under ``root``; returns a dict of paths and sizes (bytes)."""
    from helpers.storage import compress

    root = Path(root)
    imgs, labels = synth_images(n_samples, shape, seed)
    (root / "files").mkdir(parents=True, exist_ok=True)
    for i in range(n_samples):
        np.save(root / "files" / f"{i:07d}.npy", imgs[i])
    np.save(root / "labels.npy", labels)
    np.save(root / "shard.npy", imgs)
    name = codec or compress.best_available()
    c = compress.codec(name)
    blobs = [c.compress(imgs[i].tobytes()) for i in range(n_samples)]
    offsets = np.zeros(n_samples + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in blobs])
    (root / "zshard.bin").write_bytes(b"".join(blobs))
    np.save(root / "zshard_index.npy", offsets)
    files_bytes = sum(p.stat().st_size for p in (root / "files").iterdir())
    return {"root": str(root), "n_samples": n_samples, "shape": tuple(shape), "codec": name,
            "raw_bytes": int(imgs.nbytes), "files_bytes": files_bytes,
            "shard_bytes": (root / "shard.npy").stat().st_size, "zshard_bytes": int(offsets[-1])}


@contextmanager
def dataset_dir(parent: str | os.PathLike | None = None, **kw):
    """A temporary folder holding the dataset in every format (``write_formats`` info); removed on exit."""
    d = tempfile.mkdtemp(prefix="dataload-", dir=parent)
    try:
        yield write_formats(d, **kw)
    finally:
        shutil.rmtree(d, ignore_errors=True)


class _Base:
    """Map-style dataset: ``__getitem__`` reads sample i, then does the preprocessing (uint8 → float in [0, 1])."""

    def __init__(self, root, latency_ms: float = 0.0):
        self.root, self.latency_ms = Path(root), float(latency_ms)
        self.labels = np.load(self.root / "labels.npy")
        self.shape = tuple(np.load(self.root / "shard.npy", mmap_mode="r").shape[1:])

    def __len__(self):
        return len(self.labels)

    def read(self, i: int) -> np.ndarray:
        raise NotImplementedError

    def __getitem__(self, i):
        import torch

        if self.latency_ms:
            time.sleep(self.latency_ms / 1e3)        # simulated remote-storage first-byte latency
        a = self.read(int(i))
        a = a if a.flags.writeable else np.array(a)       # memmap/frombuffer views are read-only
        x = torch.from_numpy(a).float().div_(255.0)
        return x, int(self.labels[i])


class FilesDataset(_Base):
    """One ``.npy`` file per sample: an open, a read and a close for every sample."""

    def read(self, i):
        return np.load(self.root / "files" / f"{i:07d}.npy")


class ShardDataset(_Base):
    """One memory-mapped array; the mapping is opened lazily in each worker process."""

    _mm = None

    def read(self, i):
        if self._mm is None:
            self._mm = np.load(self.root / "shard.npy", mmap_mode="r")
        return self._mm[i]


class ZShardDataset(_Base):
    """Per-sample compressed records in one file, found through an offsets index, decompressed on read."""

    def __init__(self, root, latency_ms: float = 0.0, codec: str | None = None):
        from helpers.storage import compress

        super().__init__(root, latency_ms)
        self.offsets = np.load(self.root / "zshard_index.npy")
        self.codec = codec or compress.best_available()
        self._fd = self._c = None

    def read(self, i):
        from helpers.storage import compress

        if self._fd is None:            # os.pread keeps no file offset, so forked workers may share the fd
            self._fd = os.open(self.root / "zshard.bin", os.O_RDONLY)
            self._c = compress.codec(self.codec)
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        raw = self._c.decompress(os.pread(self._fd, b - a, a))
        return np.frombuffer(raw, dtype=np.uint8).reshape(self.shape)

    def __getstate__(self):             # pickled for spawn-started workers: each opens its own
        return {**self.__dict__, "_fd": None, "_c": None}


def make(fmt: str, root, latency_ms: float = 0.0):
    """The dataset for ``fmt`` (one of FORMATS) over the folder written by ``write_formats``."""
    kinds = {"files": FilesDataset, "shard": ShardDataset, "zshard": ZShardDataset}
    if fmt not in kinds:
        raise ValueError(f"format {fmt!r}: use one of {FORMATS}")
    return kinds[fmt](root, latency_ms)


class SharedCache:
    """Wrap a dataset; keep each decoded sample in shared memory after its first read.

    The storage is allocated before the DataLoader forks its workers, so every worker writes into, and reads
    from, the same pages: epoch 1 fills it from whichever worker loaded a sample, epoch 2 reads only memory."""

    def __init__(self, base):
        import torch

        self.base = base
        self.store = torch.zeros((len(base), *base.shape), dtype=torch.float32).share_memory_()
        self.filled = torch.zeros(len(base), dtype=torch.uint8).share_memory_()

    def __len__(self):
        return len(self.base)

    def __getitem__(self, i):
        if self.filled[i]:
            return self.store[i].clone(), int(self.base.labels[i])
        x, y = self.base[i]
        self.store[i].copy_(x)
        self.filled[i] = 1
        return x, y

    @property
    def hit_fraction(self) -> float:
        return float(self.filled.float().mean())


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
