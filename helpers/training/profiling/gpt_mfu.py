"""A tiny GPT trained for a few steps, its FLOPs per token (6N + attention) and its model FLOPs utilisation (chapter 18).

FLOPs per token of training (forward + backward = 3 × forward; Kaplan et al. 2020, PaLM appendix B):

    6 N  (every weight multiplies and adds once forward, twice backward)  +  12 L T d  (QKᵀ and PV over T tokens)

with N the non-embedding parameters, L layers, T the sequence length and d the model width
(``helpers.formulas.flops.flops_per_token``). MFU (``helpers.formulas.flops.mfu``) is the model FLOPs per second
achieved divided by the peak: on a GPU the datasheet's dense peak (``helpers.core.specs``), on a CPU —
which has no datasheet peak here — the rate of a large fp32 matrix multiply measured on the spot, so the CPU figure
is "fraction of this machine's own GEMM rate", said as such.

    python -m helpers gptmfu --steps 10 --out gpt_mfu.json
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import torch

from helpers.formulas import flops
from helpers.training.models import tiny


def non_embedding_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if not n.startswith("embed."))


def gemm_peak_flops(dev, n: int = 1024, dtype=torch.float32) -> float:
    """The measured rate (FLOP/s) of an n×n×n matmul on ``dev``: the CPU's stand-in for a datasheet peak."""
    from helpers.core import timing
    a, b = torch.randn(n, n, dtype=dtype, device=dev), torch.randn(n, n, dtype=dtype, device=dev)
    t = timing.time_fn(lambda: a @ b, device=dev, warmup=2, repeats=5)
    return flops.gemm_flops(n, n, n) / t.min_s


@dataclass(frozen=True)
class MFUResult:
    device: str
    dtype: str
    params: int
    non_embedding_params: int
    tokens_per_step: int
    flops_per_token: int
    step_time_s: float
    tokens_per_s: float
    achieved_TFLOPs: float
    peak_TFLOPs: float
    peak_source: str
    mfu: float
    first_loss: float
    last_loss: float


def training_bytes(batch: int, seq_len: int, d_model: int, n_layers: int, n_heads: int, vocab: int,
                   on_gpu: bool) -> float:
    """Bytes :func:`run` needs: fp32 AdamW model states (16 B/param) plus the activations kept for backward
    (Korthikanti et al.'s per-layer count for 16-bit activations; doubled on CPU, where they are fp32)."""
    from helpers.formulas import dtypes
    from helpers.training.calc import memory

    shape = memory.ModelShape(n_layers, d_model, n_heads, vocab=vocab, seq_len=seq_len)
    act = n_layers * memory.activation_bytes_per_layer(seq_len, batch, d_model, n_heads)
    return memory.model_states(shape.n_params, precision="fp32-adam").total_bytes + \
        act * (1 if on_gpu else dtypes.bytes_per_element("fp32") / dtypes.bytes_per_element("bf16"))


def run(steps: int = 5, batch: int = 8, seq_len: int = 64, d_model: int = 256, n_layers: int = 4,
        n_heads: int = 4, vocab: int = 64, dev=None) -> MFUResult:
    """Train ``steps`` AdamW steps (the first is warm-up and not timed) and measure tokens/s and MFU."""
    from helpers.core import device, resources, specs
    if steps < 2:
        raise ValueError(f"steps={steps}: need ≥ 2 (the first step is warm-up)")
    if dev is None:
        dev, _ = device.pick_device()
    resources.require_memory(training_bytes(batch, seq_len, d_model, n_layers, n_heads, vocab, dev.type == "cuda"),
                             what=f"training a {n_layers}-layer GPT (d_model {d_model}, batch {batch} x {seq_len} "
                                  "tokens: weights, gradients, AdamW state, activations)",
                             flag="--layers/--d-model/--batch/--seq-len", device=str(dev))
    kw = dict(vocab_size=vocab, seq_len=seq_len, d_model=d_model, n_heads=n_heads, n_layers=n_layers)
    model = tiny.build("gpt", seed=0, **kw).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = (t.to(dev) for t in tiny.make_batch("gpt", batch, seed=1, **kw))
    loss_fn = tiny.loss_fn("gpt")
    on_gpu = dev.type == "cuda"
    dtype = "bf16" if on_gpu else "fp32"
    losses, times = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=on_gpu):
            loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())                     # .item() synchronises: the step is done
        times.append(time.perf_counter() - t0)
    step_s = sorted(times[1:])[len(times[1:]) // 2]
    fpt = flops.training_flops_per_token(non_embedding_params(model), n_layers, seq_len, d_model)
    tokens = batch * seq_len
    achieved = fpt * tokens / step_s
    if on_gpu:
        spec = specs.lookup(torch.cuda.get_device_name(dev))
        peak = spec.training_peak("bf16")[0] * 1e12 if spec else gemm_peak_flops(dev, 8192, torch.bfloat16)
        src = f"datasheet bf16 dense ({spec.name})" if spec else "measured bf16 GEMM 8192³ (GPU not in the table)"
    else:
        peak, src = gemm_peak_flops(dev), "measured fp32 GEMM 1024³ on this CPU"
    return MFUResult(str(dev), dtype, tiny.count_params(model), non_embedding_params(model), tokens, fpt, step_s,
                     tokens / step_s, achieved / 1e12, peak / 1e12, src,
                     flops.mfu(tokens / step_s, fpt, 1, peak / 1e12), losses[0], losses[-1])


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=cli.bounded_int(2, 10_000), default=10)
    ap.add_argument("--batch", type=cli.csv_of(cli.positive_int), default=[8])
    ap.add_argument("--seq-len", type=cli.positive_int, default=256)
    ap.add_argument("--d-model", type=cli.positive_int, default=512)
    ap.add_argument("--layers", type=cli.positive_int, default=4)
    ap.add_argument("--heads", type=cli.positive_int, default=8)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs = [run(a.steps, b, a.seq_len, a.d_model, a.layers, a.heads) for b in a.batch]
    results.emit(recs, "gpt_mfu", a)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
