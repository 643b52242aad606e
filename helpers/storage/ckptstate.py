"""What a checkpoint holds: the model states a restart needs, their bytes, and a byte-exact comparison (chapter 04).

A checkpoint is what a restart needs: the bf16 weights, the fp32 master copy and Adam's two fp32 moments —
2 + 4 + 4 + 4 = 14 bytes per parameter, the count ``helpers.training.calc.memory.model_states`` gives for
weights + optimizer state (the gradients are recomputed, not saved). :func:`checkpoint_state` builds exactly that
from any ``nn.Module`` after one seeded Adam step, so the optimiser state is real, not zeros; :func:`mlp` is the
model the ``ckptwrite`` CLI checkpoints. :func:`tensor_bytes` counts the tensor bytes of any nested state and
:func:`same_bytes` checks that a reloaded checkpoint is the state, bit for bit. The writers that put such a state
on disk are in :mod:`helpers.storage.ckptwrite`.
"""
from __future__ import annotations

import copy
from typing import Any


def _torch():
    import torch

    return torch


def mlp(n_params: float, width: int = 2048, seed: int = 0):
    """A stack of ``width``×``width`` Linear layers with about ``n_params`` parameters (the CLI's model)."""
    torch = _torch()
    if n_params < width * width + width:
        raise ValueError(f"n_params={n_params:g} is less than one {width}×{width} layer: "
                         "lower --width or raise --params")
    layers = max(1, round(n_params / (width * width + width)))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return torch.nn.Sequential(*[torch.nn.Linear(width, width) for _ in range(layers)])


def checkpoint_state(model, seed: int = 0) -> dict[str, Any]:
    """Mixed-precision Adam checkpoint of ``model``: bf16 weights, fp32 master weights and Adam's exp_avg and
    exp_avg_sq after one step on seeded random gradients (on the model's device)."""
    torch = _torch()
    master = copy.deepcopy(model).float()
    params = list(master.parameters())
    if not params:
        raise ValueError("the model has no parameters: there is nothing to checkpoint")
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator(device=params[0].device).manual_seed(seed)
    for p in params:
        p.grad = torch.randn(p.shape, generator=g, device=p.device)
    opt.step()
    for p in params:
        p.grad = None
    named = dict(master.named_parameters())
    return {"model": {n: p.detach().to(torch.bfloat16) for n, p in named.items()},
            "master": {n: p.detach() for n, p in named.items()},
            "optim": opt.state_dict(), "step": 1}


def tensor_bytes(obj) -> int:
    """Bytes of tensor data anywhere in ``obj`` (dicts, lists, tuples)."""
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(v) for v in obj)
    return 0


def same_bytes(a, b) -> bool:
    """True when ``a`` and ``b`` have the same structure and every tensor the same dtype, shape and bytes."""
    torch = _torch()
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        raw = [t.detach().cpu().reshape(-1).view(torch.uint8) for t in (a, b)]
        return torch.equal(*raw)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_bytes(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_bytes(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
