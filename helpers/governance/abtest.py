"""A/B test of two model versions: the sample size it needs and the significance test it ends with (chapter 22).

Metric: a success rate (click-through, accepted answer). H0: p_A = p_B. Two-proportion z-test:
    p = (x_A + x_B) / (n_A + n_B),  z = (p_B - p_A) / sqrt(p (1 - p) (1/n_A + 1/n_B)),  two-sided p-value 2 (1 - Phi(|z|)).
Sample size per arm to detect p_A -> p_B at level alpha with power 1 - beta (normal approximation):
    n = (z_{1-alpha/2} sqrt(2 pbar (1-pbar)) + z_{1-beta} sqrt(p_A(1-p_A) + p_B(1-p_B)))^2 / (p_B - p_A)^2.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_N = NormalDist()


def sample_size(p_a: float, p_b: float, alpha: float = 0.05, power: float = 0.8) -> int:
    if not (0 < p_a < 1 and 0 < p_b < 1) or p_a == p_b:
        raise ValueError(f"p_a={p_a}, p_b={p_b}: need two different rates strictly between 0 and 1")
    za, zb = _N.inv_cdf(1 - alpha / 2), _N.inv_cdf(power)
    pbar = (p_a + p_b) / 2
    n = (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))) ** 2
    return math.ceil(n / (p_b - p_a) ** 2)


@dataclass(frozen=True)
class ZTest:
    n_a: int
    n_b: int
    rate_a: float
    rate_b: float
    z: float
    p_value: float
    significant: bool


def z_test(x_a: int, n_a: int, x_b: int, n_b: int, alpha: float = 0.05) -> ZTest:
    if min(n_a, n_b) <= 0 or not (0 <= x_a <= n_a and 0 <= x_b <= n_b):
        raise ValueError(f"successes {x_a}/{n_a}, {x_b}/{n_b}: need 0 <= x <= n and n > 0")
    p = (x_a + x_b) / (n_a + n_b)
    se = math.sqrt(p * (1 - p) * (1 / n_a + 1 / n_b))
    z = (x_b / n_b - x_a / n_a) / se if se > 0 else 0.0
    pv = 2 * (1 - _N.cdf(abs(z)))
    return ZTest(n_a, n_b, x_a / n_a, x_b / n_b, z, pv, pv < alpha)


def simulate(p_a: float, p_b: float, n: int, seed: int = 0, alpha: float = 0.05) -> ZTest:
    """Draw n users per arm from the true rates and test them."""
    rng = np.random.default_rng(seed)
    return z_test(int(rng.binomial(n, p_a)), n, int(rng.binomial(n, p_b)), n, alpha)


def power_by_simulation(p_a: float, p_b: float, n: int, trials: int = 400, seed: int = 0) -> float:
    """Fraction of simulated experiments that detect the difference (checks the sample-size formula)."""
    rng = np.random.default_rng(seed)
    xa, xb = rng.binomial(n, p_a, trials), rng.binomial(n, p_b, trials)
    return float(np.mean([z_test(int(a), n, int(b), n).significant for a, b in zip(xa, xb)]))
