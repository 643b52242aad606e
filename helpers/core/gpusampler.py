"""SM clock, power and throttle reasons sampled by NVML while a GPU benchmark runs (chapters 10, 15 and 25).

A GEMM rate means little without the clock it ran at: under a sustained load an H200 sits at its power cap and
lowers its SM clock, so the same kernel is slower back to back than with pauses between calls. ``Sampler`` polls
NVML from a background thread (every ``interval_s``) and, when the work is done, summarises what it saw:

    with gpusampler.Sampler(device_index=0) as s:
        run_the_benchmark()
    s.summary()    # {"sm_clock_MHz_median": …, "power_W_median": …, "throttle_reasons": [...], …}

Without a GPU, or without nvidia-ml-py, or where NVML refuses a field (virtual GPUs), the sampler records nothing
and ``summary()`` says why in ``sampler_note`` — it never raises. Imports no other helper except nvmlquery.
"""
from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

from helpers.core import nvmlquery

# NVML clock-event ("throttle") reason bits (nvml.h, nvmlClocksEventReason*), named as nvidia-smi -q names them
REASONS = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
    0x10: "sync_boost", 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}


def reason_names(mask: int) -> list[str]:
    """Names of the bits set in an NVML clocks-event mask (unknown bits as hex)."""
    if mask < 0:
        raise ValueError(f"mask={mask}: an NVML reason mask is a non-negative integer")
    names = [n for bit, n in REASONS.items() if mask & bit]
    rest = mask & ~sum(REASONS)
    return names + ([hex(rest)] if rest else [])


@dataclass(frozen=True)
class Sample:
    t_s: float
    sm_clock_MHz: int | None
    power_W: float | None          # NVML's instantaneous power where it has it, else its ~1 s average
    temperature_C: int | None
    reasons_mask: int | None


class Sampler:
    """Background NVML sampling of one GPU; a context manager. ``samples`` is empty where NVML cannot answer."""

    def __init__(self, device_index: int = 0, interval_s: float = 0.02):
        if interval_s <= 0:
            raise ValueError(f"interval_s={interval_s}: use a positive sampling interval (e.g. 0.02)")
        self.index, self.interval_s = device_index, interval_s
        self.samples: list[Sample] = []
        self.note = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._nvml = self._handle = None
        self._t0 = 0.0

    @classmethod
    def for_torch_device(cls, dev, interval_s: float = 0.02) -> "Sampler":
        """A sampler of the GPU behind a torch device, found by PCI bus id (CUDA_VISIBLE_DEVICES renumbers
        devices for CUDA but not for NVML); by index when torch cannot tell the bus id."""
        s = cls(getattr(dev, "index", None) or 0, interval_s)
        try:
            import torch

            p = torch.cuda.get_device_properties(dev)
            s.pci_bus_id = f"{p.pci_domain_id:08x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"
        except Exception:  # noqa: BLE001 — older torch or no CUDA: fall back to the index
            pass
        return s

    pci_bus_id: str | None = None

    @classmethod
    def for_current(cls, interval_s: float = 0.02) -> "Sampler":
        """A sampler of the GPU torch is using now (CUDA device 0 of this process), or of NVML's GPU 0 without torch."""
        try:
            import torch

            if torch.cuda.is_available():
                return cls.for_torch_device(torch.device("cuda", torch.cuda.current_device()), interval_s)
        except Exception:  # noqa: BLE001 — a broken torch: sample by index
            pass
        return cls(0, interval_s)

    def start(self) -> "Sampler":
        nvml, why = nvmlquery.load_nvml()
        if nvml is None:
            self.note = f"no NVML samples: {why}"
            return self
        h, err = None, None
        if self.pci_bus_id:
            h, err = nvmlquery.ask(nvml.nvmlDeviceGetHandleByPciBusId, self.pci_bus_id.encode())
        if h is None:
            h, err = nvmlquery.ask(nvml.nvmlDeviceGetHandleByIndex, self.index)
        if h is None:
            self.note = f"no NVML samples: GPU {self.index} handle {err}"
            return self
        self._nvml, self._handle, self._t0 = nvml, h, time.perf_counter()
        self._thread = threading.Thread(target=self._loop, name="gpusampler", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> Sample:
        n, h = self._nvml, self._handle
        clk, _ = nvmlquery.ask(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_SM)
        mw = self._instant_mW()
        if mw is None:
            mw, _ = nvmlquery.ask(n.nvmlDeviceGetPowerUsage, h)
        temp, _ = nvmlquery.ask(n.nvmlDeviceGetTemperature, h, n.NVML_TEMPERATURE_GPU)
        fn = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        mask, _ = nvmlquery.ask(fn, h)
        return Sample(time.perf_counter() - self._t0, clk, None if mw is None else mw / 1000.0, temp, mask)

    def _instant_mW(self) -> float | None:
        """NVML_FI_DEV_POWER_INSTANT (field 186; Hopper and later): the power now, not ``nvmlDeviceGetPowerUsage``'s
        average over about a second, which smears a benchmark point shorter than that with the idle time around it."""
        if self.power_source == "average":
            return None
        n = self._nvml
        fid = getattr(n, "NVML_FI_DEV_POWER_INSTANT", 186)
        vals, _ = nvmlquery.ask(n.nvmlDeviceGetFieldValues, self._handle, [fid])
        v = vals[0] if vals else None
        if v is None or getattr(v, "nvmlReturn", 1) != 0:
            self.power_source = "average"                  # not supported here: NVML's ~1 s average from now on
            return None
        self.power_source = "instant"
        return float(v.value.uiVal)

    power_source = ""       # "instant" (NVML field 186) or "average" (nvmlDeviceGetPowerUsage, ~1 s window)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self._read())
            self._stop.wait(self.interval_s)

    def stop(self) -> "Sampler":
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)
            self._thread = None
            if not self.samples:
                self.note = "NVML answered no sample during the run (the run was shorter than one interval?)"
        return self

    def __enter__(self) -> "Sampler":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def summary(self) -> dict:
        """Median and minimum SM clock, median and maximum power, every throttle reason seen, sample count."""
        clk = [s.sm_clock_MHz for s in self.samples if s.sm_clock_MHz is not None]
        pw = [s.power_W for s in self.samples if s.power_W is not None]
        masks = [s.reasons_mask for s in self.samples if s.reasons_mask is not None]
        seen = sorted({r for m in masks for r in reason_names(m)})
        note = self.note
        if self.samples and not clk:
            note = note or "NVML gave samples without an SM clock (field not supported here)"
        span = self.samples[-1].t_s - self.samples[0].t_s if len(self.samples) > 1 else 0.0
        # an averaged reading is valid only over a window longer than its own (~1 s) averaging window
        # (a sampler thread starved by a busy timing loop can also return one stale sample: ask for at least three)
        valid = len(pw) >= 3 and (self.power_source == "instant" or span >= 1.0)
        return {"sm_clock_MHz_median": statistics.median(clk) if clk else None,
                "sm_clock_MHz_min": min(clk) if clk else None,
                "power_W_median": statistics.median(pw) if pw else None,
                "power_W_max": max(pw) if pw else None,
                "power_source": self.power_source or None, "power_valid": valid, "sampled_s": round(span, 3),
                "throttle_reasons": seen, "samples": len(self.samples), "sampler_note": note}
