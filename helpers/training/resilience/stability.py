"""Loss spikes provoked and cured, gradient-norm monitoring, and the numerics underneath (chapter 26).

:func:`train` runs a tiny GPT with one recipe (:class:`Recipe`: learning rate, warm-up, clipping, z-loss, precision
and loss scaling) and returns the loss and gradient-norm curves; :func:`spikes` counts loss spikes; :class:`GradMonitor`
flags a gradient norm far above its running average — it usually rises a step or more before the loss does.
:func:`overflow_underflow`, :func:`softmax_naive_vs_stable` and :func:`accumulation_error` measure fp16/bf16 limits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from helpers.training.models import tiny

PRECISIONS = ("fp32", "bf16", "fp16", "fp16-scaled")


@dataclass(frozen=True)
class Recipe:
    name: str
    lr: float = 0.1
    warmup_steps: int = 0
    clip_norm: float | None = None
    z_loss: float = 0.0
    precision: str = "fp32"
    loss_shrink: float = 1.0     # multiplies the loss: 2**-20 puts gradients where fp16 underflows (see chapter)

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision={self.precision!r}: use one of {PRECISIONS}")
        if self.lr <= 0 or self.warmup_steps < 0:
            raise ValueError(f"lr={self.lr} must be > 0 and warmup_steps={self.warmup_steps} ≥ 0")


class GradMonitor:
    """Flags step t when ‖g_t‖ > ``factor`` × the exponential moving average of earlier norms (after ``min_steps``)."""

    def __init__(self, factor: float = 3.0, beta: float = 0.9, min_steps: int = 5):
        self.factor, self.beta, self.min_steps = factor, beta, min_steps
        self.ema, self.n, self.flags = None, 0, []

    def update(self, norm: float) -> bool:
        flag = self.n >= self.min_steps and self.ema is not None and norm > self.factor * self.ema
        if flag:
            self.flags.append(self.n)
        if math.isfinite(norm):
            self.ema = norm if self.ema is None else self.beta * self.ema + (1 - self.beta) * norm
        self.n += 1
        return flag


@dataclass(frozen=True)
class TrainResult:
    recipe: str
    losses: tuple = field(repr=False)
    grad_norms: tuple = field(repr=False)
    final_loss: float
    max_loss_after_10: float
    spikes: int
    skipped_steps: int
    zero_grad_frac: float         # fraction of gradient entries exactly 0 at the last step (underflow shows here)
    monitor_flags: tuple


def spikes(losses, factor: float = 1.5, start: int = 10) -> int:
    """Steps (from ``start``) whose loss exceeds ``factor`` × the best loss so far (or is not finite)."""
    best, n = float("inf"), 0
    for i, l in enumerate(losses):
        if i >= start and (not math.isfinite(l) or l > factor * best):
            n += 1
        if math.isfinite(l):
            best = min(best, l)
    return n


def train(recipe: Recipe, steps: int = 60, seed: int = 0, d_model: int = 64) -> TrainResult:
    torch.manual_seed(seed)
    model = tiny.build("gpt", seed=seed, d_model=d_model, n_layers=2)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=(0.9, 0.95))
    half = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp16-scaled": torch.float16}.get(recipe.precision)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24) if recipe.precision == "fp16-scaled" else None
    mon = GradMonitor()
    losses, norms, skipped, zero_frac = [], [], 0, 0.0
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = recipe.lr * min(1.0, (step + 1) / recipe.warmup_steps) if recipe.warmup_steps else recipe.lr
        x, y = tiny.make_batch("gpt", 16, seed=step)
        with torch.autocast("cpu", dtype=half or torch.float32, enabled=half is not None):
            logits = model(x)
            loss = tiny.loss_fn("gpt")(logits, y)
            if recipe.z_loss:                       # PaLM's z-loss keeps log Z = logsumexp(logits) near 0
                loss = loss + recipe.z_loss * torch.logsumexp(logits.float(), -1).square().mean()
        opt.zero_grad(set_to_none=True)
        scaled = loss * recipe.loss_shrink
        (scaler.scale(scaled) if scaler else scaled).backward()
        if scaler:
            scaler.unscale_(opt)
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
        zero_frac = sum((g == 0).sum().item() for g in grads) / sum(g.numel() for g in grads)
        if recipe.clip_norm:
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_norm)
        if scaler:
            before = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < before          # an inf/nan step is skipped and the scale halved
        else:
            opt.step()
        losses.append(loss.item())
        norms.append(norm / recipe.loss_shrink)
        mon.update(norms[-1])
    return TrainResult(recipe.name, tuple(losses), tuple(norms), losses[-1], max(losses[min(10, steps - 1):]),
                       spikes(losses), skipped, zero_frac, tuple(mon.flags))


# ------------------------------------------------------------------ numerics

def overflow_underflow() -> list[dict]:
    """What fp32, bf16 and fp16 make of a large value, a tiny value and a product of two moderate ones."""
    rows = []
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)):
        fi = torch.finfo(dt)
        a = torch.tensor(300.0, dtype=dt)
        rows.append({"dtype": name, "max": fi.max, "smallest_normal": fi.tiny, "eps": fi.eps,
                     "70000 →": torch.tensor(70000.0, dtype=dt).item(), "1e-8 →": torch.tensor(1e-8, dtype=dt).item(),
                     "300 × 300 →": (a * a).item()})
    return rows


def softmax_naive_vs_stable(x: list[float], dtype=torch.float16) -> dict:
    t = torch.tensor(x, dtype=dtype)
    naive = torch.exp(t) / torch.exp(t).sum()
    stable = torch.exp(t - t.max()) / torch.exp(t - t.max()).sum()
    return {"dtype": str(dtype).replace("torch.", ""), "naive": naive.tolist(), "stable": stable.tolist(),
            "reference": torch.softmax(torch.tensor(x, dtype=torch.float64), 0).tolist()}


def accumulation_error(n: int = 4096, seed: int = 0) -> list[dict]:
    """Sum n uniform [0, 1) values one by one with the accumulator in each dtype; error against float64."""
    x = torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    ref = x.sum().item()
    rows = []
    for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)):
        acc, xs = torch.zeros((), dtype=dt), x.to(dt)
        for v in xs:
            acc = acc + v
        rows.append({"accumulator": name, "n": n, "sum": acc.item(), "reference": ref,
                     "rel_error": abs(acc.item() - ref) / ref})
    xs = x.to(torch.bfloat16)
    rows.append({"accumulator": "bf16 inputs, fp32 accumulator", "n": n, "sum": xs.float().sum().item(),
                 "reference": ref, "rel_error": abs(xs.float().sum().item() - ref) / ref})
    return rows
