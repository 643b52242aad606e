"""Federated averaging over non-IID clients vs centralised training (chapter 17).

Every client holds a shard of a 3-class Gaussian-blob problem whose label mix is drawn from a Dirichlet(alpha)
distribution: small alpha = each client sees mostly one class (non-IID), large alpha = every client sees the global
mix. The model is multinomial logistic regression in numpy (weights (d+1) x k), so a round is milliseconds and the
same arithmetic runs inside NVFlare's simulator (``helpers.governance.fl_client``) and here.

FedAvg (McMahan et al. 2017, arXiv:1602.05629): each round every client starts from the global weights, runs E local
epochs of gradient descent, and the server sets w = sum_k (n_k / n) w_k.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CLASSES, DIM = 3, 2
CENTRES = np.array([[0.0, 2.0], [-1.8, -1.0], [1.8, -1.0]])


def make_data(n: int, seed: int = 0, noise: float = 1.2):
    """n points of the 3-class problem (features (n, 2), labels (n,))."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, n)
    return CENTRES[y] + noise * rng.normal(size=(n, DIM)), y


def split_dirichlet(y: np.ndarray, clients: int, alpha: float, seed: int = 0) -> list[np.ndarray]:
    """Indices per client; per class, shares drawn from Dirichlet(alpha) (Hsu et al. 2019, arXiv:1909.06335)."""
    if clients < 1 or alpha <= 0:
        raise ValueError(f"clients={clients}, alpha={alpha}: need clients >= 1 and alpha > 0")
    rng = np.random.default_rng(seed)
    parts = [[] for _ in range(clients)]
    for c in range(CLASSES):
        idx = rng.permutation(np.flatnonzero(y == c))
        cuts = (np.cumsum(rng.dirichlet([alpha] * clients)) * len(idx)).astype(int)[:-1]
        for k, chunk in enumerate(np.split(idx, cuts)):
            parts[k].extend(chunk.tolist())
    return [np.array(sorted(p), dtype=int) for p in parts]


def _design(x):
    return np.hstack([x, np.ones((len(x), 1))])


def accuracy(w: np.ndarray, x, y) -> float:
    return float(((_design(x) @ w).argmax(1) == y).mean())


def local_train(w: np.ndarray, x, y, epochs: int = 5, lr: float = 0.5) -> np.ndarray:
    """Full-batch gradient descent on the softmax cross-entropy, ``epochs`` steps from ``w``."""
    a, onehot = _design(x), np.eye(CLASSES)[y]
    w = w.copy()
    for _ in range(epochs):
        z = a @ w
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        w -= lr * a.T @ (p - onehot) / max(len(y), 1)
    return w


def fedavg_round(w, shards, epochs: int = 5, lr: float = 0.5, aggregate=None):
    """One FedAvg round; ``aggregate(updates, sizes)`` may replace the weighted mean (secure aggregation, DP)."""
    ws = [local_train(w, x, y, epochs, lr) for x, y in shards]
    sizes = np.array([len(y) for _, y in shards], dtype=float)
    if aggregate is not None:
        return aggregate([wk - w for wk in ws], sizes) + w
    return sum(s * wk for s, wk in zip(sizes, ws)) / sizes.sum()


def init_weights() -> np.ndarray:
    return np.zeros((DIM + 1, CLASSES))


@dataclass(frozen=True)
class FedResult:
    setting: str
    alpha: float
    rounds: int
    accuracy: float            # on the held-out test set
    min_client_classes: int    # fewest distinct labels any client holds
    local_only_accuracy: float # mean test accuracy of each client's model trained on its own data alone


def experiment(alphas=(100.0, 0.1), clients: int = 5, rounds: int = 10, epochs: int = 5, n: int = 3000,
               seed: int = 0) -> list[FedResult]:
    """Centralised training vs FedAvg at each Dirichlet alpha (same total data, same number of gradient steps)."""
    x, y = make_data(n, seed)
    xt, yt = make_data(2000, seed + 1)
    out = [FedResult("centralised", float("inf"), rounds,
                     accuracy(local_train(init_weights(), x, y, rounds * epochs), xt, yt), CLASSES, float("nan"))]
    for a in alphas:
        parts = split_dirichlet(y, clients, a, seed)
        shards = [(x[p], y[p]) for p in parts]
        w = init_weights()
        for _ in range(rounds):
            w = fedavg_round(w, shards, epochs)
        alone = [accuracy(local_train(init_weights(), sx, sy, rounds * epochs), xt, yt) for sx, sy in shards if len(sy)]
        out.append(FedResult("fedavg", a, rounds, accuracy(w, xt, yt), min(len(set(y[p])) for p in parts),
                             float(np.mean(alone))))
    return out


def client_shard(site: int, clients: int, alpha: float, n: int = 3000, seed: int = 0):
    """The shard of client ``site`` (0-based): what each NVFlare site loads for itself."""
    x, y = make_data(n, seed)
    p = split_dirichlet(y, clients, alpha, seed)[site]
    return x[p], y[p]
