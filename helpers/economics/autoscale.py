"""Autoscaling an inference service against a day of traffic: replica-hours paid vs requests turned away (chapter 21).

Demand is a seeded diurnal curve in requests/s. Each replica (one GPU) serves ``per_replica_rps``. Every minute
the autoscaler looks at the demand and asks for ceil(demand / (per_replica_rps · target_util)) replicas, between
``min_replicas`` and ``max_replicas``; new replicas are ready only after ``spinup_min`` minutes (a GPU node boots,
pulls the image, loads weights), and it scales down only after ``cooldown_min`` minutes of lower demand.
Static provisioning for the peak is the baseline.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def diurnal_demand(minutes: int = 1440, base_rps: float = 200.0, peak_rps: float = 1000.0, noise: float = 0.05,
                   seed: int = 0) -> np.ndarray:
    """Requests/s per minute: a cosine day (trough at 04:00, peak at 16:00) with multiplicative noise."""
    if minutes < 1 or not 0 <= base_rps <= peak_rps or noise < 0:
        raise ValueError(f"minutes={minutes} ≥ 1, 0 ≤ base_rps={base_rps} ≤ peak_rps={peak_rps}, noise={noise} ≥ 0")
    t = np.arange(minutes) / 60.0
    shape = (1 - np.cos(2 * np.pi * (t - 4) / 24)) / 2
    rng = np.random.default_rng(seed)
    return (base_rps + (peak_rps - base_rps) * shape) * (1 + noise * rng.standard_normal(minutes)).clip(0)


@dataclass(frozen=True)
class ScaleResult:
    policy: str
    replica_hours: float
    cost_usd: float
    dropped_frac: float              # requests above capacity / all requests
    minutes_overloaded: int
    max_replicas_used: int


def replicas(demand_rps: np.ndarray, per_replica_rps: float = 50.0, target_util: float = 0.7, spinup_min: int = 5,
             cooldown_min: int = 15, min_replicas: int = 1, max_replicas: int = 64,
             policy: str = "autoscale") -> np.ndarray:
    """Ready replicas per minute under the autoscaler (``policy='autoscale'``) or a fleet sized for the peak."""
    if per_replica_rps <= 0 or not 0 < target_util <= 1 or min(spinup_min, cooldown_min) < 0:
        raise ValueError("per_replica_rps > 0, 0 < target_util ≤ 1, spinup_min and cooldown_min ≥ 0 are required")
    if policy not in ("autoscale", "static"):
        raise ValueError(f"policy={policy!r}: use 'autoscale' or 'static'")

    def want(d: float) -> int:
        return int(min(max_replicas, max(min_replicas, math.ceil(d / (per_replica_rps * target_util)))))
    if policy == "static":
        return np.full(len(demand_rps), want(float(demand_rps.max())))
    ready = np.zeros(len(demand_rps), dtype=int)
    current, pending, low_since = want(float(demand_rps[0])), [], None
    for i, d in enumerate(demand_rps):
        current += sum(k for t, k in pending if t <= i)          # replicas whose spin-up has finished
        pending = [(t, k) for t, k in pending if t > i]
        target = want(float(d))
        planned = current + sum(k for _, k in pending)
        if target > planned:                                     # ask for more; they arrive after spin-up
            pending.append((i + spinup_min, target - planned))
            low_since = None
        elif target < current:                                   # scale down only after a quiet cooldown
            low_since = i if low_since is None else low_since
            if i - low_since >= cooldown_min:
                current, low_since = target, None
        else:
            low_since = None
        ready[i] = current
    return ready


def simulate(demand_rps: np.ndarray, per_replica_rps: float = 50.0, usd_per_replica_hour: float = 3.0,
             policy: str = "autoscale", **kw) -> ScaleResult:
    """Cost and dropped requests of ``replicas(demand_rps, …)`` (keywords as there)."""
    ready = replicas(demand_rps, per_replica_rps, policy=policy, **kw)
    dropped = np.clip(demand_rps - ready * per_replica_rps, 0, None)
    rh = float(ready.sum()) / 60.0
    return ScaleResult(policy, rh, rh * usd_per_replica_hour, float(dropped.sum() / max(demand_rps.sum(), 1e-12)),
                       int((dropped > 0).sum()), int(ready.max()))
