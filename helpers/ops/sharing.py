"""Sharing one GPU between tenants: time-slicing (CUDA / the Kubernetes device plugin), vGPU's equal-share and
fixed-share schedulers, and MIG's fixed partitions, simulated on the same request stream (chapter 05).

Model (a step simulation, ``dt_ms`` per step). Work is measured in milliseconds *of the whole GPU*.

* ``time-slicing`` (best effort): one context runs at a time; the scheduler rotates among tenants that have work,
  each gets up to ``slice_ms``, and every change of context costs ``switch_ms`` of nobody's work.
* ``fixed-share``: like vGPU's fixed-share scheduler: the slot rotates over *all* tenants, busy or not, so an idle
  tenant's slot is wasted but nobody's share depends on the neighbours.
* ``mig``: tenant *i* owns a fraction ``f_i`` of the SMs all the time (no switching): a request of ``w`` ms of
  whole-GPU work takes ``w / f_i`` ms, whatever the neighbour does (perfect scaling with SMs: an optimistic
  assumption for MIG, noted in the chapter).

A latency-sensitive tenant sends Poisson requests; a "noisy neighbour" always has work (a training loop). We report
the first tenant's latency percentiles and how much work each tenant got done.

    from helpers.ops import sharing
    sharing.compare(seed=0)                        # → list[SharingResult], one per mode
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODES = ("time-slicing", "fixed-share", "mig")


@dataclass(frozen=True)
class SharingResult:
    mode: str
    requests: int
    p50_ms: float
    p99_ms: float
    noisy_work_share: float      # fraction of wall time spent on the noisy neighbour's work
    idle_or_switch_share: float  # fraction of wall time doing no tenant's work


def simulate(mode: str, duration_ms: float = 2000.0, request_work_ms: float = 2.0, rate_per_s: float = 50.0,
             slice_ms: float = 2.0, switch_ms: float = 0.1, mig_fractions: tuple[float, float] = (3 / 7, 4 / 7),
             noisy: bool = True, dt_ms: float = 0.05, seed: int = 0) -> SharingResult:
    """One run of two tenants: tenant 0 serves requests (Poisson, ``rate_per_s``), tenant 1 trains (always busy)."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: give one of {MODES}")
    if not 0 < dt_ms <= min(slice_ms, request_work_ms):
        raise ValueError(f"dt_ms={dt_ms} must be > 0 and ≤ slice_ms and request_work_ms")
    rng = np.random.default_rng(seed)
    n_steps = int(duration_ms / dt_ms)
    gaps = rng.exponential(1000.0 / rate_per_s, size=int(duration_ms * rate_per_s / 1000 * 2) + 10)
    arrivals = np.cumsum(gaps)
    arrivals = arrivals[arrivals < duration_ms * 0.9]        # leave time for the last ones to finish
    queue: list[list[float]] = []                            # [arrival_ms, remaining_work_ms] of tenant 0
    latencies, next_arrival = [], 0
    owner, slice_left, switch_left = 0, slice_ms, 0.0
    noisy_work = wasted = 0.0
    for step in range(n_steps):
        t = step * dt_ms
        while next_arrival < len(arrivals) and arrivals[next_arrival] <= t:
            queue.append([arrivals[next_arrival], request_work_ms])
            next_arrival += 1
        has_work = (bool(queue), noisy)
        if mode == "mig":
            work0 = dt_ms * mig_fractions[0]
            noisy_work += dt_ms * mig_fractions[1] if noisy else 0.0
            wasted += 0.0 if queue else dt_ms * mig_fractions[0]
            wasted += 0.0 if noisy else dt_ms * mig_fractions[1]
        else:
            work0 = 0.0
            if switch_left > 0:
                switch_left -= dt_ms
                wasted += dt_ms
            elif has_work[owner] or mode == "fixed-share":
                if has_work[owner]:
                    if owner == 0:
                        work0 = dt_ms
                    else:
                        noisy_work += dt_ms
                else:
                    wasted += dt_ms                       # fixed share: the idle tenant's slot is lost
                slice_left -= dt_ms
            else:
                wasted += dt_ms
            other = 1 - owner
            expired = slice_left <= 1e-9
            if mode == "time-slicing" and has_work[other] and (expired or not has_work[owner]):
                owner, slice_left, switch_left = other, slice_ms, switch_ms
            elif mode == "fixed-share" and expired:
                owner, slice_left, switch_left = other, slice_ms, switch_ms
            elif expired:
                slice_left = slice_ms
        while work0 > 1e-12 and queue:                       # FIFO within the tenant
            used = min(work0, queue[0][1])
            queue[0][1] -= used
            work0 -= used
            if queue[0][1] <= 1e-9:
                latencies.append(t + dt_ms - queue[0][0])
                queue.pop(0)
    lat = np.array(latencies) if latencies else np.array([float("nan")])
    return SharingResult(mode, len(latencies), float(np.percentile(lat, 50)), float(np.percentile(lat, 99)),
                         noisy_work / duration_ms, wasted / duration_ms)


def compare(seed: int = 0, noisy: bool = True, **kw) -> list[SharingResult]:
    """The same request stream under every mode."""
    return [simulate(m, seed=seed, noisy=noisy, **kw) for m in MODES]
