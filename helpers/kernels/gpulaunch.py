"""Launching work well: CUDA Graphs vs eager launches, copy/compute overlap on streams, asynchronous errors, and
the PTX/SASS of a kernel from the CUDA toolkit (chapter 25).

* :func:`graph_vs_eager` — a chain of ``n_kernels`` tiny elementwise kernels, launched one by one (each pays the
  CPU-side launch cost) and as one captured ``torch.cuda.CUDAGraph`` replay (``helpers.core.timing.cuda_graph``);
  per-chain and per-kernel times.
* :func:`overlap` — H2D copies of pinned chunks and a compute kernel on each chunk, on one stream vs on two
  streams with events ordering each chunk's compute after its copy; the ``torch.profiler`` timeline is returned as
  (stream, name, start_us, duration_us) rows so the chapter can draw it.
* :func:`async_error` — a kernel that writes out of bounds, in a child process: the launch returns at once, the
  error surfaces at the next synchronisation, and the CUDA context is unusable afterwards (sticky error).
* :func:`ptx_sass` — ``nvcc -ptx`` / ``-cubin`` and ``cuobjdump -sass`` of a kernel, with ``ptxas -v``'s
  register count, where the toolkit is installed (the H200 machine). Without it, ``helpers.kernels.tritonk``
  compiles Triton kernels to PTX and SASS on any machine.

GPU-only functions raise RuntimeError with the reason on a machine without CUDA.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from helpers.core import timing


def _need_cuda():
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA GPU here: CUDA Graphs and streams run on the H200 (see the recorded results)")
    return torch


@dataclass(frozen=True)
class DispatchResult:
    device: str
    n_ops: int
    elements: int
    chain_time_s: float        # median of a chain of n_ops tiny elementwise ops
    per_op_us: float           # what one eager op costs the host (dispatch + launch, or the CPU loop itself)


def dispatch_overhead(n_ops: int = 200, elements: int = 4, device=None, repeats: int = 20) -> DispatchResult:
    """Time a chain of tiny eager ops: with 4 elements the arithmetic is nothing, so the time per op is the
    framework's dispatch (plus, on a GPU, the kernel launch) — the cost a CUDA Graph replay removes."""
    import torch

    from helpers.core.device import pick_device

    if n_ops < 1 or elements < 1:
        raise ValueError(f"n_ops={n_ops}, elements={elements}: use positive numbers")
    dev = pick_device()[0] if device is None else torch.device(device)
    x = torch.ones(elements, device=dev)

    def chain():
        y = x
        for _ in range(n_ops):
            y = y * 1.0001
        return y

    t = timing.time_fn(chain, device=dev if dev.type == "cuda" else None, warmup=3, repeats=repeats)
    return DispatchResult(str(dev), n_ops, elements, t.median_s, 1e6 * t.median_s / n_ops)


@dataclass(frozen=True)
class GraphResult:
    mode: str                  # eager | cuda_graph
    n_kernels: int
    elements: int
    chain_time_s: float        # median
    per_kernel_us: float
    speedup_vs_eager: float
    correct: bool              # the graph's result equals the eager one
    device: str


def graph_vs_eager(n_kernels: int = 50, elements: int = 4096, repeats: int = 50) -> list[GraphResult]:
    torch = _need_cuda()
    if n_kernels < 1 or elements < 1:
        raise ValueError(f"n_kernels={n_kernels}, elements={elements}: use positive numbers")
    x = torch.ones(elements, device="cuda")

    def chain():
        y = x
        for _ in range(n_kernels):
            y = y * 1.0001 + 0.0001
        return y

    replay, static_out = timing.cuda_graph(chain)          # one capture of the whole chain
    want = chain()
    replay()
    torch.cuda.synchronize()
    ok = bool(torch.allclose(static_out, want))
    te = timing.time_fn(chain, device="cuda", warmup=3, repeats=repeats)
    tg = timing.time_fn(replay, device="cuda", warmup=3, repeats=repeats)
    name = torch.cuda.get_device_name(0)
    kernels = 2 * n_kernels                                  # a multiply and an add per step
    return [GraphResult("eager", kernels, elements, te.median_s, 1e6 * te.median_s / kernels, 1.0, True, name),
            GraphResult("cuda_graph", kernels, elements, tg.median_s, 1e6 * tg.median_s / kernels,
                        te.median_s / tg.median_s, ok, name)]


@dataclass(frozen=True)
class OverlapResult:
    streams: int
    chunks: int
    chunk_bytes: int
    total_time_s: float
    speedup_vs_one_stream: float
    timeline: tuple            # ((stream, name, start_us, duration_us), …) from torch.profiler
    device: str


def _work(t, iters: int):
    for _ in range(iters):
        t = t * 1.000001 + 0.000001
    return t


def overlap(chunks: int = 8, chunk_mib: int = 64, iters: int = 20) -> list[OverlapResult]:
    torch = _need_cuda()
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    if chunks < 2 or chunk_mib < 1:
        raise ValueError(f"chunks={chunks}, chunk_mib={chunk_mib}: use ≥ 2 chunks of ≥ 1 MiB")
    n = chunk_mib * 2**20 // 4
    host = [torch.randn(n).pin_memory() for _ in range(chunks)]
    dev = [torch.empty(n, device="cuda") for _ in range(chunks)]
    streams = [torch.cuda.Stream() for _ in range(2)]

    def run(k: int):
        for i in range(chunks):
            s = streams[i % k]
            with torch.cuda.stream(s):
                dev[i].copy_(host[i], non_blocking=True)     # pinned → device, asynchronous on stream s
                dev[i] = _work(dev[i], iters)                # ordered after the copy on the same stream
        for s in streams[:k]:
            torch.cuda.current_stream().wait_stream(s)

    out, base = [], None
    name = torch.cuda.get_device_name(0)
    for k in (1, 2):
        t = timing.time_fn(lambda k=k: run(k), device="cuda", warmup=2, repeats=5)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run(k)
            torch.cuda.synchronize()
        ev = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
        t0 = min((e.time_range.start for e in ev), default=0)
        rows = tuple(sorted((int(getattr(e, "device_resource_id", 0) or 0), e.name[:40],
                             float(e.time_range.start - t0), float(e.time_range.elapsed_us())) for e in ev)[:400])
        base = base or t.median_s
        out.append(OverlapResult(k, chunks, 4 * n, t.median_s, base / t.median_s, rows, name))
    return out


_BAD_KERNEL = r'''
import cupy as cp, time
k = cp.RawKernel(r"""extern "C" __global__ void bad(float* p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }""", "bad")
x = cp.zeros(1, dtype=cp.float32)
t0 = time.perf_counter(); k((1,), (32,), (x,)); t1 = time.perf_counter()
print("launch returned after %.1f us without an error" % ((t1 - t0) * 1e6), flush=True)
try:
    cp.cuda.Device().synchronize()
    print("synchronize: no error")
except Exception as e:
    print("synchronize raised:", type(e).__name__, str(e)[:120], flush=True)
try:
    cp.zeros(4).sum().item()
    print("the context still works")
except Exception as e:
    print("afterwards, any CUDA call fails:", type(e).__name__, str(e)[:80])
'''


def async_error(timeout_s: float = 60) -> str:
    """Run the out-of-bounds kernel in a child process and return what it printed."""
    _need_cuda()
    p = subprocess.run([sys.executable, "-c", _BAD_KERNEL], capture_output=True, text=True, timeout=timeout_s)
    return (p.stdout + (p.stderr.strip().splitlines() or [""])[-1]).strip()


SAXPY = r'''extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
'''


def parse_ptxas_v(text: str) -> dict[str, dict]:
    """Registers, shared memory and spills per kernel from ``ptxas -v`` output (``nvcc -Xptxas -v``).

    A ``Used N registers`` line belongs to the entry function named by the last ``Compiling entry function``
    line before it; ``Function properties for`` lines of device functions carry the spill counts only."""
    out: dict[str, dict] = {}
    entry, spills = None, {}
    for line in text.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            entry = m.group(1)
        elif m := re.search(r"Function properties for (\S+)", line):
            spills = {"fn": m.group(1)}
        elif m := re.search(r"([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads", line):
            spills.update(stores=int(m.group(1)), loads=int(m.group(2)))
        elif (m := re.search(r"Used ([0-9]+) registers", line)) and entry is not None:
            smem = re.search(r"([0-9]+) bytes smem", line)
            same = spills.get("fn") == entry
            out[entry] = {"registers": int(m.group(1)), "smem_bytes": int(smem.group(1)) if smem else 0,
                          "spill_store_bytes": spills.get("stores", 0) if same else 0}
            entry = None
    return out


@dataclass(frozen=True)
class ToolchainListing:
    kernel: str
    arch: str
    registers: int | None
    ptx: str
    sass: str
    note: str


def ptx_sass(source: str = SAXPY, arch: str = "sm_90", name: str = "saxpy") -> ToolchainListing:
    """PTX, SASS and the register count of ``source`` with nvcc, ptxas and cuobjdump (when on PATH)."""
    if not re.fullmatch(r"sm_[0-9]{2,3}a?", arch):
        raise ValueError(f"arch={arch!r}: write it as sm_90 (H100/H200), sm_80 (A100) …")
    nvcc, cob = shutil.which("nvcc"), shutil.which("cuobjdump")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH: install the CUDA toolkit, or use helpers.kernels.tritonk.compile_for")
    with tempfile.TemporaryDirectory() as d:
        cu = Path(d) / "k.cu"
        cu.write_text(source)
        ptx = subprocess.run([nvcc, "-ptx", f"-arch={arch}", "-o", str(Path(d) / "k.ptx"), str(cu)],
                             capture_output=True, text=True, timeout=120)
        if ptx.returncode:
            raise RuntimeError(f"nvcc -ptx failed: {ptx.stderr.strip()[:300]}")
        cub = subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-o", str(Path(d) / "k.cubin"),
                              str(cu)], capture_output=True, text=True, timeout=120)
        used = parse_ptxas_v(cub.stdout + cub.stderr)
        sass = subprocess.run([cob, "-sass", str(Path(d) / "k.cubin")], capture_output=True, text=True,
                              timeout=60).stdout if cob else ""
        return ToolchainListing(name, arch, used.get(name, {}).get("registers"), (Path(d) / "k.ptx").read_text(), sass,
                                subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip()
                                .splitlines()[-1] + ("" if cob else "; cuobjdump not on PATH: no SASS"))
