"""Power and energy sampled through NVML while real work runs: energy per step and per token (chapter 16).

A background thread asks NVML for the board power (``nvmlDeviceGetPowerUsage``, mW), the SM clock and the
clock-throttle reasons every ``interval_s``; where the driver exposes the total-energy counter
(``nvmlDeviceGetTotalEnergyConsumption``, mJ since the driver loaded) the energy of a run is the counter's
difference, otherwise the trapezoid integral of the power samples. Without a GPU there is no power sensor the book
can read (a container rarely exposes RAPL): the sampler then records time only and says so — it never invents watts.
The book never changes a GPU's clocks or power limit; it only reads them.

    python -m helpers powertrace --workload gemm,train --seconds 10 --out assets/measurements/h200/power.json
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass

from helpers.core import nvmlquery

# NVML clocks-event (throttle) reason bits, from nvml.h (nvmlClocksEventReasons*)
THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal",
                 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks"}


def throttle_names(mask: int | None) -> str:
    """'sw_power_cap+hw_slowdown' for a reason bit mask; '' for none; 'unknown' when NVML did not say."""
    if mask is None:
        return "unknown"
    return "+".join(name for bit, name in THROTTLE_BITS.items() if mask & bit)


@dataclass(frozen=True)
class PowerSample:
    t_s: float                    # seconds since the sampler started
    power_W: float | None         # board power; None without a sensor
    sm_clock_MHz: float | None
    mem_clock_MHz: float | None
    temperature_C: float | None
    throttle: str                 # reason names joined by '+', 'unknown' without NVML


class PowerSampler:
    """``with PowerSampler(gpu=0) as s: work()`` — then ``s.samples``, ``s.energy_J()``, ``s.source``."""

    def __init__(self, gpu: int = 0, interval_s: float = 0.05, nvml="auto"):
        if not 0.001 <= interval_s <= 10:
            raise ValueError(f"interval_s={interval_s}: give 0.001..10 s (NVML updates power about every 20-100 ms)")
        self.gpu, self.interval_s = gpu, interval_s
        self.samples: list[PowerSample] = []
        # ``nvml`` = an initialised pynvml-like module (tests pass a fake one); "auto" loads the real one
        self._nvml, why = nvmlquery.load_nvml() if nvml == "auto" else (nvml, None if nvml else "NVML not given")
        self._h = None
        if self._nvml is not None:
            self._h, err = nvmlquery.ask(self._nvml.nvmlDeviceGetHandleByIndex, gpu)
            why = None if self._h is not None else f"no GPU {gpu} in NVML ({err})"
        self.source = "nvml" if self._h is not None else "none"
        self.why = why or ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._e0 = self._e1 = None

    def _energy_mJ(self):
        if self._h is None:
            return None
        v, _ = nvmlquery.ask(self._nvml.nvmlDeviceGetTotalEnergyConsumption, self._h)
        return v

    def read(self, t_s: float) -> PowerSample:
        if self._h is None:
            return PowerSample(t_s, None, None, None, None, "unknown")
        n, h = self._nvml, self._h
        p, _ = nvmlquery.ask(n.nvmlDeviceGetPowerUsage, h)
        sm, _ = nvmlquery.ask(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_SM)
        mem, _ = nvmlquery.ask(n.nvmlDeviceGetClockInfo, h, n.NVML_CLOCK_MEM)
        temp, _ = nvmlquery.ask(n.nvmlDeviceGetTemperature, h, n.NVML_TEMPERATURE_GPU)
        reasons = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or n.nvmlDeviceGetCurrentClocksThrottleReasons
        mask, _ = nvmlquery.ask(reasons, h)
        return PowerSample(t_s, None if p is None else p / 1000.0, sm, mem, temp, throttle_names(mask))

    def _loop(self):
        t0 = time.perf_counter()
        while not self._stop.is_set():
            self.samples.append(self.read(time.perf_counter() - t0))
            self._stop.wait(self.interval_s)
        self.samples.append(self.read(time.perf_counter() - t0))

    def __enter__(self):
        self._e0 = self._energy_mJ()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5 + 2 * self.interval_s)
        self._e1 = self._energy_mJ()
        return False

    def energy_J(self) -> float | None:
        """Energy of the sampled interval: the NVML counter's difference when it exists, else the integral."""
        if self._e0 is not None and self._e1 is not None and self._e1 >= self._e0:
            return (self._e1 - self._e0) / 1000.0
        return integrate_J(self.samples)


def integrate_J(samples: list[PowerSample]) -> float | None:
    """Trapezoid integral of power over time (J); None when any sample has no power reading."""
    if len(samples) < 2 or any(s.power_W is None for s in samples):
        return None
    return sum((b.t_s - a.t_s) * (a.power_W + b.power_W) / 2 for a, b in zip(samples, samples[1:]))


@dataclass(frozen=True)
class EnergyRun:
    workload: str
    device: str
    steps: int
    tokens_per_step: int          # 0 for a GEMM loop
    time_s: float
    energy_J: float | None        # None without a power sensor
    mean_power_W: float | None
    max_power_W: float | None
    energy_per_step_J: float | None
    energy_per_token_mJ: float | None
    mean_sm_clock_MHz: float | None
    throttle_reasons: str         # every reason seen during the run
    power_source: str             # "nvml" or "none (why)"


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def summarise(workload: str, device: str, sampler: PowerSampler, steps: int, tokens_per_step: int,
              time_s: float) -> EnergyRun:
    if steps < 1 or time_s <= 0:
        raise ValueError(f"steps={steps} and time_s={time_s} must be positive")
    s = [x for x in sampler.samples if x.power_W is not None]
    e = sampler.energy_J()
    seen = sorted({r for x in sampler.samples for r in x.throttle.split("+") if r})
    per_token = None if (e is None or not tokens_per_step) else e / (steps * tokens_per_step) * 1000
    src = sampler.source if sampler.source == "nvml" else f"none ({sampler.why})"
    return EnergyRun(workload, device, steps, tokens_per_step, time_s, e, _mean(x.power_W for x in s),
                     max((x.power_W for x in s), default=None), None if e is None else e / steps, per_token,
                     _mean(x.sm_clock_MHz for x in sampler.samples), "+".join(seen) or "none", src)


def gemm_workload(dev, n: int = 8192, dtype: str = "bf16"):
    """A square GEMM, the hardest steady load a GPU sees (it meets its power cap). Returns (step, tokens/step)."""
    import torch

    dt = {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
    g = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(n, n, generator=g).to(dev, dt)
    b = torch.randn(n, n, generator=g).to(dev, dt)
    return (lambda: a @ b), 0


def train_workload(dev, d_model: int = 1024, n_layers: int = 4, seq: int = 1024, batch: int = 8, vocab: int = 8192):
    """One step of a small transformer encoder LM (forward, backward, AdamW) on random tokens; tokens = batch·seq."""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model, d_model // 64, 4 * d_model, batch_first=True, norm_first=True)
    model = nn.Sequential(nn.Embedding(vocab, d_model), nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False),
                          nn.Linear(d_model, vocab)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, vocab, (batch, seq), device=dev)
    amp = torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda")

    def step():
        with amp:
            loss = nn.functional.cross_entropy(model(x).flatten(0, 1).float(), x.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step, batch * seq


def torch_device_name(dev) -> str:
    import torch

    return torch.cuda.get_device_name(dev)


def run(workload: str, seconds: float = 5.0, interval_s: float = 0.05,
        small: bool = False) -> tuple[EnergyRun, list[PowerSample]]:
    """Run ``workload`` ('gemm', 'train', 'idle') for about ``seconds`` under the sampler; CPU gets small shapes."""
    from helpers.core import device, timing

    dev, _ = device.pick_device()
    small = small or dev.type == "cpu"
    if workload == "gemm":
        fn, tok = gemm_workload(dev, n=256 if small else 8192, dtype="fp32" if small else "bf16")
    elif workload == "train":
        fn, tok = train_workload(dev, **(dict(d_model=64, n_layers=1, seq=32, batch=2, vocab=256) if small else {}))
    elif workload == "idle":
        fn, tok = (lambda: time.sleep(0.05)), 0
    else:
        raise ValueError(f"workload={workload!r}: use gemm, train or idle")
    fn()                                          # warm-up outside the trace (allocator, cuBLAS handle)
    timing.sync(dev)
    name = "cpu" if dev.type == "cpu" else torch_device_name(dev)
    steps, t0 = 0, time.perf_counter()
    with PowerSampler(interval_s=interval_s) as s:
        while time.perf_counter() - t0 < seconds:
            fn()
            steps += 1
            if steps % 8 == 0:
                timing.sync(dev)
        timing.sync(dev)
    return summarise(workload, name, s, steps, tok, time.perf_counter() - t0), s.samples


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers powertrace", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", type=cli.csv_of(str), default=["gemm", "train"], help="gemm,train,idle")
    ap.add_argument("--seconds", type=cli.bounded_float(0.1, 600), default=5.0)
    ap.add_argument("--interval", type=cli.bounded_float(0.001, 10), default=0.05, help="sampling interval (s)")
    results.add_output_args(ap)
    args = ap.parse_args(argv)
    recs, traces = [], {}
    for w in args.workload:
        r, samples = run(w, args.seconds, args.interval)
        recs.append(r)
        traces[w] = [vars(x) for x in samples]
    results.emit(recs, "powertrace", args, traces=traces)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
