"""Hugging Face ``datasets`` in streaming mode, run on local Parquet shards (chapter 11).

Nothing is downloaded: the chapter's synthetic images (``dataformats.synth_images``) are written as Parquet (or Arrow
IPC) shards in a temporary folder, and ``load_dataset("parquet", data_files=…, streaming=True)`` turns them into an
``IterableDataset`` — the same object a job gets when it streams a dataset from the Hub or an object store.
(``datasets`` 5.2's Parquet reader sleeps ``datasets.config.SLEEP_TIME_ON_THREADS_SHUTDOWN`` = 5 s whenever an
iteration that interleaves shards ends — a guard against apache/arrow#45214 — so shuffled labs use Arrow shards.)

    python -m helpers hfstream --samples 4096 --shards 8 --json
    python -m helpers hfstream --samples 8192 --out assets/measurements/h200/hfstream.json

* ``write_shards`` — rows ``{idx, label, image (uint8 bytes)}``, ``n_shards`` Parquet or Arrow files;
* ``stream`` — the ``IterableDataset`` (offline, with its cache in the shards' folder, not in ``~/.cache``);
* ``displacement`` — how far each item moved between input and output order: a buffer shuffle moves items by a
  fraction of ``buffer_size`` (5.2: fill ≥ B rows, permute, yield all but B/2), a full shuffle by about N/3;
* ``rank_split`` — the sample ids each rank gets from ``split_dataset_by_node``;
* ``resume`` — stop after k samples, save ``state_dict()``, resume a fresh dataset from it, compare;
* ``throughput`` — samples/s of the stream through a PyTorch ``DataLoader`` beside the chapter's memory-mapped
  shard (``dataformats.ShardDataset``), the same images and the same float32 tensors.

``datasets`` is imported lazily; without it every function raises ``ImportError`` with the pip command.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli

PIP = "pip install datasets==5.2.0"


def _datasets():
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")       # local shards only: never reach the Hub
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import datasets
    except ImportError as e:
        raise ImportError(f"Hugging Face datasets is not installed ({e}); install it with `{PIP}`") from e
    datasets.logging.set_verbosity_error()
    datasets.disable_progress_bars()
    return datasets


def available() -> bool:
    try:
        _datasets()
        return True
    except ImportError:
        return False


FORMATS = ("parquet", "arrow")     # the Hub's format; the Arrow IPC stream format of save_to_disk / the cache


def write_shards(root, imgs: np.ndarray, labels: np.ndarray, n_shards: int = 8, fmt: str = "parquet") -> list[str]:
    """Write ``imgs`` (uint8 N×C×H×W) and ``labels`` as ``n_shards`` files of consecutive rows (``FORMATS``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(imgs)
    if fmt not in FORMATS:
        raise ValueError(f"fmt={fmt!r}: choose one of {FORMATS}")
    if not 1 <= n_shards <= n or len(labels) != n:
        raise ValueError(f"n_shards={n_shards}, {n} images, {len(labels)} labels: need 1 ≤ n_shards ≤ N "
                         "and one label per image")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for s, rows in enumerate(np.array_split(np.arange(n), n_shards)):
        table = pa.table({"idx": rows.astype(np.int64), "label": labels[rows].astype(np.int64),
                          "image": [imgs[i].tobytes() for i in rows]})
        p = root / f"train-{s:05d}-of-{n_shards:05d}.{fmt}"
        if fmt == "parquet":
            pq.write_table(table, p)
        else:
            with pa.OSFile(str(p), "wb") as f, pa.ipc.new_stream(f, table.schema) as w:
                w.write_table(table)
        paths.append(str(p))
    return paths


def stream(files: list[str], cache_dir=None):
    """``load_dataset(fmt, data_files=files, streaming=True)``: an ``IterableDataset``; nothing is read yet."""
    datasets = _datasets()
    if not files:
        raise ValueError("no shard files given: write them with write_shards() first")
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        raise ValueError(f"shard files not found: {missing[:3]}; write them with write_shards() first")
    cache = cache_dir or str(Path(files[0]).parent / ".hf-cache")
    fmt = Path(files[0]).suffix.lstrip(".")
    if fmt not in FORMATS or any(Path(f).suffix != f".{fmt}" for f in files):
        raise ValueError(f"shards {files[:3]}: need all .parquet or all .arrow files")
    return datasets.load_dataset(fmt, data_files=list(files), split="train", streaming=True,
                                 cache_dir=cache)


def ids(ds) -> list[int]:
    """The ``idx`` column in the order the dataset yields it."""
    return [int(row["idx"]) for row in ds]


@dataclass(frozen=True)
class Displacement:
    order: str
    buffer_size: int | None        # None: a full permutation
    samples: int
    mean_moved: float              # mean |output position − input position|, in samples
    max_moved: int
    max_early: int                 # largest (input position − output position): how far ahead an item came out
    complete: bool                 # every input item came out exactly once


def displacement(order, label: str, buffer_size: int | None = None) -> Displacement:
    """How far each item moved: item ``order[p]`` came in at position ``order[p]`` and left at position ``p``."""
    o = np.asarray(order, dtype=np.int64)
    moved = np.arange(len(o)) - o
    return Displacement(label, buffer_size, len(o), round(float(np.abs(moved).mean()), 1), int(np.abs(moved).max()),
                        int(max(0, -moved.min())), bool(np.array_equal(np.sort(o), np.arange(len(o)))))


def shuffle_displacement(files: list[str], buffer_sizes=(16, 64, 256), seed: int = 0) -> list[Displacement]:
    """The stream's ``shuffle(buffer_size=B, seed=…)`` for each B, then a full permutation (map-style shuffle)."""
    ds = stream(files)
    n = len(ids(ds))
    out = [displacement(ids(ds), "stream, no shuffle", 0)]
    out += [displacement(ids(ds.shuffle(seed=seed, buffer_size=b)), "stream, buffer shuffle", b)
            for b in buffer_sizes]
    out.append(displacement(np.random.default_rng(seed).permutation(n), "map-style, full shuffle", None))
    return out


def rank_split(ds, world_size: int = 2) -> dict[int, list[int]]:
    """Sample ids each rank reads after ``split_dataset_by_node(ds, rank, world_size)``."""
    from datasets.distributed import split_dataset_by_node

    if world_size < 1:
        raise ValueError(f"world_size={world_size}: need at least 1 rank")
    return {r: ids(split_dataset_by_node(ds, rank=r, world_size=world_size)) for r in range(world_size)}


@dataclass(frozen=True)
class Resume:
    shuffled: bool
    stop_after: int
    uninterrupted: int             # samples a run without interruption yields after position stop_after
    resumed: int                   # samples the resumed dataset yields
    identical: bool                # resumed sequence == the uninterrupted one
    lost: int                      # samples of the uninterrupted tail the resumed run never yields
    repeated: int                  # samples the resumed run yields although they came before the checkpoint


def resume(files: list[str], stop_after: int, buffer_size: int | None = None, seed: int = 0) -> Resume:
    """Iterate ``stop_after`` samples, take ``state_dict()``, resume a fresh dataset with ``load_state_dict``."""
    def make():
        ds = stream(files)
        return ds.shuffle(seed=seed, buffer_size=buffer_size) if buffer_size else ds

    full = ids(make())
    if not 0 < stop_after < len(full):
        raise ValueError(f"stop_after={stop_after}: need 0 < stop_after < {len(full)} samples")
    ds = make()
    it = iter(ds)
    before = [int(next(it)["idx"]) for _ in range(stop_after)]      # the run that is interrupted
    state = ds.state_dict()                                          # what a checkpoint would store
    fresh = make()
    fresh.load_state_dict(state)
    got, tail, seen = ids(fresh), full[stop_after:], set(before)
    if before != full[:stop_after]:
        raise RuntimeError("the stream is not deterministic: two iterations with one seed differ")
    return Resume(bool(buffer_size), stop_after, len(tail), len(got), got == tail, len(set(tail) - set(got)),
                  len(seen & set(got)))


def _decode(shape):
    def fn(batch):
        import torch

        raw = np.frombuffer(b"".join(batch["image"]), dtype=np.uint8).reshape(-1, *shape)
        return {"x": torch.from_numpy(raw.copy()).float().div_(255.0), "label": batch["label"]}
    return fn


def torch_stream(files: list[str], shape):
    """The stream decoded batch-wise by ``map`` into float32 tensors in [0, 1], as a torch ``IterableDataset``."""
    ds = stream(files)
    return ds.map(_decode(tuple(shape)), batched=True, batch_size=256, remove_columns=["idx", "image"])


@dataclass(frozen=True)
class Throughput:
    loader: str
    batch_size: int
    samples: int
    time_s: float                  # median of the timed epochs
    samples_per_s: float


def throughput(shard_sets: dict[str, list[str]], shard_root, batch_size: int = 64,
               repeats: int = 3) -> list[Throughput]:
    """One epoch through ``DataLoader(num_workers=0)`` for each stream (name → shard files), then the chapter's
    memory-mapped shard under ``shard_root``: the same images, the same float32 tensors."""
    import torch
    from torch.utils.data import DataLoader

    from helpers.core import timing
    from helpers.storage import dataformats

    shard = dataformats.make("shard", shard_root)
    loaders = [(f"hf streaming ({k})", torch_stream(v, shard.shape)) for k, v in shard_sets.items()]
    out = []
    for name, ds in loaders + [("map-style shard (memmap)", shard)]:
        count = []

        def epoch():
            n = 0
            for batch in DataLoader(ds, batch_size=batch_size, num_workers=0):
                x = batch["x"] if isinstance(batch, dict) else batch[0]
                assert x.dtype == torch.float32
                n += x.shape[0]
            count.append(n)

        t = timing.time_fn(epoch, warmup=1, repeats=repeats)
        out.append(Throughput(name, batch_size, count[-1], round(t.median_s, 4), round(count[-1] / t.median_s, 1)))
    return out


def check_size(samples: int, batch: int, folder: str) -> None:
    """Refuse before writing: the uint8 images held about four times while shards are built (array, a second array,
    the rows' bytes, the Arrow table), a batch of float32 tensors three times (the loader, collation, the step) and
    the sampler's list of batch_size references, and
    on disk the memory-mapped shard plus a Parquet and an Arrow copy (with the chapter's other formats: four)."""
    import inspect

    from helpers.core import resources
    from helpers.formulas import dtypes
    from helpers.storage import dataformats

    elems = math.prod(inspect.signature(dataformats.write_formats).parameters["shape"].default)
    image = elems * np.dtype(np.uint8).itemsize
    resources.require_memory(4 * samples * image, what=f"{samples} images of {image} B being sharded",
                             flag="--samples")
    if batch > samples:
        raise resources.NotEnough(f"--batch {batch} > --samples {samples}: a batch cannot hold more than the data "
                                  f"set (torch's BatchSampler would first build a list of {batch} references): "
                                  f"lower --batch to at most {samples}")
    # torch's BatchSampler with drop_last=True builds a list of batch_size references and a tuple of them (8 B each)
    resources.require_memory(3 * batch * elems * dtypes.bytes_per_element("fp32") + 16 * batch,
                             flag="--batch", what=f"a batch of {batch} float32 images")
    resources.require_disk(folder, 4 * samples * image, what=f"the shards of {samples} images", flag="--samples/--dir")


def main(argv: list[str] | None = None) -> int:
    import tempfile

    from helpers.core import results
    from helpers.storage import dataformats

    p = argparse.ArgumentParser(prog="python -m helpers hfstream", description=__doc__.split("\n")[0])
    p.add_argument("--samples", type=cli.positive_int, default=4096)
    p.add_argument("--shards", type=cli.positive_int, default=8)
    p.add_argument("--batch", type=cli.positive_int, default=64)
    p.add_argument("--repeats", type=cli.positive_int, default=3)
    p.add_argument("--dir", default=None, help="parent folder of the temporary shards (default: the system's)")
    results.add_output_args(p)
    args = p.parse_args(argv)
    if args.shards > args.samples:
        raise ValueError(f"--shards {args.shards} > --samples {args.samples}: need at most one shard per sample")
    check_size(args.samples, args.batch, args.dir or tempfile.gettempdir())
    _datasets()
    with tempfile.TemporaryDirectory(prefix="hfstream-", dir=args.dir) as d:
        info = dataformats.write_formats(Path(d) / "map", n_samples=args.samples)
        imgs, labels = dataformats.synth_images(args.samples, info["shape"], seed=0)
        sets = {f: write_shards(Path(d) / f, imgs, labels, args.shards, fmt=f) for f in FORMATS}
        recs = throughput(sets, info["root"], batch_size=args.batch, repeats=args.repeats)
    results.emit(recs, "hfstream", args)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
