"""Attention three ways: written out, fused (``scaled_dot_product_attention``) and tiled like FlashAttention (chapter 18).

* :func:`naive` materialises the (B, h, T, T) score and probability matrices — what the model of chapter 9 stores.
* :func:`sdpa` calls ``torch.nn.functional.scaled_dot_product_attention``; on CUDA it can pick the flash,
  memory-efficient or math backend (:func:`bench` times each one that the GPU supports).
* :func:`tiled` is FlashAttention's algorithm in plain torch: K/V in blocks, an online softmax (running max m and
  sum l), never a T×T matrix; it counts the bytes it reads and writes from "HBM" so :func:`io_model` (Dao et al.
  2022, Theorem 2) can be checked against it.
* :func:`saved_bytes` measures what autograd keeps for the backward pass (saved-tensor hooks), the memory that
  fused attention saves by recomputing the probabilities in the backward.

    python -m helpers attention --seq 1024,4096 --out attention.json     # times and peak memory per backend
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import torch
import torch.nn.functional as F


def naive(q, k, v, causal: bool = True):
    """softmax(QKᵀ/√d) V with every intermediate stored. q, k, v: (B, h, T, d)."""
    T, d = q.shape[-2], q.shape[-1]
    s = (q @ k.transpose(-2, -1)) / math.sqrt(d)                    # (B, h, T, T)
    if causal:
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def sdpa(q, k, v, causal: bool = True):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


@dataclass
class IOCount:
    read_bytes: int = 0
    write_bytes: int = 0


def tiled(q, k, v, block: int = 64, causal: bool = True, io: IOCount | None = None):
    """FlashAttention forward (Dao et al. 2022, Algorithm 1) without a T×T matrix. Per query block Q_i (kept in
    "SRAM"), stream every key/value block K_j, V_j once and update the running row max m, row sum l and output O."""
    B, h, T, d = q.shape
    es = q.element_size()
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(d)
    for i0 in range(0, T, block):
        qi = q[..., i0:i0 + block, :]
        n_i = qi.shape[-2]
        m = torch.full((B, h, n_i, 1), float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros((B, h, n_i, 1), dtype=q.dtype, device=q.device)
        o = torch.zeros_like(qi)
        if io:
            io.read_bytes += qi.numel() * es
        j_end = min(T, i0 + n_i) if causal else T
        for j0 in range(0, j_end, block):
            kj, vj = k[..., j0:j0 + block, :], v[..., j0:j0 + block, :]
            if io:
                io.read_bytes += (kj.numel() + vj.numel()) * es
            s = (qi @ kj.transpose(-2, -1)) * scale                 # (B, h, n_i, n_j): one tile, never T×T
            if causal and j0 + kj.shape[-2] > i0:
                rows = torch.arange(i0, i0 + n_i, device=q.device)[:, None]
                cols = torch.arange(j0, j0 + kj.shape[-2], device=q.device)[None, :]
                s = s.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            p = torch.exp(s - m_new)
            alpha = torch.exp(m - m_new)                             # rescale what was summed under the old max
            l = alpha * l + p.sum(-1, keepdim=True)
            o = alpha * o + p @ vj
            m = m_new
        out[..., i0:i0 + n_i, :] = o / l
        if io:
            io.write_bytes += o.numel() * es
    return out


def io_model(T: int, d: int, block: int, batch_heads: int = 1, elem_bytes: int = 4, causal: bool = False) -> dict:
    """HBM bytes of standard attention (reads Q, K, V, writes and reads the T×T scores and probabilities, writes O)
    and of the tiled forward (Q and O once, K and V once per query block: Θ(T²d/B_r)). Non-causal by default;
    causal halves the K/V traffic of the tiled one, to first order."""
    n_blocks = math.ceil(T / block)
    std = (4 * T * d + 4 * T * T) * elem_bytes * batch_heads            # Q,K,V,O + S write/read + P write/read
    kv_passes = n_blocks * (n_blocks + 1) / 2 if causal else n_blocks * n_blocks
    flash = (2 * T * d + 2 * kv_passes * min(block, T) * d) * elem_bytes * batch_heads
    return {"standard_bytes": std, "tiled_bytes": int(flash)}


def saved_bytes(fn, *tensors) -> int:
    """Bytes autograd saves for the backward of ``fn(*tensors)`` (inputs that are leaves counted too)."""
    total, seen = 0, set()

    def pack(t):
        nonlocal total
        key = (t.untyped_storage().data_ptr(), t.shape, t.stride())
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn(*tensors)
    return total


def qkv(B: int, h: int, T: int, d: int, dtype=torch.float32, device="cpu", seed: int = 0, grad: bool = False):
    g = torch.Generator(device="cpu").manual_seed(seed)
    return [torch.randn(B, h, T, d, generator=g, dtype=torch.float32).to(device=device, dtype=dtype)
            .requires_grad_(grad) for _ in range(3)]


# ------------------------------------------------------------------ the GPU benchmark (SDPA backends)

@dataclass(frozen=True)
class AttnBench:
    method: str
    seq_len: int
    batch: int
    heads: int
    head_dim: int
    dtype: str
    supported: bool
    fwd_bwd_time_s: float
    peak_bytes: int
    note: str = ""


def naive_peak_bytes(B: int, h: int, T: int, d: int, elem_bytes: int) -> int:
    """Bytes naive attention's forward + backward holds at once: four B·h·T×T matrices (scores, probabilities and
    their gradients) and eight B·h·T×d ones (Q, K, V, O and their gradients). Flash/SDPA need less; naive bounds."""
    return (4 * B * h * T * T + 8 * B * h * T * d) * elem_bytes


def bench(seq_lens, batch: int = 4, heads: int = 16, head_dim: int = 64, dtype: str = "bf16") -> list[AttnBench]:
    """Forward + backward of naive attention and of SDPA forced to each backend; peak memory on CUDA."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from helpers.core import device, resources, timing
    from helpers.formulas import dtypes
    dev, _ = device.pick_device()
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[dtype]
    if dev.type == "cpu" and dt is not torch.float32:
        dt, dtype = torch.float32, "fp32"
    methods = {"naive": None, "math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
               "mem_efficient": SDPBackend.EFFICIENT_ATTENTION}
    es = dtypes.bytes_per_element(dt)
    for T in seq_lens:                           # every length checked before the first one runs
        resources.require_memory(naive_peak_bytes(batch, heads, T, head_dim, es), device=str(dev), flag="--seq",
                                 what=f"naive attention at sequence length {T} (batch {batch}, {heads} heads: "
                                      f"{batch * heads} {T}x{T} score matrices, forward + backward)")
    out = []
    for T in seq_lens:
        for name, backend in methods.items():
            q, k, v = qkv(batch, heads, T, head_dim, dt, dev, grad=True)

            def step():
                if backend is None:
                    o = naive(q, k, v)
                else:
                    with sdpa_kernel(backend):
                        o = sdpa(q, k, v)
                o.sum().backward()
            try:
                if dev.type == "cuda":
                    torch.cuda.reset_peak_memory_stats()
                t = timing.time_fn(step, device=dev, warmup=2, repeats=5)
                peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else 0
                out.append(AttnBench(name, T, batch, heads, head_dim, dtype, True, t.median_s, peak))
            except RuntimeError as e:                    # backend not available for this device/dtype
                out.append(AttnBench(name, T, batch, heads, head_dim, dtype, False, 0.0, 0,
                                     " ".join(str(e).split())[:120]))
            del q, k, v
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=cli.csv_of(cli.positive_int), default=[512, 2048])
    ap.add_argument("--batch", type=cli.positive_int, default=4)
    ap.add_argument("--heads", type=cli.positive_int, default=16)
    ap.add_argument("--head-dim", type=cli.positive_int, default=64)
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    results.emit(bench(a.seq, a.batch, a.heads, a.head_dim, a.dtype), "attention", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
