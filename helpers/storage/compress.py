"""Compression codecs on real tensors, checkpoints and text; read + decompress vs raw read (chapter 23).

    python -m helpers compress --json                      # ratio and speed of every codec on every input
    python -m helpers compress --dir /tmp --out assets/measurements/h200/compress.json

Codecs: ``zlib`` (standard library, always there), ``lz4`` (the ``lz4`` package) and ``zstd`` (the
``zstandard`` package), each imported lazily; a missing one is reported with the pip command, never faked.
Inputs are real bytes: the weights of a small MLP after a few seeded Adam steps (fp32 and bf16), a full
training checkpoint (weights + Adam moments, ``torch.save``), and text (this book's own Markdown sources).
``byte_shuffle`` groups the k-th byte of every element together (Blosc's "shuffle" filter): the sign/exponent
bytes of floats repeat a lot, the low mantissa bytes are noise, and a codec sees that only after shuffling.
"""
from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli, timing

ROOT = Path(__file__).resolve().parents[2]             # the book: its text is the corpus


@dataclass(frozen=True)
class Codec:
    name: str
    level: int
    compress: object        # bytes -> bytes
    decompress: object      # bytes -> bytes


def _load(name: str, level: int | None) -> Codec:
    if name == "zlib":
        lv = 6 if level is None else level
        return Codec("zlib", lv, lambda b: zlib.compress(b, lv), zlib.decompress)
    if name == "lz4":
        import lz4.frame  # optional: pip install lz4

        lv = 0 if level is None else level
        return Codec("lz4", lv, lambda b: lz4.frame.compress(b, compression_level=lv), lz4.frame.decompress)
    if name == "zstd":
        import zstandard  # optional: pip install zstandard

        lv = 3 if level is None else level
        c, d = zstandard.ZstdCompressor(level=lv), zstandard.ZstdDecompressor()
        return Codec("zstd", lv, c.compress, d.decompress)
    raise ValueError(f"codec {name!r}: use 'zlib', 'lz4' or 'zstd'")


def codec(name: str, level: int | None = None) -> Codec:
    """The codec ``name`` at ``level`` (its library default when None). Raises RuntimeError when missing."""
    try:
        return _load(name, level)
    except ImportError:
        pkg = {"lz4": "lz4", "zstd": "zstandard"}[name]
        raise RuntimeError(f"codec {name!r} needs the {pkg} package: pip install {pkg}") from None


def available() -> dict[str, str | None]:
    """{codec: None if usable, else the one-line reason}."""
    out = {}
    for name in ("zlib", "lz4", "zstd"):
        try:
            codec(name)
            out[name] = None
        except RuntimeError as e:
            out[name] = str(e)
    return out


def best_available() -> str:
    """zstd if installed, else zlib (used for the compressed dataset shard of chapter 11)."""
    return "zstd" if available()["zstd"] is None else "zlib"


def byte_shuffle(data: bytes, itemsize: int) -> bytes:
    """Byte k of every element together, k = 0 … itemsize-1 (inverse: ``byte_unshuffle``)."""
    a = np.frombuffer(data, dtype=np.uint8)
    if a.size % itemsize:
        raise ValueError(f"{a.size} bytes is not a multiple of itemsize={itemsize}")
    return a.reshape(-1, itemsize).T.tobytes()


def byte_unshuffle(data: bytes, itemsize: int) -> bytes:
    a = np.frombuffer(data, dtype=np.uint8)
    return a.reshape(itemsize, -1).T.tobytes()


# ---------------------------------------------------------------- inputs (real bytes, seeded)

def trained_mlp(steps: int = 30, seed: int = 0, width: int = 512):
    """A small MLP (≈0.4 M parameters) and its Adam optimizer after ``steps`` seeded steps on a toy task."""
    import torch

    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(256, width), torch.nn.GELU(), torch.nn.Linear(width, width),
                                torch.nn.GELU(), torch.nn.Linear(width, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    w_true = torch.randn(256, 10, generator=g)
    for _ in range(steps):
        x = torch.randn(128, 256, generator=g)
        loss = torch.nn.functional.cross_entropy(model(x), (x @ w_true).argmax(1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def inputs(seed: int = 0, text_limit_bytes: int = 2**21) -> dict[str, bytes]:
    """Named byte strings to compress: weights (fp32, bf16, fp32 byte-shuffled), a checkpoint, text."""
    import torch

    model, opt = trained_mlp(seed=seed)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    fp32 = flat.numpy().tobytes()
    bf16 = flat.to(torch.bfloat16).view(torch.int16).numpy().tobytes()
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, buf)
    return {"weights fp32": fp32, "weights fp32 shuffled": byte_shuffle(fp32, 4), "weights bf16": bf16,
            "weights bf16 shuffled": byte_shuffle(bf16, 2), "checkpoint (torch.save)": buf.getvalue(),
            "text (book sources)": book_text(text_limit_bytes)}


def book_text(limit_bytes: int = 2**21) -> bytes:
    """The book's own Markdown and Python sources (sorted, so the same tree gives the same bytes)."""
    files = sorted([*ROOT.glob("chapters/*/*.md"), *ROOT.glob("*.md"), *ROOT.glob("helpers/**/*.py")])
    return b"\n".join(p.read_bytes() for p in files)[:limit_bytes]


def stdlib_text(limit_bytes: int = 16 * 2**20) -> bytes:
    """Python's own standard-library sources (sorted paths, site-packages left out): a large, real text
    corpus that is the same on every machine with the same Python version."""
    lib = Path(os.__file__).parent
    out, n = [], 0
    for dirpath, dirs, files in os.walk(lib):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages", "__pycache__"))
        for name in sorted(f for f in files if f.endswith(".py")):
            out.append((Path(dirpath) / name).read_bytes())
            n += len(out[-1])
            if n >= limit_bytes:
                return b"".join(out)[:limit_bytes]
    return b"".join(out)[:limit_bytes]


# ---------------------------------------------------------------- measurements

@dataclass(frozen=True)
class CompressResult:
    input: str
    codec: str
    level: int
    size_bytes: int
    compressed_bytes: int
    ratio: float                # size / compressed
    compress_MBps: float        # uncompressed MB (1e6 B) per second
    decompress_MBps: float      # uncompressed MB produced per second


def measure(data: bytes, name: str, level: int | None = None, input_name: str = "?",
            repeats: int = 3) -> CompressResult:
    """Ratio and median speed of one codec on ``data``; checks the round trip is exact."""
    c = codec(name, level)
    z = c.compress(data)
    if c.decompress(z) != data:
        raise AssertionError(f"{name} level {c.level}: round trip changed the data")
    tc = timing.time_fn(lambda: c.compress(data), warmup=1, repeats=repeats)
    td = timing.time_fn(lambda: c.decompress(z), warmup=1, repeats=repeats)
    n = len(data)
    return CompressResult(input_name, name, c.level, n, len(z), round(n / len(z), 3),
                          round(n / tc.median_s / 1e6, 1), round(n / td.median_s / 1e6, 1))


def sweep(data_by_name: dict[str, bytes], codecs=(("zlib", 1), ("zlib", 6), ("lz4", None), ("zstd", 1),
                                                   ("zstd", 3)), repeats: int = 3) -> list[CompressResult]:
    from helpers.core.progress import progress

    usable = [(n, lv) for n, lv in codecs if available()[n] is None]
    pending = [(k, n, lv) for k in data_by_name for n, lv in usable]
    return [measure(data_by_name[k], n, lv, k, repeats) for k, n, lv in progress(pending, "codecs")]


@dataclass(frozen=True)
class PipelineResult:
    method: str                 # "raw read" or "read + <codec> decompress"
    cache: str                  # "cold" or "warm"
    stored_bytes: int
    delivered_bytes: int        # uncompressed bytes handed to the consumer
    time_s: float
    delivered_MBps: float


def _drop(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_pipeline(directory, data: bytes, name: str = "zstd", level: int | None = None,
                  chunk_bytes: int = 2**20, caches=("cold", "warm")) -> list[PipelineResult]:
    """Store ``data`` raw and compressed in ``chunk_bytes`` chunks under ``directory``; time reading each back
    (and decompressing), cold and warm. Files are removed afterwards."""
    c = codec(name, level)
    # a fresh folder of our own inside ``directory`` (created exclusively): no user file is ever overwritten
    work = Path(tempfile.mkdtemp(prefix="book-compress-", dir=directory))
    raw_p, z_p = work / "pipe.raw", work / "pipe.z"
    chunks = [c.compress(data[i:i + chunk_bytes]) for i in range(0, len(data), chunk_bytes)]
    out = []
    try:
        raw_p.write_bytes(data)
        with open(z_p, "wb") as f:
            for z in chunks:
                f.write(len(z).to_bytes(8, "little") + z)
        for cache in caches:
            for path, decode in ((raw_p, False), (z_p, True)):
                _drop(path) if cache == "cold" else path.read_bytes()
                t0 = time.perf_counter()
                n = 0
                with open(path, "rb", buffering=0) as f:
                    if decode:
                        while head := f.read(8):
                            n += len(c.decompress(f.read(int.from_bytes(head, "little"))))
                    else:
                        while blk := f.read(chunk_bytes):
                            n += len(blk)
                dt = time.perf_counter() - t0
                label = f"read + {name} decompress" if decode else "raw read"
                out.append(PipelineResult(label, cache, path.stat().st_size, n, round(dt, 5), round(n / dt / 1e6, 1)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def pipeline_model_MBps(storage_MBps: float, ratio: float, decompress_MBps: float, overlapped: bool = True) -> float:
    """Delivered (uncompressed) MB/s when compressed data arrives at ``storage_MBps``: the storage supplies
    ``storage_MBps × ratio`` of payload, the CPU decodes at ``decompress_MBps``. Overlapped (read-ahead
    threads): the slower stage wins; serial: the times add."""
    if min(storage_MBps, ratio, decompress_MBps) <= 0:
        raise ValueError(f"storage {storage_MBps}, ratio {ratio}, decompress {decompress_MBps}: all must be > 0")
    a = storage_MBps * ratio
    return min(a, decompress_MBps) if overlapped else 1 / (1 / a + 1 / decompress_MBps)


def main(argv: list[str] | None = None) -> int:
    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers compress", description=__doc__.split("\n")[0])
    ap.add_argument("--dir", type=cli.existing_dir, default=None, help="also time read + decompress vs raw read of the checkpoint here")
    ap.add_argument("--repeats", type=cli.repeats, default=3)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.dir and not Path(a.dir).is_dir():
        ap.error(f"--dir {a.dir!r} is not an existing directory")
    data = inputs()
    recs = sweep(data, repeats=a.repeats)
    meta = {"codecs": available()}
    if a.dir:
        text = stdlib_text()                      # 16 MiB of real text: large enough to time a cold read
        meta["pipeline"] = [results.to_dict(r) for r in read_pipeline(a.dir, text, best_available())]
    results.emit(recs, "compress", a, columns=["input", "codec", "level", "size_bytes", "ratio",
                                               "compress_MBps", "decompress_MBps"], **meta)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
