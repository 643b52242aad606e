"""Augmentation pipelines measured: random crop + horizontal flip + normalise on uint8 images (chapter 11).

The same augmentation runs in three places:

* ``worker``  — per sample, inside ``Dataset.__getitem__``, in DataLoader worker processes;
* ``main``    — per sample, inside ``Dataset.__getitem__``, in the training process (``num_workers=0``);
* ``batched`` — once per batch, on the collated uint8 tensor, with index arithmetic instead of a Python loop.

Random parameters come from a generator seeded by ``(seed, epoch, sample index)``, never from a global RNG, so
for a fixed seed all three variants produce bit-identical batches (tested), whichever worker loads a sample.

    python -m helpers.storage.augment --samples 1024 --workers 2 --json
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np

from helpers.core import cli

VARIANTS = ("main", "worker", "batched")
MEAN = (0.485, 0.456, 0.406)     # the ImageNet channel statistics torchvision's examples use
STD = (0.229, 0.224, 0.225)


def params(i: int, *, seed: int = 0, epoch: int = 0, pad: int = 4) -> tuple[int, int, bool]:
    """(dy, dx, flip) for sample ``i``: a crop offset in [0, 2·pad] and a coin flip, from its own generator."""
    rng = np.random.default_rng((seed, epoch, int(i)))
    dy, dx = rng.integers(0, 2 * pad + 1, 2)
    return int(dy), int(dx), bool(rng.random() < 0.5)


def _norm(x, mean, std):
    import torch

    c = x.shape[-3]
    m = torch.tensor(mean[:c], dtype=torch.float32).view(c, 1, 1)
    s = torch.tensor(std[:c], dtype=torch.float32).view(c, 1, 1)
    return x.float().div_(255.0).sub_(m).div_(s)


def augment_sample(img: np.ndarray, i: int, *, seed: int = 0, epoch: int = 0, pad: int = 4,
                   mean=MEAN, std=STD):
    """Naive version, one C×H×W uint8 image: zero-pad, crop back to H×W at a random offset, maybe flip
    left-right, scale to [0, 1] and normalise per channel. Returns a float32 tensor."""
    import torch

    if img.ndim != 3 or img.dtype != np.uint8:
        raise ValueError(f"image of shape {img.shape}, dtype {img.dtype}: need a C×H×W uint8 array")
    _, h, w = img.shape
    dy, dx, flip = params(i, seed=seed, epoch=epoch, pad=pad)
    padded = np.pad(img, ((0, 0), (pad, pad), (pad, pad)))
    out = padded[:, dy:dy + h, dx:dx + w]
    if flip:
        out = out[:, :, ::-1]
    return _norm(torch.from_numpy(np.ascontiguousarray(out)), mean, std)


def augment_batch(batch, indices, *, seed: int = 0, epoch: int = 0, pad: int = 4, mean=MEAN, std=STD):
    """Batched version, N×C×H×W uint8 tensor: one padded copy, then a single gather whose row and column
    indices hold every sample's crop offset (and, reversed, its flip); then one normalisation."""
    import torch

    if batch.dim() != 4 or batch.dtype != torch.uint8:
        raise ValueError(f"batch of shape {tuple(batch.shape)}, dtype {batch.dtype}: need N×C×H×W uint8")
    n, c, h, w = batch.shape
    p = np.array([params(i, seed=seed, epoch=epoch, pad=pad) for i in indices], dtype=np.int64).reshape(n, 3)
    dy, dx, flip = (torch.from_numpy(p[:, k]) for k in range(3))
    ar_h, ar_w = torch.arange(h), torch.arange(w)
    rows = dy[:, None] + ar_h                                            # (N, H)
    cols = dx[:, None] + torch.where(flip[:, None].bool(), w - 1 - ar_w, ar_w)   # (N, W), flipped where asked
    padded = batch.new_zeros((n, c, h + 2 * pad, w + 2 * pad))
    padded[:, :, pad:pad + h, pad:pad + w] = batch
    out = padded[torch.arange(n)[:, None, None, None], torch.arange(c)[None, :, None, None],
                 rows[:, None, :, None], cols[:, None, None, :]]
    return _norm(out, mean, std)


class AugDataset:
    """Map-style dataset over in-memory uint8 images; ``augment=True`` augments each sample in ``__getitem__``,
    ``False`` returns the raw uint8 tensor (for batched augmentation after collation). Items: (x, label, index)."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, *, augment: bool, seed: int = 0, pad: int = 4):
        self.images, self.labels, self.augment, self.seed, self.pad = images, labels, augment, seed, pad
        self.epoch = 0

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        import torch

        if self.augment:
            x = augment_sample(self.images[i], i, seed=self.seed, epoch=self.epoch, pad=self.pad)
        else:
            x = torch.from_numpy(self.images[i])
        return x, int(self.labels[i]), int(i)


@dataclass(frozen=True)
class AugResult:
    variant: str
    num_workers: int
    batch_size: int
    samples: int
    time_s: float            # median of the timed epochs
    samples_per_s: float
    digest: float            # sum of all augmented values of one epoch: equal digests = same output


def run_epoch(variant: str, images, labels, *, batch_size: int = 64, num_workers: int = 2, seed: int = 0,
              pad: int = 4, collect: bool = False, epochs: int = 1):
    """Iterate one loader for ``epochs`` epochs; returns (per-epoch seconds, last epoch's batches if collect)."""
    import torch
    from torch.utils.data import DataLoader

    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r}: use one of {VARIANTS}")
    nw = num_workers if variant == "worker" else 0
    ds = AugDataset(images, labels, augment=variant != "batched", seed=seed, pad=pad)
    loader = DataLoader(ds, batch_size=batch_size, shuffle=False, num_workers=nw, persistent_workers=nw > 0)
    times, out = [], []
    try:
        for _ in range(epochs):
            out = []
            t0 = time.perf_counter()
            for x, _y, idx in loader:
                if variant == "batched":
                    x = augment_batch(x, idx.tolist(), seed=seed, pad=pad)
                if collect:
                    out.append(x)
            times.append(time.perf_counter() - t0)
    finally:
        del loader                                  # shuts persistent workers down
    return times, (torch.cat(out) if collect else None)


def measure(images, labels, variants=VARIANTS, *, batch_size: int = 64, num_workers: int = 2, seed: int = 0,
            epochs: int = 3) -> list[AugResult]:
    """Samples/s per variant: ``epochs`` epochs on one loader (workers start once); the first is warm-up
    (worker start-up, allocator), the median of the rest is reported. Each record carries an output digest."""
    import statistics

    if epochs < 2:
        raise ValueError(f"epochs={epochs}: need ≥ 2 (one warm-up, one or more timed)")
    recs = []
    for v in variants:
        times, x = run_epoch(v, images, labels, batch_size=batch_size, num_workers=num_workers, seed=seed,
                             collect=True, epochs=epochs)
        t = statistics.median(times[1:])
        recs.append(AugResult(v, num_workers if v == "worker" else 0, batch_size, len(images), round(t, 4),
                              round(len(images) / t, 1), round(float(x.double().sum()), 3)))
    return recs


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results
    from helpers.storage import dataformats

    ap = argparse.ArgumentParser(prog="python -m helpers augment", description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=cli.bounded_int(1, 1_000_000), default=1024)
    ap.add_argument("--size", type=cli.bounded_int(8, 1024), default=32, help="image height = width (pixels)")
    ap.add_argument("--batch", type=cli.bounded_int(1, 65536), default=64)
    ap.add_argument("--workers", type=cli.bounded_int(1, 256), default=2)
    ap.add_argument("--epochs", type=cli.bounded_int(2, 100), default=3)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    imgs, labels = dataformats.synth_images(a.samples, (3, a.size, a.size), seed=0)
    recs = measure(imgs, labels, batch_size=a.batch, num_workers=a.workers, epochs=a.epochs)
    results.emit(recs, "augment", a, columns=["variant", "num_workers", "samples_per_s", "time_s", "digest"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
