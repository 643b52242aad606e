"""FLOPs and bytes of the standard layers, FLOPs of transformer training, and MFU with one definition
(chapters 18 and 28; used in 01, 07, 21, 29).

* GEMM C = A·B with A m×k, B k×n: 2·m·n·k FLOPs (each of the m·n outputs is k multiplies and k adds); the ideal
  traffic reads A and B once and writes C once (NVIDIA, "Matrix Multiplication Background User's Guide",
  §"Math and Memory Bounds": arithmetic intensity 2MNK / (bytes of A, B and C)).
* Attention forward, per layer: QKᵀ and the probabilities times V, 2·B·T²·d FLOPs each (Korthikanti et al. 2022,
  arXiv:2205.05198 §5 — what selective recomputation re-does).
* Training FLOPs per token: 6N for N non-embedding parameters (2N forward, 4N backward; Kaplan et al. 2020,
  arXiv:2001.08361 §2.1) plus the attention scores: PaLM's 12·L·H·Q·T (Chowdhery et al. 2022, arXiv:2204.02311
  App. B; H·Q = d_attn), Kaplan's 3 × 2·n_layer·n_ctx·d_attn. A run: C ≈ 6·N·D.
* MFU (PaLM App. B): observed tokens/s × model FLOPs per token ÷ (GPUs × peak FLOP/s). Model FLOPs exclude
  activation recomputation; counting it gives HFU.

Units in the names: ``*_tflops`` are 10^12 FLOP/s, ``*_bytes`` bytes; utilisations are fractions.
"""
from __future__ import annotations

FORMS = ("palm", "kaplan")


def _positive(**kw: float) -> None:
    for k, v in kw.items():
        if not v > 0:
            raise ValueError(f"{k}={v!r} must be > 0")


# ---------------------------------------------------------------- layers

def gemm_flops(m: int, n: int, k: int) -> float:
    """FLOPs of C (m×n) = A (m×k) · B (k×n): 2·m·n·k."""
    return 2.0 * m * n * k


def gemm_bytes(m: int, n: int, k: int, bytes_in: float, bytes_out: float | None = None) -> float:
    """Bytes a GEMM moves at best: A and B read once (``bytes_in`` per element), C written once (``bytes_out``,
    default ``bytes_in``; an fp8 GEMM typically writes bf16, 2)."""
    bytes_out = bytes_in if bytes_out is None else bytes_out
    return float(bytes_in * (m * k + k * n) + bytes_out * m * n)


def attention_flops(batch: int, seq_len: int, d_attn: int, n_layers: int = 1):
    """Forward FLOPs of attention's two matmuls over ``n_layers``: QKᵀ (2·B·T²·d) and probabilities·V
    (2·B·T²·d), 4·B·T²·d·L in all (Korthikanti et al. 2022, §5)."""
    return 4 * batch * seq_len * seq_len * d_attn * n_layers


# ---------------------------------------------------------------- training

def flops_per_token(n_params, n_layers=0, seq_len=0, d_attn=0, form="palm", causal=False) -> dict:
    """Training FLOPs per token: dense part 6N and attention part, 12·L·T·d (``form="palm"``, counts QKᵀ and the
    weighted sum of V) or 6·L·T·d (``form="kaplan"``, 3 × Kaplan's forward 2·n_layer·n_ctx·d_attn, QKᵀ only).
    ``causal=True`` halves the attention part: a causal mask leaves only the lower triangle of QKᵀ to compute,
    which is what a causal kernel (FlashAttention) does and how its FLOP rate is counted (Dao 2023,
    arXiv:2307.08691 §4.1). With ``n_layers=0`` both are 6N. Integers in, integers out."""
    _positive(n_params=n_params)
    if form not in FORMS:
        raise ValueError(f"form={form!r}: use 'kaplan' (arXiv:2001.08361) or 'palm' (arXiv:2204.02311)")
    dense, attn = 6 * n_params, (12 if form == "palm" else 6) * n_layers * seq_len * d_attn
    attn = attn // 2 if causal else attn                     # 12 and 6 are even: still exact
    return {"dense_flops": dense, "attention_flops": attn, "total_flops": dense + attn}


def training_flops_per_token(n_params, n_layers=0, seq_len=0, d_attn=0, form="palm", causal=False):
    """The total of :func:`flops_per_token`: 6N + the attention term (halved with ``causal=True``)."""
    return flops_per_token(n_params, n_layers, seq_len, d_attn, form, causal)["total_flops"]


def training_flops(n_params: float, n_tokens: float) -> float:
    """Total training FLOPs C ≈ 6·N·D (Kaplan et al. 2020, §2.1)."""
    _positive(n_params=n_params, n_tokens=n_tokens)
    return 6.0 * n_params * n_tokens


# ---------------------------------------------------------------- utilisation

def utilization(flops_per_s_per_gpu: float, peak_tflops: float) -> float:
    """Achieved FLOP/s ÷ peak FLOP/s (a fraction): MFU or HFU depending on which FLOPs were counted."""
    _positive(flops_per_s_per_gpu=flops_per_s_per_gpu, peak_tflops=peak_tflops)
    return flops_per_s_per_gpu / (peak_tflops * 1e12)


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: float, peak_tflops: float) -> float:
    """Model FLOPs utilisation (PaLM, Chowdhery et al. 2022, App. B): tokens/s × model FLOPs per token ÷
    (GPUs × peak). Recomputation not counted; ``tokens_per_s`` is the whole job's rate."""
    _positive(tokens_per_s=tokens_per_s, flops_per_token=flops_per_token, n_gpus=n_gpus)
    return utilization(tokens_per_s * flops_per_token / n_gpus, peak_tflops)


def hfu(tokens_per_s: float, hardware_flops_per_token: float, n_gpus: float, peak_tflops: float) -> float:
    """Hardware FLOPs utilisation (PaLM App. B): as :func:`mfu`, counting what the GPUs executed, recomputation
    included."""
    return mfu(tokens_per_s, hardware_flops_per_token, n_gpus, peak_tflops)
