"""GPU ↔ host "shared memory": pageable vs pinned copies, mapped zero-copy access from a kernel, P2P (chapter 3).

Four ways for a GPU to get at bytes that are not in its own HBM, measured one after the other on the same buffer:

* ``pageable memcpy`` — ``cudaMemcpy`` from ordinary ``malloc`` memory: the driver stages it through a pinned
  bounce buffer, chunk by chunk;
* ``pinned memcpy`` — from page-locked memory (``cudaHostAlloc``): the copy engine DMAs it directly;
* ``zero-copy read`` / ``zero-copy write`` — memory allocated with ``cudaHostAllocMapped`` and handed to a kernel
  through ``cudaHostGetDevicePointer``: the kernel's loads and stores cross PCIe (or NVLink-C2C) themselves, no copy
  at all — the same mechanism GPUDirect RDMA uses the other way round, when a NIC reads GPU memory;
* ``p2p memcpy`` — GPU 0 → GPU 1 with peer access enabled (over NVLink or PCIe), only where there are two GPUs;
* ``device memcpy`` — HBM to HBM on one GPU, as the reference ceiling.

Every transfer is checked (the destination's checksum equals the source's), timed with ``helpers.core.timing``
(CUDA events) and recorded with the SM clock and power NVML saw. It needs a CUDA GPU, torch and cupy; without them
:func:`available` says why and nothing is measured.

    python -m helpers gpudirect --sizes 64MiB,1GiB --out assets/measurements/h200/gpudirect.json
"""
from __future__ import annotations

import argparse
import ctypes
import sys
from dataclasses import dataclass

from helpers.core import cli, results, timing

PATHS = ("device memcpy", "pinned memcpy", "pageable memcpy", "zero-copy read", "zero-copy write", "p2p memcpy")

_KERNEL = r"""
extern "C" __global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
"""


@dataclass(frozen=True)
class GDResult:
    path: str                  # one of PATHS
    size_bytes: int
    time_s: float              # median of the timed transfers
    bw_GBps: float             # size_bytes / time_s / 1e9
    correct: bool              # destination checksum equals the source's
    device: str
    sm_clock_MHz_median: float | None
    power_W_median: float | None
    throttle_reasons: tuple


def available() -> tuple[bool, str]:
    """Whether this machine can run the measurement, and why not."""
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "no CUDA GPU here: pinned, mapped and P2P memory are GPU-driver features, nothing to measure"
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False, "cupy is not installed (the zero-copy kernel and cudaHostAlloc flags come from it)"
    return True, f"{torch.cuda.device_count()} CUDA GPU(s): {torch.cuda.get_device_name(0)}"


def _host(nbytes: int, flags: int):
    """cudaHostAlloc'd bytes (flags 2 = cudaHostAllocMapped) as a numpy float32 view; returns (ptr, view)."""
    import cupy as cp
    import numpy as np

    ptr = cp.cuda.runtime.hostAlloc(nbytes, flags)
    view = np.ctypeslib.as_array((ctypes.c_float * (nbytes // 4)).from_address(ptr))
    return ptr, view


def measure(sizes_bytes=(2**26, 2**30), repeats: int = 10, warmup: int = 3) -> list[GDResult]:
    """Each path at each size on GPU 0 (and GPU 1 for P2P). Raises ValueError off a GPU, with the reason."""
    ok, why = available()
    if not ok:
        raise ValueError(f"gpudirect needs a CUDA GPU with cupy: {why}")
    import cupy as cp
    import numpy as np
    import torch

    from helpers.core import gpusampler

    dev = torch.device("cuda:0")
    name = torch.cuda.get_device_name(0)
    kern = cp.RawKernel(_KERNEL, "copy4")
    sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
    out = []
    for size in sizes_bytes:
        if size < 16 or size % 16:
            raise ValueError(f"size {size} bytes: use a multiple of 16 bytes (the kernel moves float4)")
        n = size // 4
        src = np.arange(n, dtype=np.float32) % 1009          # what every path must deliver
        want = float(src.astype(np.float64).sum())
        d_dst = cp.empty(n, dtype=cp.float32)
        d_src = cp.asarray(src)
        pin_ptr, pinned = _host(size, 0)
        map_ptr, mapped = _host(size, 2)
        pinned[:], mapped[:] = src, src
        # the kernel's pointer to the mapped host buffer (cudaHostGetDevicePointer; cupy exposes it through
        # cudaPointerGetAttributes — under unified virtual addressing it is the host address itself)
        map_dev = cp.cuda.runtime.pointerGetAttributes(map_ptr).devicePointer or map_ptr
        grid = (sms * 8,)
        block = (256,)
        paths = {
            "device memcpy": (lambda: d_dst.data.copy_from_device(d_src.data, size), lambda: d_dst),
            "pinned memcpy": (lambda: cp.cuda.runtime.memcpy(d_dst.data.ptr, pin_ptr, size, 1), lambda: d_dst),
            "pageable memcpy": (lambda: cp.cuda.runtime.memcpy(d_dst.data.ptr, src.ctypes.data, size, 1),
                                lambda: d_dst),
            "zero-copy read": (lambda: kern(grid, block, (np.uint64(map_dev), d_dst, np.uint64(n // 4))),
                               lambda: d_dst),
            "zero-copy write": (lambda: kern(grid, block, (d_src, np.uint64(map_dev), np.uint64(n // 4))),
                                lambda: mapped),
        }
        peer = None
        if cp.cuda.runtime.getDeviceCount() > 1 and cp.cuda.runtime.deviceCanAccessPeer(0, 1):
            with cp.cuda.Device(1):
                peer = cp.empty(n, dtype=cp.float32)
            try:
                cp.cuda.runtime.deviceEnablePeerAccess(1)
            except cp.cuda.runtime.CUDARuntimeError:
                pass                                          # already enabled
            paths["p2p memcpy"] = (lambda: cp.cuda.runtime.memcpyPeer(peer.data.ptr, 1, d_src.data.ptr, 0, size),
                                   lambda: peer)
        try:
            for path, (fn, dst) in paths.items():
                d_dst.fill(0)
                if path == "zero-copy write":
                    mapped[:] = 0
                with gpusampler.Sampler.for_torch_device(dev) as s:
                    t = timing.time_fn(fn, device=dev, warmup=warmup, repeats=repeats)
                cp.cuda.runtime.deviceSynchronize()
                got = dst()
                if isinstance(got, np.ndarray):
                    total = float(got.astype(np.float64).sum())
                else:
                    with got.device:                          # the P2P destination lives on GPU 1
                        total = float(got.astype(cp.float64).sum().get())
                smp = s.summary()
                out.append(GDResult(path, size, t.median_s, size / t.median_s / 1e9, total == want, name,
                                    smp["sm_clock_MHz_median"], smp["power_W_median"],
                                    tuple(smp["throttle_reasons"])))
        finally:
            cp.cuda.runtime.freeHost(pin_ptr)
            cp.cuda.runtime.freeHost(map_ptr)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers gpudirect", description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=cli.csv_of(cli.size_bytes(16, 2**36)), default="64MiB,1GiB",
                    help="comma-separated sizes, multiples of 16 bytes (default %(default)s)")
    ap.add_argument("--repeats", type=cli.repeats, default=10)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = measure(a.sizes, repeats=a.repeats)
    results.emit(recs, "gpudirect", a, columns=["path", "size_bytes", "time_s", "bw_GBps", "correct"])
    return 0 if all(r.correct for r in recs) else 1


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
