"""Static versus continuous batching: simulated with a step-time model and run on a tiny causal LM (chapter 19).

Each request has a number of tokens to generate. A decode step produces one token for every sequence in the batch
and costs ``t(B) = a + b·B`` (a: reading the weights once, b: per-sequence work). **Static** batching takes B
requests and runs until the longest finishes — finished sequences idle in their slots. **Continuous** batching
(Yu et al. 2022, Orca) refills a slot as soon as its sequence finishes. :func:`simulate` uses the model;
:func:`run_real` performs the same schedules with real forward passes of a tiny causal LM (sliding-window decode: every
sequence keeps its last ``seq_len`` tokens, so a batch is always a (B, seq_len) tensor) and measures wall time.

    python -m helpers serving --requests 64 --batch 8,16 --out serving.json
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from dataclasses import dataclass

import numpy as np


def workload(n: int = 32, min_new: int = 4, max_new: int = 64, seed: int = 0) -> list[int]:
    """Tokens to generate per request (uniform; long tails are what static batching wastes)."""
    if n < 1 or not 1 <= min_new <= max_new:
        raise ValueError(f"n={n} ≥ 1 and 1 ≤ min_new={min_new} ≤ max_new={max_new} needed")
    return np.random.default_rng(seed).integers(min_new, max_new + 1, size=n).tolist()


@dataclass(frozen=True)
class BatchResult:
    scheme: str
    source: str                  # "model" or the device it ran on
    max_batch: int
    requests: int
    tokens: int
    total_s: float
    tokens_per_s: float
    p50_latency_s: float
    p99_latency_s: float
    steps: int


def _schedule(lengths: list[int], max_batch: int, continuous: bool, step_cost):
    """Run the schedule; ``step_cost(active_slots)`` performs (or models) one decode step and returns its seconds.
    All requests arrive at t = 0; a request's latency is the time its last token is produced."""
    queue = deque(enumerate(lengths))
    slots: dict[int, int] = {}                       # request -> tokens still to generate
    t, steps, done = 0.0, 0, {}
    while queue or slots:
        if continuous or not slots:
            while queue and len(slots) < max_batch:
                i, n = queue.popleft()
                slots[i] = n
        width = len(slots) if continuous else max(len(slots), 1)
        t += step_cost(width)
        steps += 1
        for i in list(slots):
            slots[i] -= 1
            if slots[i] == 0:
                done[i] = t
                del slots[i]
    return t, steps, [done[i] for i in range(len(lengths))]


def _result(scheme, source, max_batch, lengths, total, steps, lat) -> BatchResult:
    toks = int(sum(lengths))
    return BatchResult(scheme, source, max_batch, len(lengths), toks, total, toks / total,
                       float(np.percentile(lat, 50)), float(np.percentile(lat, 99)), steps)


def simulate(lengths: list[int], max_batch: int, a_s: float, b_s: float) -> list[BatchResult]:
    """Both schemes under t(B) = a + b·B. In static batching finished sequences keep computing (padding), so a
    step of a static batch costs its full width."""
    out = []
    for scheme, cont in (("static", False), ("continuous", True)):
        width = {"n": max_batch}

        def cost(active, cont=cont):
            return a_s + b_s * (active if cont else width["n"])
        total, steps, lat = _schedule(lengths, max_batch, cont, cost)
        out.append(_result(scheme, "model", max_batch, lengths, total, steps, lat))
    return out


class TinyDecoder:
    """A tiny causal LM (``serving.tinylm``) as a decoder: one greedy token per active sequence per step, sliding window."""

    def __init__(self, dev="cpu", d_model: int = 64, n_layers: int = 2, seq_len: int = 32, vocab: int = 64):
        import torch

        from helpers.serving import tinylm
        self.torch, self.dev = torch, dev
        self.model = tinylm.build(0, vocab=vocab, seq_len=seq_len, d_model=d_model, n_layers=n_layers).to(dev).eval()
        self.seq_len, self.vocab = seq_len, vocab

    def step(self, ctx):                              # ctx: (B, seq_len) token ids -> next tokens (B,)
        with self.torch.inference_mode():
            return self.model(ctx)[:, -1].argmax(-1)

    def prompt(self, i: int):
        return (self.torch.arange(self.seq_len, device=self.dev) * (1 + i % 3) + i) % self.vocab

    def fit_cost(self, widths=(1, 4, 8, 16), repeats: int = 5) -> tuple[float, float]:
        """Measure the step time at a few batch widths and fit t(B) = a + b·B (least squares)."""
        from helpers.core import timing
        ts = []
        for w in widths:
            ctx = self.torch.stack([self.prompt(i) for i in range(w)])
            ts.append(timing.time_fn(lambda: self.step(ctx), device=self.dev, warmup=2, repeats=repeats).median_s)
        b, a = np.polyfit(widths, ts, 1)
        return max(float(a), 0.0), max(float(b), 0.0)


def run_real(lengths: list[int], max_batch: int, dec: TinyDecoder) -> list[BatchResult]:
    """Both schemes with real decode steps; static batches are padded (finished rows keep decoding)."""
    torch = dec.torch
    out = []
    for scheme, cont in (("static", False), ("continuous", True)):
        ctx: dict[int, object] = {}

        def cost(width, cont=cont):
            # the scheduler's active set is read from its slots through `ctx` kept in step with them
            rows = list(ctx.values())
            if not cont:
                rows = rows + [rows[0]] * (max_batch - len(rows)) if rows else rows
            t0 = time.perf_counter()
            nxt = dec.step(torch.stack(rows))
            if dec.dev != "cpu" and str(dec.dev).startswith("cuda"):
                torch.cuda.synchronize()
            for (i, c), tok in zip(list(ctx.items()), nxt[:len(ctx)]):
                ctx[i] = torch.cat([c[1:], tok.view(1)])
            return time.perf_counter() - t0
        total, steps, lat = _schedule_tracking(lengths, max_batch, cont, cost, ctx, dec)
        out.append(_result(scheme, str(dec.dev), max_batch, lengths, total, steps, lat))
    return out


def _schedule_tracking(lengths, max_batch, continuous, cost, ctx, dec):
    """:func:`_schedule` that also keeps ``ctx`` (request -> its token window) in step with the slots."""
    queue = deque(enumerate(lengths))
    slots: dict[int, int] = {}
    t, steps, done = 0.0, 0, {}
    while queue or slots:
        if continuous or not slots:
            while queue and len(slots) < max_batch:
                i, n = queue.popleft()
                slots[i] = n
                ctx[i] = dec.prompt(i)
        t += cost(len(slots))
        steps += 1
        for i in list(slots):
            slots[i] -= 1
            if slots[i] == 0:
                done[i] = t
                del slots[i]
                del ctx[i]
    return t, steps, [done[i] for i in range(len(lengths))]


# Python objects per request kept by the schedulers (its length, slot, finish time, latency: ints and floats in
# lists and dicts): an estimate measured with tracemalloc on CPython 3.11, rounded up
BYTES_PER_REQUEST = 256
MAX_TOKENS = 10**7        # the real runs decode every token twice per batch width: beyond this a run takes hours


def check_size(requests: int, max_batch: int, max_new: int, d_model: int, device: str = "cpu",
               seq_len: int = 32, n_layers: int = 4) -> None:
    """Refuse sizes the machine cannot hold (request bookkeeping, a batch's activations) or that would decode more
    than :data:`MAX_TOKENS`, before the first step."""
    from helpers.core import resources
    from helpers.formulas import dtypes

    tokens = requests * (4 + max_new) / 2                 # workload(): uniform in [4, max_new]
    if tokens > MAX_TOKENS:
        raise resources.NotEnough(f"{requests} requests of up to {max_new} new tokens decode about {tokens:.3g} "
                                  f"tokens per scheme and batch width, over the limit of {MAX_TOKENS:.0e}: lower "
                                  "--requests or --max-new")
    resources.require_memory(requests * BYTES_PER_REQUEST, what=f"the schedule of {requests} requests",
                             flag="--requests")
    act = 4 * n_layers * max_batch * seq_len * d_model * dtypes.bytes_per_element("fp32")   # ~4 tensors a layer
    resources.require_memory(act, what=f"a decode step of batch {max_batch} (d_model {d_model})",
                             flag="--batch/--d-model", device=device)


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, device, results
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=cli.positive_int, default=64)
    ap.add_argument("--batch", type=cli.csv_of(cli.positive_int), default=[8, 16, 32])
    ap.add_argument("--max-new", type=cli.positive_int, default=64)
    ap.add_argument("--d-model", type=cli.positive_int, default=256)
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    dev, _ = device.pick_device()
    check_size(a.requests, max(a.batch), a.max_new, a.d_model, str(dev))
    dec = TinyDecoder(dev, d_model=a.d_model, n_layers=4)
    a_s, b_s = dec.fit_cost((1, 8, 16, 32))
    lengths = workload(a.requests, 4, a.max_new)
    recs = []
    for B in a.batch:
        recs += run_real(lengths, B, dec) + simulate(lengths, B, a_s, b_s)
    results.emit(recs, "serving_batching", a, step_cost_a_s=a_s, step_cost_b_s=b_s)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
