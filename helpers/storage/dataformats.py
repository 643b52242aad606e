"""One synthetic image dataset stored three ways, and the map-style datasets that read it back (chapters 11 and 04).

The same ``n_samples`` images (uint8, C×H×W, smooth gradients plus seeded noise, so they compress like real
pictures) and labels are written by :func:`write_formats` as

* ``files``  — one ``.npy`` file per sample (the "many small files" layout of a raw image folder);
* ``shard``  — one ``.npy`` array opened with ``numpy.memmap`` (the WebDataset/FFCV/Megatron "big shard" idea);
* ``zshard`` — one file of per-sample compressed records plus an offsets index (``helpers.storage.compress`` codecs).

Every dataset (:func:`make`) returns ``(float32 tensor C×H×W scaled to [0, 1], label)``. ``latency_ms`` adds a
sleep per sample read to *simulate* remote storage (an object store's first-byte time) — it is labelled as
simulated wherever it is used. :class:`SharedCache` keeps decoded samples in shared memory so that worker
processes fill it in epoch 1 and every worker hits it in epoch 2. :func:`dataset_dir` writes everything into a
fresh temporary folder and removes it on exit. The DataLoader sweeps over these are in
:mod:`helpers.storage.dataload`.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

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
