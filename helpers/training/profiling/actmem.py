"""Activation memory of a transformer block, measured, with and without checkpointing; and what mixed
precision does to memory and speed (chapter 09).

Two ways to measure what a block keeps for its backward pass:

* on a GPU, the caching allocator's books: ``torch.cuda.memory_allocated()`` after the forward minus before
  (the block's output stays alive — it is the next block's stored input — and its own input was already
  allocated, so the difference is exactly one layer's share), and ``max_memory_allocated()`` for the peak;
* on a CPU, where no allocator keeps books, ``torch.autograd.graph.saved_tensors_hooks`` sees every tensor
  autograd saves; we add up the distinct storages (parameters and buffers excluded).

Korthikanti et al. (arXiv 2205.05198) predict sbh(34 + 5as/h) bytes per layer with 16-bit activations and
1-byte dropout masks, and 2sbh with full recomputation (``torch.utils.checkpoint``), which keeps only the
block's input. Note: PyTorch's CPU dropout keeps its mask in the activation dtype (2 bytes), its CUDA kernel
as 1-byte bools, so the CPU count exceeds the formula by (as²b + 2sbh) bytes.

    python -m helpers actmem block --json            # GPU: the H200 reference; CPU: the saved-tensor count
    python -m helpers actmem precision --json        # fp32 / bf16 / fp16 / fp8 memory and step time
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import torch

from helpers.core import cli, results, timing
from helpers.training.calc import memory
from helpers.training.models import tiny
from helpers.formulas import flops

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass(frozen=True)
class ActivationMeasurement:
    seq_len: int
    micro_batch: int
    hidden: int
    n_heads: int
    dtype: str
    checkpoint: bool
    method: str                 # "cuda-allocated" or "saved-tensors"
    device: str
    measured_bytes: int         # stored for backward, one layer
    formula_bytes: float        # Korthikanti: sbh(34 + 5as/h), or 2sbh with full recomputation
    peak_bytes: int | None      # GPU: transient peak during the forward above the starting point

    @property
    def ratio(self) -> float:
        return self.measured_bytes / self.formula_bytes


def block(hidden: int, n_heads: int, seq_len: int, dtype=torch.bfloat16, device="cpu", dropout: float = 0.1,
          seed: int = 0) -> torch.nn.Module:
    """A GPT block (``tiny.Block``) matching the formula's assumptions: dropout on, 16-bit weights."""
    cfg = tiny.GPTConfig(vocab_size=2, seq_len=seq_len, d_model=hidden, n_heads=n_heads, dropout=dropout)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        blk = tiny.Block(cfg)
    return blk.to(device=device, dtype=dtype).train()


def saved_bytes(fn, x: torch.Tensor, exclude: torch.nn.Module | None = None) -> tuple[torch.Tensor, int]:
    """Run ``fn(x)``; return its output and the bytes of distinct storages autograd saved for backward."""
    skip = set()
    if exclude is not None:
        skip = {t.untyped_storage().data_ptr() for t in [*exclude.parameters(), *exclude.buffers()]}
    seen: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in skip:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(x)
    return y, sum(seen.values())


def measure_block(seq_len: int = 64, micro_batch: int = 2, hidden: int = 64, n_heads: int = 4, dtype: str = "bf16",
                  checkpoint: bool = False, device=None) -> ActivationMeasurement:
    """One forward of one block; the bytes it keeps for backward, against Korthikanti's formula."""
    from torch.utils.checkpoint import checkpoint as ckpt

    if dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r}: use one of {sorted(DTYPES)}")
    dev = torch.device(device) if device is not None else torch.device("cpu")
    blk = block(hidden, n_heads, seq_len, DTYPES[dtype], dev)
    g = torch.Generator(device=dev).manual_seed(1)
    x = torch.randn(micro_batch, seq_len, hidden, device=dev, dtype=DTYPES[dtype], generator=g).requires_grad_()
    fn = (lambda t: ckpt(blk, t, use_reentrant=False)) if checkpoint else blk
    formula = memory.activation_bytes_per_layer(seq_len, micro_batch, hidden, n_heads,
                                                recompute="full" if checkpoint else "none")
    formula *= torch.finfo(DTYPES[dtype]).bits / 16        # the formula assumes 2-byte activations
    if dev.type == "cuda":
        fn(x).float().sum().backward()         # warm-up: cuBLAS workspaces are allocated once, not counted
        x.grad = None
        blk.zero_grad(set_to_none=True)
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        before = torch.cuda.memory_allocated(dev)
        y = fn(x)
        torch.cuda.synchronize(dev)
        measured, peak = torch.cuda.memory_allocated(dev) - before, torch.cuda.max_memory_allocated(dev) - before
        method = "cuda-allocated"
    else:
        y, measured = saved_bytes(fn, x, exclude=blk)
        peak, method = None, "saved-tensors"
    y.float().sum().backward()                 # the graph is sound: backward runs (and frees it)
    return ActivationMeasurement(seq_len, micro_batch, hidden, n_heads, dtype, checkpoint, method, str(dev),
                                 int(measured), formula, None if peak is None else int(peak))


# ------------------------------------------------------------------ mixed precision: memory and speed

@dataclass(frozen=True)
class PrecisionResult:
    precision: str              # fp32, bf16-autocast, fp16-autocast, bf16, fp8 (a GEMM only)
    device: str
    supported: bool
    activation_bytes: int | None    # stored for backward by a stack of blocks (fp8: not measured)
    step_time_s: float | None       # median forward+backward (fp8: one GEMM)
    weight_bytes_per_param: int
    note: str = ""


def _fp8_gemm(n: int, dev) -> tuple[bool, float | None, str]:
    """Time an n³ fp8 (e4m3) GEMM with ``torch._scaled_mm`` next to a bf16 one; needs SM ≥ 8.9 (Ada/Hopper)."""
    if dev.type != "cuda":
        return False, None, "skipped: fp8 GEMMs need an NVIDIA GPU with SM >= 8.9 (this run has no GPU)"
    if torch.cuda.get_device_capability(dev) < (8, 9):
        return False, None, f"skipped: SM {torch.cuda.get_device_capability(dev)} has no fp8 tensor cores"
    a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()      # column-major, as cuBLASLt wants
    one = torch.ones((), device=dev)
    t8 = timing.time_fn(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                        device=dev, warmup=3, repeats=10)
    ab, bb = a.to(torch.bfloat16), b.to(torch.bfloat16)
    t16 = timing.time_fn(lambda: ab @ bb, device=dev, warmup=3, repeats=10)
    return True, t8.median_s, (f"{n}³ GEMM: fp8 {flops.gemm_flops(n, n, n) / t8.median_s / 1e12:.0f} TFLOP/s vs "
                               f"bf16 {flops.gemm_flops(n, n, n) / t16.median_s / 1e12:.0f} TFLOP/s")


def precision_compare(n_layers: int = 2, seq_len: int = 64, micro_batch: int = 4, hidden: int = 64,
                      n_heads: int = 4, device=None, repeats: int = 5, gemm_n: int = 8192) -> list[PrecisionResult]:
    """The same blocks in fp32, under bf16/fp16 autocast (fp32 weights), and cast to bf16 outright: stored
    activations and forward+backward time; then an fp8 GEMM where the GPU has fp8 tensor cores."""
    import copy

    dev = torch.device(device) if device is not None else torch.device("cpu")
    stack = torch.nn.Sequential(*[block(hidden, n_heads, seq_len, torch.float32, dev, seed=i)
                                  for i in range(n_layers)])
    x = torch.randn(micro_batch, seq_len, hidden, device=dev,
                    generator=torch.Generator(device=dev).manual_seed(0))
    runs = [("fp32", stack, None, 4, "fp32 weights and activations"),
            ("bf16-autocast", stack, torch.bfloat16, 4, "fp32 weights; autocast casts matmul inputs to bf16"),
            ("fp16-autocast", stack, torch.float16, 4, "fp32 weights; autocast casts matmul inputs to fp16"),
            ("bf16", copy.deepcopy(stack).to(torch.bfloat16), None, 2, "weights and activations in bf16")]
    out = []
    for name, model, amp, wbytes, note in runs:
        if amp is not None and not torch.amp.is_autocast_available(dev.type):
            out.append(PrecisionResult(name, str(dev), False, None, None, wbytes, f"skipped: no {dev.type} autocast"))
            continue
        inp = x.to(next(model.parameters()).dtype)

        def step(model=model, amp=amp, inp=inp):
            with torch.autocast(dev.type, dtype=amp or torch.float32, enabled=amp is not None):
                y, nbytes = saved_bytes(model, inp, exclude=model)
            y.float().sum().backward()
            return nbytes

        nbytes = step()
        t = timing.time_fn(step, device=dev if dev.type == "cuda" else None, warmup=1, repeats=repeats)
        out.append(PrecisionResult(name, str(dev), True, nbytes, t.median_s, wbytes, note))
    ok, t8, note = _fp8_gemm(gemm_n, dev)
    out.append(PrecisionResult("fp8", str(dev), ok, None, t8, 1, note))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers actmem", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("block", help="activation bytes of one block vs the formula, with/without checkpointing")
    b.add_argument("--seq", type=cli.csv_of(cli.bounded_int(1, 1_000_000)), default=None,
                   help="comma-separated sequence lengths (default: 512,1024,2048 "
                                               "on GPU, 32,64,128 on CPU)")
    b.add_argument("--batch", type=cli.bounded_int(1, 4096), default=None)
    b.add_argument("--hidden", type=cli.bounded_int(1, 65536), default=None)
    b.add_argument("--heads", type=cli.bounded_int(1, 1024), default=None)
    results.add_output_args(b)
    p = sub.add_parser("precision", help="fp32 / bf16 / fp16 / fp8 memory and speed")
    results.add_output_args(p)
    a = ap.parse_args(argv)
    from helpers.core.device import pick_device

    dev, _ = pick_device()
    gpu = dev.type == "cuda"
    if a.cmd == "precision":
        kw = dict(n_layers=4, seq_len=2048, micro_batch=4, hidden=2048, n_heads=16) if gpu else {}
        results.emit(precision_compare(device=dev, **kw), "precision", a)
        return 0
    seqs = a.seq or ([512, 1024, 2048] if gpu else [32, 64, 128])
    recs = [measure_block(s, a.batch or (4 if gpu else 2), a.hidden or (4096 if gpu else 64),
                          a.heads or (32 if gpu else 4), "bf16", ck, dev) for s in seqs for ck in (False, True)]
    results.emit([{**results.to_dict(r), "ratio": r.ratio} for r in recs], "activation-memory", a,
                 columns=["seq_len", "checkpoint", "method", "measured_bytes", "formula_bytes", "ratio"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
