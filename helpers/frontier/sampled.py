"""Time a GPU benchmark under the NVML sampler, so every frontier record carries its SM clock and power (chapter 30).

On CPU the timing is plain and the record says there was no GPU clock to sample.
"""
from __future__ import annotations

from helpers.core import timing


def time_sampled(fn, device, warmup: int = 1, repeats: int = 3):
    """(Timing, {sm_clock_MHz_median, power_W_median, throttle_reasons, sampler_note})."""
    if getattr(device, "type", str(device)) != "cuda":
        return (timing.time_fn(fn, device=device, warmup=warmup, repeats=repeats),
                {"sm_clock_MHz_median": None, "power_W_median": None, "throttle_reasons": (),
                 "sampler_note": "CPU run: no GPU clock or power to sample"})
    from helpers.core import gpusampler

    with gpusampler.Sampler.for_torch_device(device) as smp:
        t = timing.time_fn(fn, device=device, warmup=warmup, repeats=repeats)
    s = smp.summary()
    return t, {"sm_clock_MHz_median": s["sm_clock_MHz_median"], "power_W_median": s["power_W_median"],
               "throttle_reasons": tuple(s["throttle_reasons"]), "sampler_note": s["sampler_note"]}
