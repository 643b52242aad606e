"""Sending less: top-k sparsification with error feedback, and Local SGD (chapter 8).

Both labs simulate ``workers`` data-parallel ranks in one process, so every byte is counted exactly and the runs
are deterministic: each worker has its own shard of a seeded Gaussian-mixture classification set and the same small
MLP; what a real run would send over the network is counted, not timed.

* **Top-k** (Aji & Heafield 2017; Lin et al., "Deep Gradient Compression", 2018): each worker sends only the ``k``
  largest-magnitude entries of its gradient, as (fp32 value, int32 index) pairs — 8 bytes per entry, gathered from
  every rank because ranks choose different entries. With **error feedback** (Seide et al. 2014; Stich et al.
  2018) a worker keeps what it did not send and adds it to the next gradient, so it is delayed, not lost.
* **Local SGD** (Stich 2019; Lin et al., "Don't use large mini-batches, use local SGD", 2020): each worker takes
  ``H`` optimizer steps on its own, then the parameters are averaged (one all-reduce of the model). With plain SGD,
  ``H = 1`` is exactly synchronous data parallelism; larger ``H`` divides the communication by ``H``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.formulas import comm

ENTRY_BYTES = 8          # fp32 value + int32 index


@dataclass(frozen=True)
class TopkResult:
    density: float               # k / N
    error_feedback: bool
    bytes_per_worker_step: int   # what one worker contributes per step
    bytes_vs_dense: float        # that, over the dense fp32 gradient's bytes
    final_loss: float            # mean training loss of the last 20 steps
    test_accuracy: float


@dataclass(frozen=True)
class LocalSGDResult:
    sync_every: int              # H
    syncs: int
    bytes_per_worker: int        # ring all-reduce of the parameters at every sync: 2(p-1)/p · 4 · N
    final_loss: float
    test_accuracy: float


def make_data(workers: int, per_worker: int = 512, dim: int = 32, classes: int = 4, noise: float = 2.5,
              seed: int = 0):
    """A seeded Gaussian mixture, split into one shard per worker plus a held-out test set of 2,048."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((classes, dim))
    n = workers * per_worker + 2048
    y = rng.integers(0, classes, n)
    x = centres[y] + rng.standard_normal((n, dim)) * noise
    shards = [(x[i * per_worker:(i + 1) * per_worker], y[i * per_worker:(i + 1) * per_worker]) for i in range(workers)]
    return shards, (x[-2048:], y[-2048:])


SHAPES = ((32, 64), (64,), (64, 4), (4,))          # a 32-64-4 MLP: 2,372 parameters


def init_params(seed: int = 1) -> np.ndarray:
    """All parameters in one flat float64 vector (the layout a gradient bucket has)."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal(SHAPES[0]) / SHAPES[0][0] ** 0.5
    w2 = rng.standard_normal(SHAPES[2]) / SHAPES[2][0] ** 0.5
    return np.concatenate([w1.ravel(), np.zeros(64), w2.ravel(), np.zeros(4)])


def _split(flat):
    out, i = [], 0
    for s in SHAPES:
        n = int(np.prod(s))
        out.append(flat[i:i + n].reshape(s))
        i += n
    return out


def _forward(flat, x):
    w1, b1, w2, b2 = _split(flat)
    h = np.maximum(x @ w1 + b1, 0)
    z = h @ w2 + b2
    z = z - z.max(1, keepdims=True)
    p = np.exp(z)
    return h, p / p.sum(1, keepdims=True)


def _grad(flat, x, y) -> tuple[np.ndarray, float]:
    """Cross-entropy loss of the MLP and its gradient, by hand (backpropagation through two layers)."""
    w1, b1, w2, b2 = _split(flat)
    h, p = _forward(flat, x)
    loss = float(-np.log(p[np.arange(len(y)), y] + 1e-12).mean())
    dz = p.copy()
    dz[np.arange(len(y)), y] -= 1
    dz /= len(y)
    dh = (dz @ w2.T) * (h > 0)
    return np.concatenate([(x.T @ dh).ravel(), dh.sum(0), (h.T @ dz).ravel(), dz.sum(0)]), loss


def accuracy(flat, test) -> float:
    x, y = test
    return float((_forward(flat, x)[1].argmax(1) == y).mean())


def topk_compress(grad: np.ndarray, k: int, residual: np.ndarray | None):
    """The ``k`` largest-magnitude entries of ``grad`` (+ the residual, with error feedback), as a dense vector
    that is zero elsewhere, and the new residual (what was not sent; None without error feedback)."""
    acc = grad if residual is None else grad + residual
    idx = np.argpartition(-np.abs(acc), k - 1)[:k]
    sent = np.zeros_like(acc)
    sent[idx] = acc[idx]
    return sent, (acc - sent if residual is not None else None)


def train_topk(density: float, error_feedback: bool, workers: int = 4, steps: int = 200, lr: float = 0.1,
               batch: int = 32) -> TopkResult:
    """Synchronous SGD where every worker sends its top-k gradient entries; the step applies their mean."""
    if not 0 < density <= 1:
        raise ValueError(f"density={density}: give the fraction of entries sent, in (0, 1]")
    shards, test = make_data(workers)
    params = init_params()
    n = params.size
    k = max(1, round(density * n))
    residual = [np.zeros(n) if error_feedback else None for _ in range(workers)]
    losses = []
    for step in range(steps):
        total, ls = np.zeros(n), []
        for w, (x, y) in enumerate(shards):
            i = (step * batch) % len(x)
            g, loss = _grad(params, x[i:i + batch], y[i:i + batch])
            sent, residual[w] = topk_compress(g, k, residual[w])
            total += sent                          # what an all-gather of every rank's (value, index) pairs sums
            ls.append(loss)
        params = params - lr * total / workers
        losses.append(sum(ls) / workers)
    sent_bytes = n * 4 if density == 1 else k * ENTRY_BYTES
    return TopkResult(density, error_feedback, sent_bytes, sent_bytes / (n * 4),
                      sum(losses[-20:]) / 20, accuracy(params, test))


def ring_allreduce_bytes(numel: float, workers: int, bytes_per_elem: int = 4) -> float:
    """Bytes one worker sends in a ring all-reduce of ``numel`` elements: 2(p-1)/p · numel · bytes_per_elem."""
    if workers < 1 or numel < 0:
        raise ValueError(f"workers={workers}, numel={numel}: need ≥ 1 worker and a non-negative size")
    return comm.ring_allreduce_bytes(numel * bytes_per_elem, workers)


def local_sgd(sync_every: int, workers: int = 4, steps: int = 200, lr: float = 0.1,
              batch: int = 32) -> LocalSGDResult:
    """Each worker steps on its own shard; every ``sync_every`` steps the parameters are averaged."""
    if sync_every < 1:
        raise ValueError(f"sync_every={sync_every}: average at least every step (1) or less often (> 1)")
    shards, test = make_data(workers)
    reps = [init_params() for _ in range(workers)]
    n = reps[0].size
    losses, syncs = [], 0
    for step in range(steps):
        ls = []
        for w, (x, y) in enumerate(shards):
            i = (step * batch) % len(x)
            g, loss = _grad(reps[w], x[i:i + batch], y[i:i + batch])
            reps[w] = reps[w] - lr * g
            ls.append(loss)
        losses.append(sum(ls) / workers)
        if (step + 1) % sync_every == 0 or step == steps - 1:
            mean = sum(reps) / workers                 # the all-reduce of the parameters, divided by p
            reps = [mean.copy() for _ in range(workers)]
            syncs += 1
    per_sync = round(ring_allreduce_bytes(n, workers))
    return LocalSGDResult(sync_every, syncs, per_sync * syncs, sum(losses[-20:]) / 20, accuracy(reps[0], test))


def sweep_topk(densities=(1.0, 0.1, 0.01, 0.002), **kw) -> list[TopkResult]:
    """Dense first, then each density with and without error feedback."""
    out = [train_topk(1.0, False, **kw)]
    for d in densities:
        if d < 1:
            out += [train_topk(d, False, **kw), train_topk(d, True, **kw)]
    return out


def sweep_local_sgd(periods=(1, 4, 16, 64), **kw) -> list[LocalSGDResult]:
    return [local_sgd(h, **kw) for h in periods]
