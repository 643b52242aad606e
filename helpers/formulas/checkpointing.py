"""How often to checkpoint: Young's and Daly's optimal intervals and the time they waste (chapter 14; used in 21, 28).

A job writes a checkpoint of cost δ after every τ of work; failures arrive at random with mean time between
failures M (rate λ = 1/M). Per unit of work it then loses δ/τ to writing and, on average, τ/2 of redone work plus
the restart R per failure (a fraction λ·(τ/2 + R)). Minimising δ/τ + τ/(2M) gives

    Young (1974)   τ = √(2δM)
    Daly (2006)    τ = √(2δM)·[1 + ⅓·√(δ/2M) + (δ/2M)/9] − δ   for δ < 2M,   τ = M otherwise

J. W. Young, "A first order approximation to the optimum checkpoint interval", CACM 17(9):530-531, 1974;
J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart dumps", Future Generation
Computer Systems 22(3):303-312, 2006. Times in seconds; the formulas are homogeneous, so δ and M in hours give τ in
hours (chapter 21 does that for spot instances).
"""
from __future__ import annotations

import math


def young(delta_s: float, mtbf_s: float) -> float:
    """Young's first-order optimum τ = √(2δM) (seconds of work between checkpoints)."""
    if delta_s <= 0 or mtbf_s <= 0:
        raise ValueError(f"delta_s={delta_s}, mtbf_s={mtbf_s}: both must be > 0 seconds")
    return math.sqrt(2 * delta_s * mtbf_s)


def daly(delta_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimum τ = √(2δM)[1 + ⅓√(δ/2M) + (δ/2M)/9] − δ for δ < 2M, else M."""
    young(delta_s, mtbf_s)
    if delta_s >= 2 * mtbf_s:
        return mtbf_s
    r = delta_s / (2 * mtbf_s)
    return math.sqrt(2 * delta_s * mtbf_s) * (1 + math.sqrt(r) / 3 + r / 9) - delta_s


def young_waste_fraction(interval_s: float, delta_s: float, failures_per_s: float,
                         restart_s: float = 0.0) -> float:
    """Young's first-order lost fraction δ/τ + λ·(τ/2 + R), λ = 1/M the failure rate: checkpoint writes, half an
    interval of redone work and a restart per failure (Young 1974). The rate, not M, so that a job with no failures
    (λ = 0) loses only its writes."""
    if interval_s <= 0 or delta_s < 0 or failures_per_s < 0 or restart_s < 0:
        raise ValueError(f"interval_s={interval_s}, delta_s={delta_s}, failures_per_s={failures_per_s}, "
                         f"restart_s={restart_s}: need τ > 0, λ ≥ 0, δ ≥ 0, R ≥ 0")
    return delta_s / interval_s + failures_per_s * (interval_s / 2 + restart_s)
