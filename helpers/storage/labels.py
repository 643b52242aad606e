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

from helpers.core import cli, inputs, resources

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
    classes = _classes(classes, "labels.write(classes=...)")
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
    path = Path(root) / LABELS
    rows = list(csv.reader(inputs.read_text(path, what="labels file").splitlines()))
    if not rows or rows[0] != ["sample", "label"]:
        raise ValueError(f"{path}: first row {rows[:1]}; expected the header sample,label")
    bad = next((i for i, r in enumerate(rows[1:], 2) if len(r) != 2), None)
    if bad is not None:
        raise ValueError(f"{path} line {bad}: {rows[bad - 1]} is not one sample,label pair")
    return [(inputs.number(s, what=f"{path}: sample id", integer=True, allow_negative=True), lab)
            for s, lab in rows[1:]]


def _classes(value, where: str) -> list[str]:
    """The class names: a list of distinct, non-empty strings (a string such as "cat,dog" is refused: it would
    be read as the classes c, a, t, ',' …)."""
    if not isinstance(value, (list, tuple)):
        hint = f' (write classes: {json.dumps(value.split(","))})' if isinstance(value, str) else ""
        raise ValueError(f"{where}: classes {str(value)[:60]!r} is a {type(value).__name__}, not a list of class "
                         f"names{hint}")
    if not value or any(not isinstance(c, str) or not c.strip() for c in value) or len(set(value)) < len(value):
        raise ValueError(f"{where}: classes {list(value)[:8]!r} must be distinct, non-empty class names")
    return list(value)


def _manifest(root: Path) -> dict:
    """manifest.json, checked: samples a whole number ≥ 0, classes a list of names, files a list of
    {path inside the folder, bytes, sha256}."""
    path = root / MANIFEST
    man = inputs.read_json(path, what="manifest")
    if not isinstance(man, dict) or not {"samples", "classes", "files"} <= set(man):
        raise ValueError(f"{path}: not a manifest (needs samples, classes, files); write one with labels.write")
    man["samples"] = inputs.number(man["samples"], what=f"{path}: samples", integer=True)
    man["classes"] = _classes(man["classes"], str(path))
    files = man["files"]
    if not isinstance(files, list) or not all(isinstance(f, dict) and isinstance(f.get("path"), str)
                                              and isinstance(f.get("sha256"), str) for f in files):
        raise ValueError(f"{path}: files must be a list of {{path, bytes, sha256}}; write it with labels.write")
    for f in files:
        if Path(f["path"]).is_absolute() or ".." in Path(f["path"]).parts or not f["path"].strip():
            raise ValueError(f"{path}: file {f['path']!r} is not a path inside {root}")
        f["bytes"] = inputs.number(f.get("bytes"), what=f"{path}: bytes of {f['path']!r}", integer=True)
    return man


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
    man = _manifest(root)
    bad = tuple(f["path"] for f in man["files"]
                if not (root / f["path"]).is_file() or (root / f["path"]).stat().st_size != f["bytes"]
                or sha256(root / f["path"]) != f["sha256"])
    n, classes = man["samples"], man["classes"]
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
