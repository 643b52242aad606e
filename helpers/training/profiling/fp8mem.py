"""What FP8 saves in memory, and what it does not: weights, saved activations, model states (chapter 09).

Three measurements and one formula, all on torch's own fp8 dtypes (``torch.float8_e4m3fn``), so they run on a CPU:

* **weights** — one tensor stored in fp32, bf16, or fp8 E4M3 with one fp32 *per-tensor scale* (scale = 448 / amax,
  the Transformer Engine recipe); bytes are read from each tensor's storage (``untyped_storage().nbytes()``), the
  scale included, with the round-trip error of each format;
* **activations** — a linear layer that keeps its *input* for backward in fp8 (plus its scale) instead of bf16,
  written as an ``autograd.Function``; the bytes autograd really saves are counted with
  ``torch.autograd.graph.saved_tensors_hooks`` (as chapter 07's sequence-parallel lab does), and the weight
  gradient built from the fp8 copy is compared with the exact one;
* **model states** — ZeRO's 16Ψ (``helpers.training.calc.memory``) extended by fp8 options. FP8 shrinks the *compute
  copy* of the weights only: Transformer Engine keeps master weights and both Adam moments in fp32, and by default
  holds an fp8 copy *on top of* the 16-bit weights. Only with fp8 primary weights (TE's ``fp8_model_init``, where
  "the high precision copies of weights are already present in the optimizer") does the weight copy shrink from
  2 to 1 byte. Bytes per parameter = weights + fp8 copy + gradients + master + moments.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from helpers.formulas import dtypes
from helpers.training.calc import memory

E4M3 = torch.float8_e4m3fn
TE_FP8_MODEL_INIT = "https://docs.nvidia.com/deeplearning/transformer-engine/user-guide/api/pytorch.html"


# ------------------------------------------------------------------ weights: per-tensor scaling and storage bytes

def quantize(x: torch.Tensor, dtype: torch.dtype = E4M3) -> tuple[torch.Tensor, torch.Tensor]:
    """Cast ``x`` to fp8 with one per-tensor scale: amax lands on the format's maximum. Returns (fp8, fp32 scale)."""
    if not x.is_floating_point():
        raise ValueError(f"quantize needs a floating-point tensor, got {x.dtype}")
    amax = x.detach().abs().max().float().clamp(min=1e-12)
    scale = torch.finfo(dtype).max / amax                       # a 0-d fp32 tensor: 4 bytes of storage
    return (x.float() * scale).to(dtype), scale


def dequantize(q: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return (q.float() / scale).to(dtype)


def storage_bytes(*tensors: torch.Tensor) -> int:
    """Bytes of the distinct storages behind ``tensors`` (a storage shared by two tensors counts once)."""
    seen = {(t.untyped_storage().data_ptr(), t.untyped_storage().nbytes()) for t in tensors}
    return sum(n for _, n in seen)


@dataclass(frozen=True)
class WeightStorage:
    format: str
    n_params: int
    storage_bytes: int          # measured from the tensors' storage, scale included
    bytes_per_param: float
    rel_error: float            # ‖W − dequant(stored)‖ / ‖W‖ against the fp32 original


def weight_storage(shape=(1024, 1024), seed: int = 0) -> list[WeightStorage]:
    """One weight matrix (N(0, 0.02²), as GPT initialises) stored three ways."""
    if len(shape) != 2 or min(shape) < 1:
        raise ValueError(f"shape={shape}: give a 2-d shape with positive sizes, e.g. (1024, 1024)")
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(shape, generator=g) * 0.02
    q, s = quantize(w)
    stored = {"fp32": ((w,), w), "bf16": ((w.bfloat16(),), None), "fp8-e4m3 + scale": ((q, s), dequantize(q, s))}
    rows = []
    for fmt, (ts, back) in stored.items():
        back = ts[0].float() if back is None else back
        n = storage_bytes(*ts)
        rows.append(WeightStorage(fmt, w.numel(), n, n / w.numel(), float((w - back).norm() / w.norm())))
    return rows


# ------------------------------------------------------------------ activations: a linear that saves its input in fp8

class Fp8InputLinear(torch.autograd.Function):
    """y = x Wᵀ computed in x's dtype, but x is *kept for backward* as fp8 + a scale; dW uses the dequantized copy.
    (On a GPU, Transformer Engine does the same and also runs the GEMMs in fp8; here only the storage changes.)"""

    @staticmethod
    def forward(ctx, x, weight):
        xq, sx = quantize(x)
        ctx.save_for_backward(xq, sx, weight)
        ctx.x_dtype = x.dtype
        return F.linear(x, weight)

    @staticmethod
    def backward(ctx, grad):
        xq, sx, weight = ctx.saved_tensors
        x_hat = dequantize(xq, sx, ctx.x_dtype)
        grad_x = grad @ weight
        grad_w = grad.reshape(-1, grad.shape[-1]).t() @ x_hat.reshape(-1, x_hat.shape[-1])
        return grad_x, grad_w


class SavedMeter:
    """Bytes autograd saves for backward, a storage counted once and parameters never."""

    def __init__(self, params=()):
        self.bytes = 0
        self._seen = {(p.untyped_storage().data_ptr(), p.untyped_storage().nbytes()) for p in params}

    def _pack(self, t: torch.Tensor):
        key = (t.untyped_storage().data_ptr(), t.untyped_storage().nbytes())
        if key not in self._seen:
            self._seen.add(key)
            self.bytes += key[1]
        return t

    @contextmanager
    def __call__(self):
        with torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t):
            yield self


@dataclass(frozen=True)
class SavedInput:
    variant: str                # "bf16 input saved" or "fp8 input saved"
    tokens: int
    d_in: int
    saved_bytes: int            # measured through saved_tensors_hooks
    bytes_per_element: float    # saved_bytes / (tokens · d_in)
    grad_w_rel_error: float     # ‖dW − dW_fp32‖ / ‖dW_fp32‖


def saved_input(tokens: int = 512, d_in: int = 256, d_out: int = 256, seed: int = 0) -> list[SavedInput]:
    """One bf16 linear layer, forward + backward, saving its input in bf16 (F.linear) or in fp8 (Fp8InputLinear)."""
    if min(tokens, d_in, d_out) < 1:
        raise ValueError(f"tokens={tokens}, d_in={d_in}, d_out={d_out}: all must be >= 1")
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(tokens, d_in, generator=g)
    w = torch.randn(d_out, d_in, generator=g) * d_in ** -0.5
    dy = torch.randn(tokens, d_out, generator=g)
    exact = dy.t() @ x                                           # dW in fp32: the reference
    out = []
    for variant, fn in (("bf16 input saved", F.linear), ("fp8 input saved", Fp8InputLinear.apply)):
        wp = w.bfloat16().requires_grad_()
        xb = x.bfloat16().requires_grad_()                       # a leaf: autograd saves it, the meter counts it
        meter = SavedMeter([wp])
        with meter():
            y = fn(xb, wp)
        y.backward(dy.bfloat16())
        err = float((wp.grad.float() - exact).norm() / exact.norm())
        out.append(SavedInput(variant, tokens, d_in, meter.bytes, meter.bytes / (tokens * d_in), err))
    return out


# ------------------------------------------------------------------ model states: ZeRO's formula with an fp8 option

@dataclass(frozen=True)
class Recipe:
    weights: str                # dtype of the weights the model holds: "bf16" or "fp8" (primary weights)
    fp8_copy: bool              # an fp8 copy cached beside 16-bit weights (TE's default under fp8_autocast)
    grads: str                  # "bf16", or "fp32" when gradients accumulate in fp32 (Megatron's main_grad)
    master: str = "fp32"        # the optimiser's master weights
    moments: str = "fp32"       # Adam's momentum and variance, each

    def bytes_per_param(self) -> dict[str, float]:
        size = dtypes.bytes_per_element            # fp32 4, bf16 2, fp8 1 (ValueError naming the known ones)
        b = {"weights": size(self.weights) + (size("fp8") if self.fp8_copy else 0), "grads": size(self.grads),
             "optimizer": size(self.master) + 2 * size(self.moments)}
        return {**b, "total": sum(b.values())}


RECIPES = {
    "bf16 mixed (ZeRO's 16)": Recipe("bf16", False, "bf16"),
    "bf16 mixed, fp32 grads": Recipe("bf16", False, "fp32"),
    "TE fp8_autocast": Recipe("bf16", True, "bf16"),
    "TE fp8_autocast, fp32 grads": Recipe("bf16", True, "fp32"),
    "TE fp8 primary weights": Recipe("fp8", False, "bf16"),
    "TE fp8 primary weights, fp32 grads": Recipe("fp8", False, "fp32"),
}


def model_states(n_params: float, recipe: str | Recipe, zero_stage: int = 0, dp: int = 1) -> memory.ModelStates:
    """``memory.model_states`` with an fp8 option: the same ZeRO sharding (stage 1 shards the optimizer state,
    2 also gradients, 3 also weights — fp8 copy included) applied to a ``Recipe``'s bytes per parameter."""
    r = RECIPES.get(recipe) if isinstance(recipe, str) else recipe
    if r is None:
        raise ValueError(f"recipe={recipe!r}: use one of {sorted(RECIPES)} or pass a Recipe")
    if zero_stage not in (0, 1, 2, 3) or dp < 1 or n_params <= 0:
        raise ValueError(f"zero_stage={zero_stage}, dp={dp}, n_params={n_params}: need a stage 0-3, dp >= 1, "
                         "a positive parameter count")
    b = r.bytes_per_param()
    return memory.ModelStates(n_params, zero_stage, dp, str(recipe if isinstance(recipe, str) else r),
                              b["weights"] * n_params / (dp if zero_stage >= 3 else 1),
                              b["grads"] * n_params / (dp if zero_stage >= 2 else 1),
                              b["optimizer"] * n_params / (dp if zero_stage >= 1 else 1))


def recipe_table(n_params: float = 70e9, zero_stage: int = 0, dp: int = 1) -> list[dict]:
    """One row per recipe: bytes per parameter by component and the model states of ``n_params`` in GB."""
    rows = []
    for name, r in RECIPES.items():
        st = model_states(n_params, name, zero_stage, dp)
        rows.append({"recipe": name, **{f"{k}_B_per_param": v for k, v in r.bytes_per_param().items()},
                     "model_states_GB": st.total_bytes / 1e9})
    return rows
