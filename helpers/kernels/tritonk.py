"""Triton kernels: vector add, a fused softmax and a tiled matmul, checked against torch (chapters 10 and 25).

Triton writes a GPU kernel as a Python function over *blocks* of elements (``tl.arange``, ``tl.load`` with a mask,
``tl.dot`` for a tile product); the compiler chooses threads, vector widths and shared-memory staging. Two ways to
run the same source here:

* on a machine without a GPU, Triton's **interpreter** (``TRITON_INTERPRET=1``, read when ``@triton.jit`` runs:
  this module sets it before importing triton when ``helpers.core.device.pick_device()`` finds no GPU) executes the
  kernel with numpy on torch CPU tensors — exact, slow, and without bounds checks, so every load and store is masked;
* on a GPU, the compiled kernel.

Either way :func:`compile_for` compiles a kernel ahead of time for a chosen GPU architecture (sm_90 = Hopper, the
H100/H200) with Triton's own LLVM and ``ptxas`` — no GPU and no driver needed — and returns its PTX, its SASS
(through the ``nvdisasm`` that ships with Triton) and the registers and shared memory per thread block that
``cuobjdump -res-usage`` reports: the inputs of the occupancy calculator (``helpers.kernels.occupancy``).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from helpers.core.device import pick_device
from helpers.core import timing

_DEV = pick_device()[0]
if "triton" not in sys.modules and _DEV.type != "cuda" and "TRITON_INTERPRET" not in os.environ:
    os.environ["TRITON_INTERPRET"] = "1"
INTERPRETED = os.environ.get("TRITON_INTERPRET") == "1"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)                       # which block of BLOCK elements this program owns
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n                              # the last block may be partial
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """One program per row: the row is read once, max, exp, sum and divide happen in registers, written once."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, sam, sak, sbk, sbn, scm, scn, K: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C tile (BM×BN) per program; the K loop multiplies BM×BK and BK×BN tiles with tl.dot (Tensor Cores).
    K is a compile-time constant (the interpreter with numpy 2 cannot loop to a runtime scalar)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def add(x: torch.Tensor, y: torch.Tensor, block: int = 1024) -> torch.Tensor:
    if x.shape != y.shape or x.dim() != 1:
        raise ValueError(f"add: x {tuple(x.shape)} and y {tuple(y.shape)} must be 1-D and the same length")
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block)
    return out


def softmax(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError(f"softmax: x must be a contiguous 2-D tensor, got shape {tuple(x.shape)}")
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def matmul(a: torch.Tensor, b: torch.Tensor, bm: int = 32, bn: int = 32, bk: int = 32) -> torch.Tensor:
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {tuple(a.shape)} @ {tuple(b.shape)} do not chain")
    if min(bm, bn, bk) < 16:
        raise ValueError(f"matmul: tile {bm}×{bn}×{bk}: tl.dot needs tiles of at least 16")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    matmul_kernel[grid](a, b, c, M, N, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), K=K, BM=bm, BN=bn, BK=bk)
    return c


@dataclass(frozen=True)
class TritonCheck:
    kernel: str
    shape: str
    mode: str                 # "interpreter (CPU)" or "compiled (GPU)"
    max_abs_err: float        # against torch's own operation on the same tensors
    tolerance: float
    correct: bool
    time_s: float             # median; interpreter times are Python speed, not GPU speed
    torch_time_s: float


def check_all(seed: int = 0, small: bool | None = None) -> list[TritonCheck]:
    """Each kernel against torch on the same inputs (small shapes in the interpreter, larger on a GPU)."""
    small = INTERPRETED if small is None else small
    g = torch.Generator(device=_DEV).manual_seed(seed)
    n, rows, cols, mm = (10_000, 64, 200, 64) if small else (2**24, 4096, 4096, 4096)
    mode = "interpreter (CPU)" if INTERPRETED else f"compiled ({_DEV.type})"
    dtype_mm = torch.float32 if INTERPRETED else torch.float16
    x, y = (torch.randn(n, device=_DEV, generator=g) for _ in range(2))
    s = torch.randn(rows, cols, device=_DEV, generator=g)
    a = torch.randn(mm, mm, device=_DEV, generator=g).to(dtype_mm)
    b = torch.randn(mm, mm, device=_DEV, generator=g).to(dtype_mm)
    cases = [("vector add", f"{n}", lambda: add(x, y), lambda: x + y, 1e-6),
             ("fused softmax", f"{rows}×{cols}", lambda: softmax(s), lambda: torch.softmax(s, dim=1), 1e-6),
             ("tiled matmul", f"{mm}×{mm}×{mm}", lambda: matmul(a, b), lambda: (a.float() @ b.float()),
              2e-2 * mm ** 0.5 if not INTERPRETED else 1e-3)]
    dev = _DEV if _DEV.type == "cuda" else None
    out = []
    for name, shape, fn, ref, tol in cases:
        err = float((fn() - ref()).abs().max())
        reps = 3 if INTERPRETED else 20
        t = timing.time_fn(fn, device=dev, warmup=1, repeats=reps)
        tr = timing.time_fn(ref, device=dev, warmup=1, repeats=reps)
        out.append(TritonCheck(name, shape, mode, err, tol, err <= tol, t.median_s, tr.median_s))
    return out


@dataclass(frozen=True)
class CompiledKernel:
    kernel: str
    arch: str                 # e.g. sm_90a
    registers_per_thread: int | None
    shared_bytes: int | None  # static shared memory per block (cuobjdump)
    num_warps: int
    ptx: str
    sass: str                 # '' when nvdisasm is not available
    ptx_lines: int
    sass_instructions: int
    global_loads: dict        # SASS opcode (LDG.E, LDG.E.128 …) → count
    note: str


SIGNATURES = {
    "add": ("add_kernel", {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
            {"BLOCK": 1024}),
    "softmax": ("softmax_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32", "stride": "i32",
                                   "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    "matmul": ("matmul_kernel", {**{p: "*fp16" for p in ("a_ptr", "b_ptr")}, "c_ptr": "*fp32",
                                 **{k: "i32" for k in ("M", "N", "sam", "sak", "sbk", "sbn", "scm", "scn")},
                                 "K": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
               {"K": 4096, "BM": 128, "BN": 128, "BK": 64}),
}


def _tool(name: str) -> Path | None:
    p = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    return p if p.exists() else None


def compile_for(kernel: str = "add", arch: int = 90, aligned: bool = False, num_warps: int = 4) -> CompiledKernel:
    """Compile one of SIGNATURES for sm_<arch> ahead of time; ``aligned`` tells the compiler every pointer is
    16-byte aligned and every integer argument a multiple of 16 (what the JIT assumes for such arguments), which
    lets it emit 128-bit vector loads. In an interpreter process (which patches triton.language for numpy) the
    compiler runs in a child Python with ``TRITON_INTERPRET=0``."""
    if kernel not in SIGNATURES:
        raise ValueError(f"kernel={kernel!r}: use one of {list(SIGNATURES)}")
    if arch not in (80, 89, 90):
        raise ValueError(f"arch={arch}: use 80 (A100), 89 (L40S) or 90 (H100/H200)")
    if not INTERPRETED:
        return _compile(kernel, arch, aligned, num_warps)
    import dataclasses
    import json

    code = ("import dataclasses, json; from helpers.kernels import tritonk; "
            f"print(json.dumps(dataclasses.asdict(tritonk._compile({kernel!r}, {arch}, {aligned}, {num_warps}))))")
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"compiling {kernel} for sm_{arch} failed: {p.stderr.strip().splitlines()[-1:]}")
    d = json.loads(p.stdout.strip().splitlines()[-1])
    return CompiledKernel(**{f.name: d[f.name] for f in dataclasses.fields(CompiledKernel)})


def _compile(kernel: str, arch: int, aligned: bool, num_warps: int) -> CompiledKernel:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    fname, sig, consts = SIGNATURES[kernel]
    fn = globals()[fname]
    jit = JITFunction(fn.fn) if not isinstance(fn, JITFunction) else fn      # the interpreter wraps the function
    attrs = {}
    if aligned:
        attrs = {(i,): [["tt.divisibility", 16]] for i, (k, v) in enumerate(sig.items()) if v != "constexpr"}
    src = ASTSource(fn=jit, signature=sig, constexprs=consts, attrs=attrs)
    ck = triton.compile(src, target=GPUTarget("cuda", arch, 32), options={"num_warps": num_warps})
    regs = shared = None
    sass, notes = "", []
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / f"{kernel}.cubin"
        cubin.write_bytes(ck.asm["cubin"])
        if (cob := _tool("cuobjdump")) is not None:
            res = subprocess.run([str(cob), "-res-usage", str(cubin)], capture_output=True, text=True, timeout=60)
            if m := re.search(r"REG:([0-9]+).*?SHARED:([0-9]+)", res.stdout):
                regs, shared = int(m.group(1)), int(m.group(2))
        else:
            notes.append("cuobjdump not shipped with this triton")
        if (nvd := _tool("nvdisasm")) is not None:
            sass = subprocess.run([str(nvd), "-c", str(cubin)], capture_output=True, text=True, timeout=60).stdout
        else:
            notes.append("nvdisasm not shipped with this triton: no SASS")
    instr = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)
    loads: dict[str, int] = {}
    for op in instr:
        if op.startswith("LDG"):
            loads[op] = loads.get(op, 0) + 1
    shared = max(shared or 0, int(ck.metadata.shared)) if shared is not None else int(ck.metadata.shared)
    return CompiledKernel(kernel, f"sm_{arch}{'a' if arch == 90 else ''}", regs, shared, ck.metadata.num_warps,
                          ck.asm["ptx"], sass, len(ck.asm["ptx"].splitlines()), len(instr), dict(sorted(loads.items())),
                          "; ".join(notes) or f"triton {triton.__version__}, ptxas and nvdisasm shipped with it")


def ptx_excerpt(ptx: str, pattern: str = r"ld\.global|st\.global|add\.f32|fma|mma|ex2|max\.f32", limit: int = 12) -> str:
    """The PTX lines that do the work (loads, stores, arithmetic), without the .loc debug lines."""
    lines = [ln.strip() for ln in ptx.splitlines() if re.search(pattern, ln) and not ln.strip().startswith(".loc")]
    return "\n".join(lines[:limit])
