"""Checkpoint writes: one file, shards written by parallel threads, with and without fsync (chapter 04).

    python -m helpers ckptwrite --path /tmp --params 20e6                       # a table
    python -m helpers ckptwrite --path /tmp --params 200e6 --shards 4,8 --out ckptwrite.json

What is written is a restart's state, 14 bytes per parameter, built by :mod:`helpers.storage.ckptstate`.
Two writers, the naive one first:

* :func:`write_single` — one ``torch.save`` of the whole state into one file;
* :func:`write_sharded` — the tensors split into N shards balanced by bytes, each shard saved by its own thread
  into its own file, plus a small index holding the structure; :func:`load_sharded` puts it back together.

Both write to ``NAME.tmp`` and rename it into place, so a crash never leaves a half-written file under the final
name; with ``fsync=True`` each file is ``fsync``'d before the rename and the folder after it, so the checkpoint is
on stable storage when the call returns. Without ``fsync`` the time is the time to reach the page cache.
:func:`bench` times each way with ``helpers.core.timing.time_fn`` in a temporary folder it always removes.
"""
from __future__ import annotations

import argparse
import heapq
import os
import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from helpers.core import cli
from helpers.formulas import dtypes
from helpers.storage.ckptstate import same_bytes, tensor_bytes

INDEX = "index.pt"
SINGLE = "ckpt.pt"
TAG = "__tensor__"
COLUMNS = ["method", "shards", "threads", "fsync", "device", "size_bytes", "time_s", "bw_GBps"]


def _torch():
    import torch

    return torch


# ------------------------------------------------------------------ writing and reading

def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _save(obj, path: Path, fsync: bool) -> Path:
    """torch.save into ``path.tmp``, fsync it if asked, rename it to ``path``; no .tmp survives an error."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            _torch().save(obj, f)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_single(state: dict, folder: str | os.PathLike, fsync: bool = True) -> list[Path]:
    """The naive writer: the whole state in one file, ``folder/ckpt.pt``."""
    folder = Path(folder)
    out = [_save(state, folder / SINGLE, fsync)]
    if fsync:
        _fsync_dir(folder)
    return out


def _flatten(obj, tensors: dict):
    """The structure of ``obj`` with every tensor replaced by {TAG: key}; the tensors go into ``tensors``."""
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        key = f"t{len(tensors)}"
        tensors[key] = obj
        return {TAG: key}
    if isinstance(obj, dict):
        return {k: _flatten(v, tensors) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_flatten(v, tensors) for v in obj)
    return obj


def _unflatten(skel, tensors: dict):
    if isinstance(skel, dict):
        if set(skel) == {TAG}:
            return tensors[skel[TAG]]
        return {k: _unflatten(v, tensors) for k, v in skel.items()}
    if isinstance(skel, (list, tuple)):
        return type(skel)(_unflatten(v, tensors) for v in skel)
    return skel


def plan_shards(tensors: dict, n_shards: int) -> list[dict]:
    """Split ``tensors`` into ``n_shards`` dicts of nearly equal bytes: largest tensor first onto the lightest
    shard (greedy longest-processing-time), so the slowest thread has as little as possible to write."""
    if not 1 <= n_shards <= len(tensors):
        raise ValueError(f"n_shards={n_shards}: use 1..{len(tensors)} (one shard holds at least one of the "
                         f"state's {len(tensors)} tensors)")
    heap = [(0, i) for i in range(n_shards)]
    shards: list[dict] = [{} for _ in range(n_shards)]
    for key in sorted(tensors, key=lambda k: (-tensor_bytes(tensors[k]), k)):
        load, i = heapq.heappop(heap)
        shards[i][key] = tensors[key]
        heapq.heappush(heap, (load + tensor_bytes(tensors[key]), i))
    return shards


def write_sharded(state: dict, folder: str | os.PathLike, n_shards: int = 4, threads: int | None = None,
                  fsync: bool = True) -> list[Path]:
    """Shards saved in parallel by ``threads`` threads (default one per shard), then ``index.pt`` (the
    structure and the shard names), then the folder fsync'd: the index appears only when every shard is there."""
    folder = Path(folder)
    tensors: dict = {}
    skeleton = _flatten(state, tensors)
    parts = plan_shards(tensors, n_shards)
    names = [f"shard-{i:05d}-of-{n_shards:05d}.pt" for i in range(n_shards)]
    workers = n_shards if threads is None else threads
    if workers < 1:
        raise ValueError(f"threads={threads}: need at least one thread")
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_save, part, folder / name, fsync) for part, name in zip(parts, names)]
        files = [f.result() for f in futures]
    files.append(_save({"version": 1, "skeleton": skeleton, "shards": names}, folder / INDEX, fsync))
    if fsync:
        _fsync_dir(folder)
    return files


def load_single(folder: str | os.PathLike, map_location="cpu") -> dict:
    return _torch().load(Path(folder) / SINGLE, map_location=map_location, weights_only=True)


def load_sharded(folder: str | os.PathLike, map_location="cpu") -> dict:
    torch = _torch()
    folder = Path(folder)
    if not (folder / INDEX).exists():
        raise FileNotFoundError(f"{folder / INDEX} is missing: the sharded write did not finish "
                                "(no index, no checkpoint)")
    index = torch.load(folder / INDEX, map_location=map_location, weights_only=True)
    tensors: dict = {}
    for name in index["shards"]:
        tensors.update(torch.load(folder / name, map_location=map_location, weights_only=True))
    return _unflatten(index["skeleton"], tensors)


# ------------------------------------------------------------------ timing

@dataclass(frozen=True)
class WriteResult:
    method: str                 # "single" or "sharded"
    shards: int
    threads: int
    fsync: bool
    device: str                 # where the state lived ("cpu", "cuda:0"): a cuda state adds the copy to the host
    size_bytes: int             # bytes on disk, all files
    files: int
    time_s: float               # median of the repeats
    time_min_s: float
    bw_GBps: float              # size_bytes / time_s / 1e9
    repeats: int
    verified: bool              # reloaded and compared byte for byte with the state


def bench(state: dict, folder: str | os.PathLike | None = None, shards: tuple[int, ...] = (4,),
          threads: int | None = None, fsync: tuple[bool, ...] = (False, True), repeats: int = 3,
          warmup: int = 1, verify: bool = True) -> list[WriteResult]:
    """Time the single-file writer and the sharded one (for every count in ``shards``), with and without fsync,
    in a fresh temporary folder under ``folder`` that is removed on success and on error."""
    from helpers.core import timing

    dev = _device_of(state)
    if threads is not None and threads < 1:
        raise ValueError(f"threads={threads}: need at least one thread (or None: one per shard)")
    out = []
    with tempfile.TemporaryDirectory(prefix="ckptwrite-", dir=folder) as tmp:
        for method, n in [("single", 1)] + [("sharded", s) for s in shards]:
            for sync in fsync:
                where = Path(tmp) / f"{method}-{n}-{'fsync' if sync else 'nosync'}"

                def clean(where=where):
                    shutil.rmtree(where, ignore_errors=True)
                    where.mkdir()

                if method == "single":
                    fn = lambda where=where, sync=sync: write_single(state, where, fsync=sync)  # noqa: E731
                else:
                    fn = lambda where=where, sync=sync, n=n: write_sharded(  # noqa: E731
                        state, where, n, threads, fsync=sync)
                t = timing.time_fn(fn, warmup=warmup, repeats=repeats, setup=clean)
                files = sorted(where.iterdir())
                size = sum(f.stat().st_size for f in files)
                ok = False
                if verify:
                    back = load_single(where) if method == "single" else load_sharded(where)
                    ok = same_bytes(back, state)
                    if not ok:
                        raise RuntimeError(f"{method} checkpoint in {where} reloads with different bytes")
                    del back
                out.append(WriteResult(method, n, 1 if method == "single" else (threads or n), sync, dev, size,
                                       len(files), t.median_s, t.min_s, size / t.median_s / 1e9, repeats, ok))
                shutil.rmtree(where, ignore_errors=True)
    return out


def _device_of(state) -> str:
    tensors: dict = {}
    _flatten(state, tensors)
    return str(next(iter(tensors.values())).device) if tensors else "cpu"


def extrapolate(results: list[WriteResult], target_bytes: float) -> list[dict]:
    """Seconds to write ``target_bytes`` at each result's measured rate (same disk, same way, linear scaling)."""
    if target_bytes <= 0:
        raise ValueError(f"target_bytes={target_bytes}: need a positive size")
    return [dict(method=r.method, shards=r.shards, fsync=r.fsync, bw_GBps=round(r.bw_GBps, 3),
                 time_s=round(target_bytes / (r.bw_GBps * 1e9), 1)) for r in results]


# ------------------------------------------------------------------ CLI

def checkpoint_bytes(n_params: float) -> float:
    """Bytes of the checkpoint :mod:`helpers.storage.ckptstate` builds: bf16 weights + fp32 master + Adam's two fp32
    moments per parameter (14 B)."""
    return n_params * (dtypes.bytes_per_element("bf16") + 3 * dtypes.bytes_per_element("fp32"))


def check_size(n_params: float, path: str, device: str = "cpu") -> None:
    """Refuse before building anything: memory for the fp32 model, its gradients and Adam state during the seeded
    step (16 B/param) beside the checkpoint state; disk under ``path`` for one checkpoint at a time."""
    from helpers.core import resources

    fp32 = dtypes.bytes_per_element("fp32")
    resources.require_memory(n_params * 4 * fp32 + checkpoint_bytes(n_params), device=device, flag="--params",
                             what=f"building the checkpoint of {n_params:.3g} parameters (model, gradients, Adam "
                                  "state and the checkpoint's copy)")
    resources.require_disk(path, checkpoint_bytes(n_params), flag="--params (or --path)",
                           what=f"a checkpoint of {n_params:.3g} parameters")

def main(argv: list[str] | None = None) -> int:
    from helpers.core import device, results
    from helpers.storage import iofile
    from helpers.storage.ckptstate import checkpoint_state, mlp

    ap = argparse.ArgumentParser(prog="python -m helpers ckptwrite", description=__doc__.split("\n")[0])
    ap.add_argument("--path", type=cli.existing_dir, default=tempfile.gettempdir(),
                    help="an existing, writable folder on the storage to test (default %(default)s)")
    ap.add_argument("--params", type=cli.bounded_float(1e5, 1e10), default=20e6,
                    help="parameters of the model to checkpoint, 14 B each (default %(default)g)")
    ap.add_argument("--width", type=cli.bounded_int(64, 16384), default=2048, help="layer width (default %(default)s)")
    ap.add_argument("--shards", type=cli.csv_of(cli.bounded_int(1, 1024)), default="4,8",
                    help="shard counts for the sharded writer (default %(default)s)")
    ap.add_argument("--threads", type=cli.bounded_int(1, 1024), default=None,
                    help="writer threads (default: one per shard)")
    ap.add_argument("--fsync", choices=("both", "on", "off"), default="both",
                    help="fsync each file (default %(default)s)")
    ap.add_argument("--repeats", type=cli.bounded_int(1, 100), default=3,
                    help="timed writes per way (default %(default)s)")
    ap.add_argument("--state-device", choices=("cpu", "auto", "cuda"), default="cpu",
                    help="where the state lives: cpu measures the disk path alone; cuda adds the copy to the host")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    dev, why = device.pick_device(None if a.state_device == "auto" else a.state_device)
    check_size(a.params, a.path, str(dev))
    model = mlp(a.params, a.width).to(dev)
    state = checkpoint_state(model)
    del model
    n_params = sum(p.numel() for p in state["master"].values())
    sync = {"both": (False, True), "on": (True,), "off": (False,)}[a.fsync]
    recs = bench(state, a.path, tuple(a.shards), a.threads, sync, a.repeats)
    if not a.json:
        print(f"# {n_params:,} parameters, {tensor_bytes(state) / 1e9:.2f} GB of tensors; state on {dev} ({why}); "
              f"{a.path} on {iofile.fs_type(a.path)}")
    results.emit(recs, "ckptwrite", a, columns=COLUMNS, path=a.path, fs_type=iofile.fs_type(a.path),
                 n_params=n_params, state_bytes=tensor_bytes(state),
                 note="the host's disk under --path, not a GPU result")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
