"""Secure aggregation with pairwise masks, and differential privacy by clipping and Gaussian noise (chapter 17).

Secure aggregation (Bonawitz et al. 2017, "Practical Secure Aggregation for Privacy-Preserving Machine Learning"):
every pair of clients (i, j), i < j, shares a seed s_ij (in the protocol, from a Diffie-Hellman key agreement). Client
i adds PRG(s_ij) for every j > i and subtracts PRG(s_ji) for every j < i. Each masked update looks uniformly random
to the server, yet the masks cancel in the sum. Exactness needs integer arithmetic: updates are fixed-point encoded
(scale 2^16) and added modulo 2^32, so the server's sum equals the sum of the encoded updates bit for bit. (The real
protocol also secret-shares the seeds so the sum survives clients that drop out; not modelled here.)

Differential privacy (DP-FedAvg, McMahan et al. 2018, arXiv:1710.06963): clip each client update to L2 norm C, add
N(0, (z C)^2) noise to the sum; z is the noise multiplier. One release of a sum with sensitivity C is (eps, delta)-DP
for sigma = C sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth 2014, Theorem A.1, eps < 1).
"""
from __future__ import annotations

import math

import numpy as np

SCALE = 2 ** 16
MOD = 2 ** 32


def encode(x: np.ndarray) -> np.ndarray:
    """Fixed point: round(x * 2^16) as uint32 (two's complement modulo 2^32). |x| must stay below 2^15."""
    if np.abs(x).max(initial=0) >= 2 ** 15:
        raise ValueError(f"update entries up to {np.abs(x).max():.3g}: fixed-point encoding needs |x| < 32768")
    return np.round(x * SCALE).astype(np.int64).astype(np.uint32)


def decode(v: np.ndarray) -> np.ndarray:
    return v.astype(np.uint32).astype(np.int32).astype(np.float64) / SCALE


def _prg(seed: int, shape) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, MOD, size=shape, dtype=np.uint64).astype(np.uint32)


def pair_seeds(n: int, seed: int = 0) -> dict[tuple[int, int], int]:
    """s_ij for i < j (stand-in for the Diffie-Hellman agreement of the real protocol)."""
    rng = np.random.default_rng(seed)
    return {(i, j): int(rng.integers(0, 2 ** 62)) for i in range(n) for j in range(i + 1, n)}


def mask(i: int, update: np.ndarray, seeds: dict[tuple[int, int], int], n: int) -> np.ndarray:
    """Client i's masked, encoded update: encode(x_i) + sum_{j>i} PRG(s_ij) - sum_{j<i} PRG(s_ji)  (mod 2^32)."""
    y = encode(update)
    for j in range(n):
        if j > i:
            y = y + _prg(seeds[(i, j)], y.shape)
        elif j < i:
            y = y - _prg(seeds[(j, i)], y.shape)
    return y                                             # uint32 arithmetic wraps: exactly mod 2^32


def secure_sum(updates: list[np.ndarray], seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    """(decoded sum, what the server saw): the masked vectors are all the server ever receives."""
    n = len(updates)
    seeds = pair_seeds(n, seed)
    masked = [mask(i, u, seeds, n) for i, u in enumerate(updates)]
    total = np.zeros_like(masked[0])
    for m in masked:
        total = total + m
    return decode(total), masked


def plain_fixed_point_sum(updates: list[np.ndarray]) -> np.ndarray:
    """The sum of the encoded updates without masks: what secure_sum must equal bit for bit."""
    total = np.zeros(updates[0].shape, dtype=np.uint32)
    for u in updates:
        total = total + encode(u)
    return decode(total)


def clip(update: np.ndarray, c: float) -> np.ndarray:
    """Scale ``update`` so its L2 norm is at most c."""
    norm = float(np.linalg.norm(update))
    return update if norm <= c else update * (c / norm)


def dp_aggregator(clip_norm: float, noise_multiplier: float, seed: int = 0):
    """An ``aggregate(updates, sizes)`` for ``fedlearn.fedavg_round``: clip, sum, add N(0,(z C)^2), divide by count.

    DP-FedAvg weights clients equally (a weighted sum would let one large client's sensitivity grow)."""
    if clip_norm <= 0 or noise_multiplier < 0:
        raise ValueError(f"clip_norm={clip_norm} must be > 0 and noise_multiplier={noise_multiplier} >= 0")
    rng = np.random.default_rng(seed)

    def aggregate(updates, sizes):
        total = sum(clip(u, clip_norm) for u in updates)
        total = total + rng.normal(0.0, noise_multiplier * clip_norm, size=total.shape)
        return total / len(updates)
    return aggregate


def gaussian_sigma(eps: float, delta: float, sensitivity: float) -> float:
    """sigma of the Gaussian mechanism for one (eps, delta)-DP release (valid for 0 < eps < 1)."""
    if not (0 < eps < 1 and 0 < delta < 1):
        raise ValueError(f"eps={eps}, delta={delta}: the classic bound needs 0 < eps < 1 and 0 < delta < 1")
    return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps


def dp_experiment(noise_multipliers=(0.0, 0.5, 2.0, 8.0), clients: int = 20, rounds: int = 10, epochs: int = 5,
                  clip_norm: float = 1.0, alpha: float = 1.0, seed: int = 0) -> list[dict]:
    """Test accuracy of DP-FedAvg at each noise multiplier (same data, same seeds)."""
    from helpers.governance import fedlearn as fl

    x, y = fl.make_data(3000, seed)
    xt, yt = fl.make_data(2000, seed + 1)
    shards = [(x[p], y[p]) for p in fl.split_dirichlet(y, clients, alpha, seed)]
    out = []
    for z in noise_multipliers:
        agg = dp_aggregator(clip_norm, z, seed)
        w = fl.init_weights()
        for _ in range(rounds):
            w = fl.fedavg_round(w, shards, epochs, aggregate=agg)
        out.append({"noise_multiplier": z, "noise_std_per_coordinate": z * clip_norm / clients,
                    "clients": clients, "accuracy": fl.accuracy(w, xt, yt)})
    return out
