"""Drift detection (PSI, Kolmogorov-Smirnov) and a canary release that rolls back on it (chapter 22).

PSI (population stability index) over B bins of the reference distribution: PSI = sum_b (a_b - e_b) ln(a_b / e_b),
a_b and e_b the live and reference fractions per bin. Common reading: < 0.1 stable, 0.1-0.25 moderate shift, > 0.25
major shift. KS: D = max |F_live(x) - F_ref(x)|, with the asymptotic p-value of the Kolmogorov distribution
Q(lambda) = 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 lambda^2), lambda = (sqrt(m) + 0.12 + 0.11/sqrt(m)) D, m = n1 n2 / (n1+n2)
(Numerical Recipes, 3rd ed., section 14.3.3).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def psi(reference: np.ndarray, live: np.ndarray, bins: int = 10, eps: float = 1e-6) -> float:
    edges = np.quantile(reference, np.linspace(0, 1, bins + 1))
    edges[0], edges[-1] = -np.inf, np.inf
    e = np.histogram(reference, edges)[0] / len(reference) + eps
    a = np.histogram(live, edges)[0] / len(live) + eps
    return float(np.sum((a - e) * np.log(a / e)))


def ks(reference: np.ndarray, live: np.ndarray) -> tuple[float, float]:
    """(D, p-value) of the two-sample KS test."""
    r, l_ = np.sort(reference), np.sort(live)
    grid = np.concatenate([r, l_])
    d = float(np.max(np.abs(np.searchsorted(r, grid, "right") / len(r) - np.searchsorted(l_, grid, "right") / len(l_))))
    m = len(r) * len(l_) / (len(r) + len(l_))
    lam = (math.sqrt(m) + 0.12 + 0.11 / math.sqrt(m)) * d
    if lam < 1e-3:
        return d, 1.0
    q = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return d, float(min(max(q, 0.0), 1.0))


@dataclass(frozen=True)
class CanaryStep:
    step: int
    traffic_pct: int
    psi: float
    ks_p: float
    error_rate: float
    action: str                  # "promote", "hold" or "rollback"


def canary(reference, batches, error_rates, stages=(5, 25, 50, 100), psi_max: float = 0.25, ks_alpha: float = 0.01,
           error_budget: float = 0.02) -> list[CanaryStep]:
    """Walk the canary through ``stages`` (% of traffic); at each, test the live features against the reference and
    the canary's error rate against the budget. Any breach rolls back to the old version and stops."""
    out = []
    for i, (pct, live, err) in enumerate(zip(stages, batches, error_rates)):
        p, (_, kp) = psi(reference, live), ks(reference, live)
        bad = p > psi_max or kp < ks_alpha or err > error_budget
        out.append(CanaryStep(i, pct, p, kp, err, "rollback" if bad else "promote"))
        if bad:
            break
    return out
