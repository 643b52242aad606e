"""What ``llmtrain`` sets up before it times a step (chapter 18): the model in a precision, its blocks wrapped for an
SDPA backend, activation checkpointing and ``torch.compile``, the optimizer, and the token source.

* Precision: ``bf16-mixed`` keeps fp32 master weights and runs the matmuls under ``torch.autocast`` in bf16;
  ``bf16-pure`` casts weights, gradients and AdamW's moments to bf16; ``fp8-mixed`` is bf16-mixed with the linear
  layers swapped for torchao's float8 training layers (``torchao.float8``), when torchao can be imported on a GPU
  that has fp8 (compute capability ≥ 8.9); ``fp32`` is the CPU's default.
* Each block is wrapped (:class:`Wrapped`) so the SDPA backend is chosen *inside* the compiled region (dynamo
  bakes ``sdpa_kernel`` into the graph) and checkpointing is per block; ``torch.compile`` compiles one block (all
  blocks share its graph) and the head + loss, as torchtitan does, rather than the whole model unrolled.
* Data: random tokens made on the device (speed does not depend on the values), or windows of the bytes of text
  the book ships (its chapters' Markdown), which gives a real loss curve with a byte-level vocabulary.
"""
from __future__ import annotations

from pathlib import Path

import torch
import torch.nn as nn
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.checkpoint import checkpoint

PRECISIONS = ("bf16-mixed", "bf16-pure", "fp8-mixed", "fp32")
SDPA = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
REPO = Path(__file__).resolve().parents[3]


class Wrapped(nn.Module):
    """A block run under one SDPA backend, optionally recomputed in the backward (activation checkpointing)."""

    def __init__(self, block: nn.Module, sdpa: str, recompute: bool):
        super().__init__()
        self.block, self.backend, self.recompute = block, SDPA[sdpa], recompute

    def run(self, x, cos, sin):
        with sdpa_kernel([self.backend]):            # inside what is recomputed: the backward picks it again
            return self.block(x, cos, sin)

    def forward(self, x, cos, sin):
        if self.recompute:
            return checkpoint(self.run, x, cos, sin, use_reentrant=False)
        return self.run(x, cos, sin)


def sdpa_unavailable(sdpa: str, dev, dtype, head_dim: int) -> str | None:
    """Why the backend cannot run causal attention forward and backward at this dtype and head size here, or
    None when it can (a 1×2×128×head_dim probe)."""
    q = torch.randn(1, 2, 128, head_dim, device=dev, dtype=dtype, requires_grad=True)
    try:
        with sdpa_kernel([SDPA[sdpa]]):
            torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
        return None
    except RuntimeError as e:
        return " ".join(str(e).split())[:200] or type(e).__name__


def fp8_unavailable(dev) -> str | None:
    """Why torchao float8 training cannot run here, or None."""
    if dev.type != "cuda":
        return "fp8 training needs a CUDA GPU with compute capability >= 8.9 (this run is on the CPU)"
    if torch.cuda.get_device_capability(dev) < (8, 9):
        return f"fp8 needs compute capability >= 8.9; this GPU has {torch.cuda.get_device_capability(dev)}"
    try:
        import torchao.float8  # noqa: F401
    except ImportError as e:
        return f"torchao is not importable ({e}); pip install torchao to run fp8-mixed"
    return None


def autocast_dtype(precision: str):
    """The autocast dtype of a precision, or None where no autocast is used."""
    return torch.bfloat16 if precision in ("bf16-mixed", "fp8-mixed") else None


def prepare(model: nn.Module, precision: str, sdpa: str, recompute: bool, compiled: bool) -> nn.Module:
    """Cast or convert the model for ``precision``, wrap its blocks, compile them and the head (in place)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if precision == "bf16-pure":
        model.to(torch.bfloat16)
    if precision == "fp8-mixed":
        from torchao.float8 import convert_to_float8_training
        convert_to_float8_training(model, module_filter_fn=lambda m, fqn: fqn != "lm_head" and isinstance(
            m, nn.Linear) and m.in_features % 16 == 0 and m.out_features % 16 == 0)
    model.blocks = nn.ModuleList(Wrapped(b, sdpa, recompute) for b in model.blocks)
    if compiled:
        for w in model.blocks:
            w.compile()
        model.head_loss = torch.compile(model.head_loss)
    return model


def optimizer(model: nn.Module, lr: float):
    """AdamW (β 0.9/0.95, weight decay 0.1), fused into one kernel per step on a GPU."""
    on_gpu = next(model.parameters()).device.type == "cuda"
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1,
                             fused=True if on_gpu else None)


def book_text(paths: list[Path] | None = None) -> tuple[torch.Tensor, str]:
    """The bytes of the book's own chapter sources (or README / CONTRIBUTING where chapters are absent), as a
    uint8 tensor, and a description of where they came from."""
    if paths is None:
        paths = sorted(REPO.glob("chapters/*/*.md")) or [p for p in (REPO / "README.md", REPO / "CONTRIBUTING.md")
                                                         if p.exists()]
    if not paths:
        raise FileNotFoundError(f"no text to train on under {REPO}: give --data random, or run from the repository")
    data = b"".join(Path(p).read_bytes() for p in paths)
    where = f"bytes of {len(paths)} text file(s) the book ships ({Path(paths[0]).relative_to(REPO)} …), " \
            f"{len(data) / 1e6:.2f} MB, byte-level vocabulary"
    return torch.frombuffer(bytearray(data), dtype=torch.uint8), where


class Tokens:
    """Batches (inputs, targets) of shape (batch, seq_len): random tokens made on the device, or random windows
    of a byte corpus. Seeded; nothing is copied from the host per step when the corpus lives on the device."""

    def __init__(self, kind: str, vocab: int, batch: int, seq_len: int, dev, seed: int = 0):
        self.batch, self.seq_len, self.vocab, self.dev = batch, seq_len, vocab, dev
        self.gen = torch.Generator(device=dev).manual_seed(seed)
        if kind == "random":
            self.corpus, self.describe = None, "random tokens made on the device (speed only, no learning)"
        elif kind == "text":
            if vocab < 256:
                raise ValueError(f"vocab {vocab} < 256: byte-level text needs a config with vocab_size >= 256")
            corpus, self.describe = book_text()
            if len(corpus) <= seq_len + 1:
                raise ValueError(f"the text has {len(corpus)} bytes, fewer than --seq-len {seq_len} + 1")
            self.corpus = corpus.to(dev)
        else:
            raise ValueError(f"data {kind!r}: use random or text")

    def next(self):
        if self.corpus is None:
            t = torch.randint(0, self.vocab, (self.batch, self.seq_len + 1), device=self.dev, generator=self.gen)
        else:
            start = torch.randint(0, len(self.corpus) - self.seq_len - 1, (self.batch, 1), device=self.dev,
                                  generator=self.gen)
            t = self.corpus[start + torch.arange(self.seq_len + 1, device=self.dev)].long()
        return t[:, :-1], t[:, 1:]
