"""Label management beside the shards: a manifest with checksums, label checks, class balance (chapter 11).

A dataset folder holds the shards, a ``labels.csv`` (``sample,label`` with class *names*, one row per labelled
sample) and a ``manifest.json`` that lists every file with its size and SHA-256, the number of samples, and the
class names. ``verify`` re-reads everything and reports what a training job should refuse to start on:

* a file whose checksum or size no longer matches the manifest (a truncated copy, a re-written shard);
* a sample with no label row, a label row for no sample, a duplicated row, a class name not in the manifest;
* a sample whose label disagrees with its content (``suspect_labels``: leave-one-out nearest class centroid,
  the simplest form of the "confident learning" idea behind tools such as cleanlab).

    python -m helpers.storage.labels DIR            # verify DIR/manifest.json, print the report
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli, resources

MANIFEST = "manifest.json"
LABELS = "labels.csv"


def sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(chunk):
            h.update(b)
    return h.hexdigest()


def class_images(n_samples: int, n_classes: int = 4, shape=(3, 16, 16), seed: int = 0):
    """(uint8 images, int labels) whose class sets the mean colour — so a label can be checked against content."""
    if n_samples < n_classes or n_classes < 2:
        raise ValueError(f"n_samples={n_samples}, n_classes={n_classes}: need ≥ 2 classes and ≥ 1 sample each")
    rng = np.random.default_rng(seed)
    centres = rng.uniform(40, 215, (n_classes, shape[0]))
    y = rng.integers(0, n_classes, n_samples)
    x = centres[y][:, :, None, None] + rng.normal(0, 20, (n_samples, *shape))
    return np.clip(x, 0, 255).astype(np.uint8), y.astype(np.int64)


def write(root: str | Path, images: np.ndarray, labels: dict[int, str], classes: list[str]) -> dict:
    """Write ``shard.npy``, ``labels.csv`` (rows only for the samples in ``labels``) and ``manifest.json``."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    np.save(root / "shard.npy", images)
    with open(root / LABELS, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sample", "label"])
        w.writerows(sorted(labels.items()))
    files = [{"path": p, "bytes": (root / p).stat().st_size, "sha256": sha256(root / p)}
             for p in ("shard.npy", LABELS)]
    man = {"schema": 1, "samples": int(len(images)), "classes": list(classes), "files": files}
    (root / MANIFEST).write_text(json.dumps(man, indent=1))
    return man


def read_labels(root: str | Path) -> list[tuple[int, str]]:
    with open(Path(root) / LABELS, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != ["sample", "label"]:
        raise ValueError(f"{Path(root) / LABELS}: first row {rows[:1]}; expected the header sample,label")
    return [(int(s), lab) for s, lab in rows[1:]]


@dataclass(frozen=True)
class LabelReport:
    samples: int
    labelled: int
    bad_files: tuple[str, ...]       # checksum or size differs from the manifest, or file missing
    missing: tuple[int, ...]         # samples with no label row
    orphans: tuple[int, ...]         # label rows for sample ids that do not exist
    duplicates: tuple[int, ...]      # samples with more than one row
    unknown: tuple[int, ...]         # samples whose label is not one of the manifest's classes
    counts: dict                     # class name -> number of labelled samples

    @property
    def ok(self) -> bool:
        return not (self.bad_files or self.missing or self.orphans or self.duplicates or self.unknown)

    @property
    def imbalance(self) -> float:
        """Largest class ÷ smallest class (inf if a class has no samples)."""
        c = list(self.counts.values())
        return float("inf") if min(c) == 0 else max(c) / min(c)


def verify(root: str | Path) -> LabelReport:
    """Check every file against the manifest and every sample against the labels; never raises on bad data."""
    root = Path(root)
    if not (root / MANIFEST).is_file():
        raise ValueError(f"{root}: no {MANIFEST}; write one with helpers.storage.labels.write")
    man = json.loads((root / MANIFEST).read_text())
    bad = tuple(f["path"] for f in man["files"]
                if not (root / f["path"]).is_file() or (root / f["path"]).stat().st_size != f["bytes"]
                or sha256(root / f["path"]) != f["sha256"])
    n, classes = int(man["samples"]), list(man["classes"])
    if n < 0:
        raise ValueError(f"{root / MANIFEST}: samples={n} is negative; write the manifest with labels.write")
    # the report lists every unlabelled sample: one Python int (and its slot in a tuple) each, at worst all n
    resources.require_memory(n * (sys.getsizeof(2**40) + 8), flag=f'"samples" in {root / MANIFEST}',
                             what=f"checking {n} samples (the report's list of unlabelled ones)")
    rows = read_labels(root) if (root / LABELS).is_file() else []
    seen = Counter(s for s, _ in rows)
    last = dict(rows)
    counts = {c: 0 for c in classes}
    for s, lab in last.items():
        if 0 <= s < n and lab in counts:
            counts[lab] += 1
    return LabelReport(n, sum(1 for s in last if 0 <= s < n), bad,
                       tuple(i for i in range(n) if i not in last),
                       tuple(sorted(s for s in last if not 0 <= s < n)),
                       tuple(sorted(s for s, k in seen.items() if k > 1)),
                       tuple(sorted(s for s, lab in last.items() if lab not in counts)), counts)


def suspect_labels(images: np.ndarray, y: np.ndarray, margin: float = 1.0) -> list[int]:
    """Samples whose leave-one-out nearest class centroid (mean colour per channel) is not their label, and
    nearer than their own class's centroid by more than ``margin`` (in pixel-value units). Labels < 0 are
    unlabelled and skipped. Returns sample indices, ascending."""
    feats = images.reshape(len(images), images.shape[1], -1).mean(axis=2)        # (N, C) mean colour
    y = np.asarray(y)
    classes = np.unique(y[y >= 0])
    sums = np.stack([feats[y == k].sum(0) for k in classes])
    cnt = np.array([(y == k).sum() for k in classes], dtype=np.float64)
    out = []
    for i in np.flatnonzero(y >= 0):
        own = int(np.searchsorted(classes, y[i]))
        cent = sums / cnt[:, None]
        if cnt[own] > 1:                                  # leave sample i out of its own centroid
            cent[own] = (sums[own] - feats[i]) / (cnt[own] - 1)
        d = np.linalg.norm(cent - feats[i], axis=1)
        if d.argmin() != own and d[own] - d.min() > margin:
            out.append(int(i))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers labels", description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=cli.existing_dir, help="folder holding manifest.json")
    a = ap.parse_args(argv)
    r = verify(a.dir)
    print(f"{r.labelled}/{r.samples} labelled; files changed: {list(r.bad_files) or 'none'}; "
          f"missing: {list(r.missing)}; orphans: {list(r.orphans)}; duplicates: {list(r.duplicates)}; "
          f"unknown class: {list(r.unknown)}; counts {r.counts}; imbalance {r.imbalance:.2f}")
    return 0 if r.ok else 1


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
