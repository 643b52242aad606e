"""Loss spikes provoked and cured, gradient-norm monitoring, and the numerics underneath (chapter 26).

:func:`train` runs a tiny GPT with one recipe (:class:`Recipe`: learning rate, warm-up, clipping, z-loss, qk-layernorm,
precision and loss scaling) and returns the loss, gradient-norm, attention-logit and log Z curves; :func:`spike_events`
finds loss spikes that recover and tells them from divergence; :class:`GradMonitor` flags a gradient norm far above
its running average — it often rises a step or more before the loss does.
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
    qk_norm: bool = False        # LayerNorm on queries and keys before q·kᵀ (qk-layernorm)

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


class Attention(tiny.CausalSelfAttention):
    """The tiny GPT's attention, optionally with qk-layernorm, recording its largest attention logit.

    qk-layernorm (Dehghani et al. 2023, arXiv 2302.05442; Wortsman et al. 2023, arXiv 2309.14322 §3.1) normalises
    each head's queries and keys before q·kᵀ, so the attention logits cannot grow with the weights."""

    def __init__(self, cfg: tiny.GPTConfig, qk_norm: bool):
        super().__init__(cfg)
        hs = cfg.d_model // cfg.n_heads
        self.q_ln = torch.nn.LayerNorm(hs) if qk_norm else torch.nn.Identity()
        self.k_ln = torch.nn.LayerNorm(hs) if qk_norm else torch.nn.Identity()
        self.max_logit = torch.zeros(())

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_heads
        q, k, v = (t.view(B, T, self.n_heads, hs).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
        q, k = self.q_ln(q), self.k_ln(k)                           # (B, nh, T, hs); identity without qk_norm
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))     # (B, nh, T, T)
        future = self.future[:T, :T]
        self.max_logit = att.detach().masked_fill(future, 0).abs().max()
        att = torch.softmax(att.masked_fill(future, float("-inf")), dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(B, T, C))


def build_model(recipe: Recipe, seed: int, d_model: int) -> torch.nn.Module:
    """The 2-layer tiny GPT with :class:`Attention` swapped in (same initial weights with or without qk_norm)."""
    model = tiny.build("gpt", seed=seed, d_model=d_model, n_layers=2)
    for blk in model.blocks:
        attn = Attention(model.cfg, recipe.qk_norm)
        attn.load_state_dict(blk.attn.state_dict(), strict=False)     # q_ln/k_ln start as the identity map
        blk.attn = attn
    return model


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
    spike_steps: tuple = ()       # first step of each spike (see :func:`spike_events`)
    diverged: bool = False        # the loss ended far above its best and stayed there: divergence, not a spike
    attn_logits: tuple = field(default=(), repr=False)   # per step: largest |q·k|/√d over both layers
    log_z: tuple = field(default=(), repr=False)         # per step: mean log Z = logsumexp(output logits)
    max_attn_logit: float = 0.0
    max_abs_log_z: float = 0.0


def _median(xs) -> float:
    xs = sorted(x for x in xs if math.isfinite(x))
    return xs[len(xs) // 2] if xs else float("inf")


def spike_events(losses, factor: float = 1.5, min_rise: float = 0.3, window: int = 20,
                 start: int = 10) -> tuple[list[int], bool]:
    """Spikes in a loss curve, told apart from divergence: returns (first step of each spike, diverged).

    A spike starts at a step (from ``start``) whose loss is not finite or exceeds the median of the previous ``window``
    losses by ``factor`` × and by ``min_rise`` nats (a relative jump, and more than noise near a low loss); it lasts while the loss stays above that threshold and must be
    over within ``window`` steps (the loss came back). Divergence is the loss not coming back: an excursion that
    lasts ``window`` steps or more, or a median of the last ``window`` losses above the first loss (the untrained
    model's: the run has undone all it learned). A diverged run reports no spikes."""
    events, i, n = [], start, len(losses)
    diverged = n > 0 and not _median(losses[-window:]) <= losses[0]
    while i < n:
        base = _median(losses[max(0, i - window):i])
        limit = max(factor * base, base + min_rise)
        if math.isfinite(losses[i]) and losses[i] <= limit:
            i += 1
            continue
        j = i
        while j < n and not (math.isfinite(losses[j]) and losses[j] <= limit):
            j += 1
        if j - i >= window:
            return [], True
        events.append(i)
        i = j
    return ([], True) if diverged else (events, False)


def spikes(losses, **kw) -> int:
    """How many spikes :func:`spike_events` finds (divergence is not counted)."""
    return len(spike_events(losses, **kw)[0])


def train(recipe: Recipe, steps: int = 60, seed: int = 0, d_model: int = 64) -> TrainResult:
    torch.manual_seed(seed)
    model = build_model(recipe, seed, d_model)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, betas=(0.9, 0.95))
    half = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp16-scaled": torch.float16}.get(recipe.precision)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 24) if recipe.precision == "fp16-scaled" else None
    mon = GradMonitor()
    losses, norms, skipped, zero_frac, attn, log_z = [], [], 0, 0.0, [], []
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = recipe.lr * min(1.0, (step + 1) / recipe.warmup_steps) if recipe.warmup_steps else recipe.lr
        x, y = tiny.make_batch("gpt", 16, seed=step)
        with torch.autocast("cpu", dtype=half or torch.float32, enabled=half is not None):
            logits = model(x)
            ce = tiny.loss_fn("gpt")(logits, y)                 # what the curves show: cross-entropy alone
            loss = ce
            lz = torch.logsumexp(logits.float(), -1)            # log Z per token: (B, T)
            if recipe.z_loss:                       # PaLM's z-loss keeps log Z = logsumexp(logits) near 0
                loss = loss + recipe.z_loss * lz.square().mean()
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
        losses.append(ce.item())
        norms.append(norm / recipe.loss_shrink)
        mon.update(norms[-1])
        attn.append(max(blk.attn.max_logit.item() for blk in model.blocks))
        log_z.append(lz.detach().mean().item())
    events, diverged = spike_events(losses)
    return TrainResult(recipe.name, tuple(losses), tuple(norms), losses[-1], max(losses[min(10, steps - 1):]),
                       len(events), skipped, zero_frac, tuple(mon.flags), tuple(events), diverged,
                       tuple(attn), tuple(log_z), max(attn), max(abs(z) for z in log_z))


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
