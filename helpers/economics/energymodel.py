"""What a clock or power cap does to time and energy per step, modelled from a recorded power trace (chapter 16).

The book never changes a GPU's settings; it fits a model to what NVML recorded and asks the model instead.

* Power vs SM clock (DVFS): voltage rises roughly with frequency, so dynamic power grows like f·V² ≈ f³:
  P(f) = P_static + c·f³. ``fit_power_curve`` finds P_static and c by least squares on (f³, P) pairs from a trace.
* Time vs clock: a fraction φ of the step is compute-bound and scales with 1/f, the rest (memory, communication,
  host) does not: t(f) = t₀·(φ·f₀/f + 1 − φ).
* A power cap P_cap sets the clock where P(f) = P_cap (never above f_max); energy per step E = P(f)·t(f).

Lowering the cap from the top saves energy while P falls faster (f³) than t grows (1/f): the optimum sits below
the maximum clock, and the more memory-bound the step (small φ), the lower it sits.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PowerCurve:
    static_W: float               # P_static: leakage, memory, fans, board
    c_W_per_GHz3: float           # dynamic coefficient
    f_max_MHz: float              # highest SM clock seen (or the spec's boost clock)
    source: str                   # where the points came from

    def power_W(self, f_MHz):
        f = np.asarray(f_MHz, dtype=float) / 1000
        return self.static_W + self.c_W_per_GHz3 * f ** 3

    def clock_at_cap_MHz(self, cap_W: float) -> float:
        if cap_W <= self.static_W:
            raise ValueError(f"cap {cap_W} W is at or below the static power {self.static_W:.0f} W: the GPU cannot run")
        f = ((cap_W - self.static_W) / self.c_W_per_GHz3) ** (1 / 3) * 1000
        return float(min(f, self.f_max_MHz))


def fit_power_curve(clock_MHz, power_W, source: str = "trace") -> PowerCurve:
    """Least-squares fit of P = P_static + c·f³ to (clock, power) samples; needs two distinct clocks."""
    f = np.asarray(clock_MHz, dtype=float) / 1000
    p = np.asarray(power_W, dtype=float)
    ok = np.isfinite(f) & np.isfinite(p) & (f > 0)
    f, p = f[ok], p[ok]
    if len(f) < 2 or np.ptp(f) < 1e-3:
        raise ValueError(f"need samples at two or more distinct clocks to fit a curve, got {sorted(set(np.round(f * 1000)))} MHz")
    A = np.stack([np.ones_like(f), f ** 3], axis=1)
    (static, c), *_ = np.linalg.lstsq(A, p, rcond=None)
    if c <= 0:
        raise ValueError(f"fitted dynamic coefficient {c:.1f} W/GHz³ is not positive: the samples do not show power "
                         "rising with clock (a trace at one steady state cannot be fitted)")
    return PowerCurve(float(max(static, 0.0)), float(c), float(f.max() * 1000), source)


def curve_from_trace(samples: list[dict], min_power_W: float = 0.0) -> PowerCurve:
    """A curve from a recorded trace (dicts with ``power_W`` and ``sm_clock_MHz``)."""
    pts = [(s["sm_clock_MHz"], s["power_W"]) for s in samples
           if s.get("power_W") is not None and s.get("sm_clock_MHz") and s["power_W"] >= min_power_W]
    if not pts:
        raise ValueError("the trace has no samples with both power and SM clock")
    f, p = zip(*pts)
    return fit_power_curve(f, p, source="recorded trace")


def curve_from_operating_points(traces: dict[str, list[dict]], idle: str = "idle", load: str = "gemm",
                                f_max_MHz: float | None = None) -> PowerCurve:
    """A curve calibrated on two measured operating points when no clock sweep exists: the idle floor as
    P_static, and the loaded workload's median (clock, power) for c = (P_load − P_idle) / f_load³. It assumes the
    f³ law between them (stated in ``source``) — a one-point calibration, not a fit."""
    def med(name, key):
        vals = [s[key] for s in traces.get(name, []) if s.get(key) is not None]
        if not vals:
            raise ValueError(f"the trace has no {key} samples for {name!r}: record it with powertrace "
                             f"--workload {idle},{load}")
        return float(np.median(vals))

    p_idle, p_load, f_load = med(idle, "power_W"), med(load, "power_W"), med(load, "sm_clock_MHz")
    if p_load <= p_idle:
        raise ValueError(f"{load} draws {p_load:.0f} W, not more than {idle} ({p_idle:.0f} W): nothing to calibrate")
    c = (p_load - p_idle) / (f_load / 1000) ** 3
    f_top = f_max_MHz or max(s["sm_clock_MHz"] for tr in traces.values() for s in tr if s.get("sm_clock_MHz"))
    return PowerCurve(p_idle, c, float(f_top),
                      f"recorded trace, two operating points: {idle} {p_idle:.0f} W as static power, {load} "
                      f"{p_load:.0f} W at {f_load:.0f} MHz; f³ assumed between them")


@dataclass(frozen=True)
class CapPoint:
    cap_W: float
    sm_clock_MHz: float
    power_W: float
    step_time_s: float
    energy_per_step_J: float
    time_vs_top_cap: float          # relative to the highest cap of the sweep (the GPU's default limit)
    energy_vs_top_cap: float


def step_time_s(t0_s: float, f0_MHz: float, f_MHz: float, compute_fraction: float) -> float:
    """t(f) = t₀·(φ·f₀/f + 1 − φ)."""
    if not 0 <= compute_fraction <= 1:
        raise ValueError(f"compute_fraction={compute_fraction}: give a fraction 0..1")
    return t0_s * (compute_fraction * f0_MHz / f_MHz + 1 - compute_fraction)


def cap_sweep(curve: PowerCurve, caps_W, t0_s: float, compute_fraction: float = 0.8) -> list[CapPoint]:
    """Energy and time per step under each power cap (t₀ is the step time at f_max), relative to the highest cap."""
    caps = sorted(float(c) for c in caps_W)
    if not caps:
        raise ValueError("caps_W is empty: give the power limits to model, e.g. range(300, 701, 50)")
    f0 = curve.f_max_MHz
    pts = []
    for cap in caps:
        f = curve.clock_at_cap_MHz(cap)
        p = float(curve.power_W(f))
        pts.append((cap, f, p, step_time_s(t0_s, f0, f, compute_fraction)))
    t_top, e_top = pts[-1][3], pts[-1][2] * pts[-1][3]
    return [CapPoint(cap, f, p, t, p * t, t / t_top, p * t / e_top) for cap, f, p, t in pts]


def best_cap(points: list[CapPoint]) -> CapPoint:
    """The cap with the least energy per step."""
    return min(points, key=lambda p: p.energy_per_step_J)
