"""PyTorch's CUDA caching allocator: its statistics, and fragmentation made visible (chapter 09; GPU only).

``cudaMalloc`` is slow and synchronises the device, so PyTorch keeps freed blocks in a cache (*reserved*
memory) and carves new tensors out of it (*allocated* memory). ``torch.cuda.memory_stats()`` exposes the books.
Fragmentation is reserved memory that is free but cannot serve a request because it is cut into holes
between live tensors. The demo makes such holes on purpose:

1. reserve one 1 GiB segment (allocate and free a 1 GiB tensor: it stays cached);
2. allocate 16 × 64 MiB — all carved from that segment;
3. free every other one: 512 MiB free, but in 64 MiB holes;
4. ask for 96 MiB: no hole is big enough, so the allocator calls cudaMalloc for a new segment;
5. ``empty_cache()`` cannot return the 1 GiB segment, because live tensors still sit in it.

With ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` the allocator maps physical pages into a growing
virtual range instead, and can unmap the pages of free holes (run in a child process, since the setting is
read when CUDA starts). On a machine without a GPU this module says so and does nothing.

    python -m helpers allocator --json --out assets/measurements/h200/allocator.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass

from helpers.core import results, timing

MiB = 2**20


@dataclass(frozen=True)
class AllocatorState:
    config: str                     # "default" or "expandable_segments"
    step: str
    allocated_MiB: float            # held by live tensors
    reserved_MiB: float             # held by the allocator from CUDA (live + cached)
    free_in_reserved_MiB: float     # reserved − allocated
    largest_free_block_MiB: float   # the biggest request the cache could serve without cudaMalloc
    inactive_split_MiB: float       # free pieces of split blocks: the fragmentation statistic
    segments: int                   # cudaMalloc'd segments currently held
    alloc_retries: int              # cudaMalloc failures followed by a cache flush and retry


def _state(torch, config: str, step: str) -> AllocatorState:
    s = torch.cuda.memory_stats()
    largest = 0
    for seg in torch.cuda.memory_snapshot():
        for blk in seg.get("blocks", []):
            if blk.get("state") == "inactive":
                largest = max(largest, blk["size"])
    alloc, res = s.get("allocated_bytes.all.current", 0), s.get("reserved_bytes.all.current", 0)
    return AllocatorState(config, step, alloc / MiB, res / MiB, (res - alloc) / MiB, largest / MiB,
                          s.get("inactive_split_bytes.all.current", 0) / MiB, s.get("segment.all.current", 0),
                          s.get("num_alloc_retries", 0))


def fragmentation_demo(block_MiB: int = 64, n_blocks: int = 16, request_MiB: int = 96) -> list[AllocatorState]:
    """Run the five steps above on GPU 0 with whatever allocator config this process started with."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("the fragmentation demo needs a CUDA GPU; on a CPU machine read the recorded H200 "
                           "result (measurements.load('h200/allocator'))")
    conf = "expandable_segments" if "expandable_segments:true" in \
        os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "").lower().replace(" ", "") else "default"
    dev = torch.device("cuda", 0)
    torch.cuda.init()            # the allocator's statistics exist only once CUDA is initialised
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(dev)
    out = [_state(torch, conf, "0 start")]
    big = torch.empty(block_MiB * n_blocks * MiB, dtype=torch.uint8, device=dev)
    del big                                                   # freed, but cached: one big segment
    out.append(_state(torch, conf, f"1 reserve {block_MiB * n_blocks} MiB, free it"))
    blocks = [torch.empty(block_MiB * MiB, dtype=torch.uint8, device=dev) for _ in range(n_blocks)]
    out.append(_state(torch, conf, f"2 allocate {n_blocks} x {block_MiB} MiB"))
    for i in range(0, n_blocks, 2):
        blocks[i] = None                                      # every other one: holes between live tensors
    out.append(_state(torch, conf, "3 free every other block"))
    extra = torch.empty(request_MiB * MiB, dtype=torch.uint8, device=dev)
    out.append(_state(torch, conf, f"4 request {request_MiB} MiB"))
    torch.cuda.empty_cache()
    out.append(_state(torch, conf, "5 empty_cache()"))
    del extra, blocks
    torch.cuda.empty_cache()
    return out


@dataclass(frozen=True)
class AllocTiming:
    size_MiB: int
    cached_s: float                 # served from the allocator's cache
    cudamalloc_s: float             # cache emptied first: a real cudaMalloc (and cudaFree)


def alloc_timing(size_MiB: int = 256, repeats: int = 10) -> AllocTiming:
    """Why the cache exists: allocating from it vs calling cudaMalloc. Allocation is host-side work (no
    kernel runs), so it is timed with the host clock (``device=None``), not with CUDA events."""
    import torch

    dev = torch.device("cuda", 0)
    n = size_MiB * MiB
    fn = lambda: torch.empty(n, dtype=torch.uint8, device=dev)  # noqa: E731
    warm = timing.time_fn(fn, device=None, warmup=2, repeats=repeats)
    cold = timing.time_fn(fn, device=None, warmup=1, repeats=repeats, setup=torch.cuda.empty_cache)
    return AllocTiming(size_MiB, warm.median_s, cold.median_s)


def key_stats() -> dict:
    """A few ``torch.cuda.memory_stats()`` counters, in MiB where they are bytes."""
    import torch

    s = torch.cuda.memory_stats()
    keys = ["allocated_bytes.all.peak", "reserved_bytes.all.peak", "allocation.all.allocated",
            "segment.all.allocated", "num_alloc_retries", "num_ooms"]
    return {k.replace("_bytes", "_MiB") if "bytes" in k else k: (s.get(k, 0) / MiB if "bytes" in k else s.get(k, 0))
            for k in keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers allocator", description=__doc__.split("\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)   # one config, JSON on stdout
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    import torch

    if a.child:
        print(json.dumps([results.to_dict(s) for s in fragmentation_demo()]))
        return 0
    if not torch.cuda.is_available():
        print("skipped: no CUDA GPU — the caching allocator demo runs on a GPU only "
              "(the recorded H200 result is in assets/measurements/h200/allocator.json)")
        return 0
    rows = [results.to_dict(s) for s in fragmentation_demo()]
    env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    child = subprocess.run([sys.executable, "-m", "helpers.compute.allocator", "--child"], env=env, capture_output=True,
                           text=True, timeout=120)
    if child.returncode == 0:
        rows += json.loads(child.stdout.strip().splitlines()[-1])
    else:
        print(f"note: the expandable_segments run failed: {child.stderr.strip()[-300:]}", file=sys.stderr)
    t = alloc_timing()
    results.emit(rows, "allocator", a, columns=["config", "step", "allocated_MiB", "reserved_MiB",
                                                "largest_free_block_MiB", "segments"],
                 alloc_timing=results.to_dict(t), stats=key_stats())
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
