"""A mixture-of-experts layer with top-k routing and a load-balancing loss, and expert parallelism (chapter 18).

* :class:`MoE` — a router (linear, softmax) picks the top-k of E expert MLPs per token; the output is the
  router-weighted sum of the chosen experts. The Switch-Transformer auxiliary loss E · Σ_i f_i · P_i (f_i: fraction
  of tokens routed to expert i, P_i: mean router probability of i; Fedus et al. 2021, eq. 4) is 1 when the load is
  uniform and grows as routing collapses onto few experts.
* :func:`expert_parallel` — the same layer with the experts spread over ranks: each rank routes its own tokens,
  sends each token to the rank that owns its expert with ``all_to_all_single`` (split sizes exchanged first), the
  experts run, and a second all-to-all brings the outputs back. :func:`ep_check` compares it with :class:`MoE` run
  on all tokens in one process.
"""
from __future__ import annotations

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class MoE(nn.Module):
    def __init__(self, d_model: int = 32, n_experts: int = 4, top_k: int = 2, d_hidden: int = 64, seed: int = 0):
        super().__init__()
        if not 1 <= top_k <= n_experts:
            raise ValueError(f"top_k={top_k} must be in 1..n_experts={n_experts}")
        self.n_experts, self.top_k = n_experts, top_k
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.router = nn.Linear(d_model, n_experts, bias=False)
            self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d_model, d_hidden), nn.GELU(),
                                                       nn.Linear(d_hidden, d_model)) for _ in range(n_experts))

    def route(self, x):
        """(weights (N, k), expert ids (N, k), router probabilities (N, E)) for tokens x: (N, d)."""
        probs = F.softmax(self.router(x), dim=-1)
        w, idx = probs.topk(self.top_k, dim=-1)
        return w / w.sum(-1, keepdim=True), idx, probs

    def balance_loss(self, idx, probs):
        f = torch.bincount(idx.flatten(), minlength=self.n_experts).float() / idx.numel()
        return self.n_experts * (f * probs.mean(0)).sum()

    def forward(self, x):                               # x: (N, d) tokens
        w, idx, probs = self.route(x)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = (idx == e).nonzero(as_tuple=True)
            if tok.numel():
                out.index_add_(0, tok, w[tok, slot, None] * expert(x[tok]))
        return out, self.balance_loss(idx, probs)


def expert_parallel(moe: MoE, x, rank: int, world_size: int):
    """Forward of ``moe`` for this rank's tokens x (N, d), experts e owned by rank e // (E / world_size)."""
    E = moe.n_experts
    if E % world_size:
        raise ValueError(f"n_experts={E} must be divisible by world_size={world_size}")
    per = E // world_size
    w, idx, _ = moe.route(x)
    flat_e = idx.flatten()                                   # (N·k,) expert of each (token, slot)
    flat_tok = torch.arange(x.shape[0]).repeat_interleave(moe.top_k)
    order = torch.argsort(flat_e // per, stable=True)        # group the copies by destination rank
    send_x = x[flat_tok[order]]
    send_e = flat_e[order]
    send_counts = torch.bincount(flat_e // per, minlength=world_size)
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)         # how many tokens each rank will send me
    sc, rc = send_counts.tolist(), recv_counts.tolist()
    recv_x = x.new_empty(sum(rc), x.shape[1])
    dist.all_to_all_single(recv_x, send_x, rc, sc)
    recv_e = send_e.new_empty(sum(rc))
    dist.all_to_all_single(recv_e, send_e, rc, sc)
    y = torch.zeros_like(recv_x)
    for e in range(rank * per, (rank + 1) * per):            # only my experts run here
        sel = recv_e == e
        if sel.any():
            y[sel] = moe.experts[e](recv_x[sel])
    back = x.new_empty(send_x.shape)
    dist.all_to_all_single(back, y, sc, rc)                  # outputs return to the tokens' ranks
    out = torch.zeros_like(x)
    out.index_add_(0, flat_tok[order], w.flatten()[order, None] * back)
    return out


def ep_check(ctx, n_tokens: int = 64, d_model: int = 32, n_experts: int = 4, top_k: int = 2) -> dict:
    """Rank worker: the same MoE (seeded) everywhere; rank r takes its slice of the tokens through
    :func:`expert_parallel`; the reference is one process running :class:`MoE` over all tokens."""
    moe = MoE(d_model, n_experts, top_k)
    x = torch.randn(n_tokens, d_model, generator=torch.Generator().manual_seed(1))
    c = n_tokens // ctx.world_size
    mine = x[ctx.rank * c:(ctx.rank + 1) * c]
    with torch.no_grad():
        out = expert_parallel(moe, mine, ctx.rank, ctx.world_size)
        ref, _ = moe(x)
    return {"rank": ctx.rank, "tokens": c, "experts_here": n_experts // ctx.world_size,
            "max_abs_diff": (out - ref[ctx.rank * c:(ctx.rank + 1) * c]).abs().max().item()}
