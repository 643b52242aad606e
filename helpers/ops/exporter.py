"""A Prometheus exporter for GPU nodes: NVML GPU metrics under the DCGM exporter's names, host metrics from psutil
under node_exporter's names, and fault injection so that alert rules can be fired in a test (chapter 12).

On a machine without a GPU the exporter shows no GPU metrics, unless ``simulated_gpus`` asks for stand-in GPUs:
those carry the label ``modelName="simulated (no GPU)"``, idle values, and whatever faults are injected — they are
for testing alert rules, never a measurement. Field names and NVML calls: ``helpers/ops/data/dcgm_fields.yaml``.

    from helpers.ops import exporter
    ex = exporter.Exporter(simulated_gpus=1)
    ex.inject(gpu=0, xid=79)                      # the next scrape reports DCGM_FI_DEV_XID_ERRORS 79
    with ex.serve() as url:                       # http://127.0.0.1:PORT/metrics, stopped on leaving the block
        ...
    python -m helpers exporter sample --seconds 3 --out assets/measurements/h200/exporter.json
"""
from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

FIELDS = yaml.safe_load((Path(__file__).parent / "data" / "dcgm_fields.yaml").read_text(encoding="utf-8"))
# NVML clock event (throttle) reason bits, nvml.h (nvmlClocksEventReason*)
THROTTLE_BITS = {0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
                 0x20: "sw_thermal_slowdown", 0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown",
                 0x100: "display_clock_setting"}


@dataclass(frozen=True)
class Sample:
    t_s: float
    metric: str
    gpu: str
    value: float


def decode_throttle(mask: int) -> list[str]:
    return [name for bit, name in THROTTLE_BITS.items() if mask & bit]


def _nvml_gpu(nvml, h) -> dict[str, float]:
    """One GPU's fields; a field NVML refuses (NotSupported on some SKUs or in VMs) is left out, never invented."""
    from helpers.core.nvmlquery import ask

    out: dict[str, float] = {}

    def put(key, fn, *args, conv=float):
        v, err = ask(fn, h, *args)
        if err is None and v is not None:
            out[key] = conv(v)

    put("DCGM_FI_DEV_GPU_UTIL", nvml.nvmlDeviceGetUtilizationRates, conv=lambda u: float(u.gpu))
    put("DCGM_FI_DEV_MEM_COPY_UTIL", nvml.nvmlDeviceGetUtilizationRates, conv=lambda u: float(u.memory))
    put("DCGM_FI_DEV_FB_USED", nvml.nvmlDeviceGetMemoryInfo, conv=lambda m: m.used / 2**20)
    put("DCGM_FI_DEV_FB_FREE", nvml.nvmlDeviceGetMemoryInfo, conv=lambda m: m.free / 2**20)
    put("DCGM_FI_DEV_POWER_USAGE", nvml.nvmlDeviceGetPowerUsage, conv=lambda mw: mw / 1000.0)
    put("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", nvml.nvmlDeviceGetTotalEnergyConsumption)
    put("DCGM_FI_DEV_GPU_TEMP", nvml.nvmlDeviceGetTemperature, nvml.NVML_TEMPERATURE_GPU)
    put("DCGM_FI_DEV_SM_CLOCK", nvml.nvmlDeviceGetClockInfo, nvml.NVML_CLOCK_SM)
    put("DCGM_FI_DEV_MEM_CLOCK", nvml.nvmlDeviceGetClockInfo, nvml.NVML_CLOCK_MEM)
    reasons = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        getattr(nvml, "nvmlDeviceGetCurrentClocksThrottleReasons")
    put("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", reasons)
    for key, kind in (("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED),
                      ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)):
        put(key, nvml.nvmlDeviceGetTotalEccErrors, kind, nvml.NVML_VOLATILE_ECC)
    put("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", nvml.nvmlDeviceGetPcieReplayCounter)
    crc, seen = 0, False
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        v, err = ask(nvml.nvmlDeviceGetNvLinkErrorCounter, h, link, nvml.NVML_NVLINK_ERROR_DL_CRC_FLIT)
        if err is not None:
            break
        crc, seen = crc + int(v), True
    if seen:
        out["DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"] = float(crc)
    return out


_SIM_IDLE = {"DCGM_FI_DEV_GPU_UTIL": 0.0, "DCGM_FI_DEV_MEM_COPY_UTIL": 0.0, "DCGM_FI_DEV_FB_USED": 0.0,
             "DCGM_FI_DEV_FB_FREE": 81559.0, "DCGM_FI_DEV_POWER_USAGE": 70.0, "DCGM_FI_DEV_GPU_TEMP": 30.0,
             "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 0.0,
             "DCGM_FI_DEV_SM_CLOCK": 345.0, "DCGM_FI_DEV_MEM_CLOCK": 2619.0,
             "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": 1.0, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": 0.0,
             "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": 0.0, "DCGM_FI_DEV_XID_ERRORS": 0.0,
             "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": 0.0, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0.0}


class Exporter:
    """Reads NVML (when present), psutil and injected faults at every scrape (a prometheus_client Collector)."""

    def __init__(self, simulated_gpus: int = 0, hostname: str | None = None):
        from helpers.core.nvmlquery import load_nvml

        self.hostname = hostname or socket.gethostname()
        self.nvml, self.nvml_reason = load_nvml()
        self.simulated_gpus = simulated_gpus
        self._faults: dict[int, dict[str, float]] = {}
        self._lock = threading.Lock()

    # ---- faults: the values an alert rule should see -------------------------------------------------------
    def inject(self, gpu: int = 0, xid: int | None = None, ecc_dbe: int | None = None, temp_C: float | None = None,
               throttle: str | None = None, nvlink_crc: int | None = None) -> None:
        """Make the next scrapes of ``gpu`` report a fault (over the real or simulated values)."""
        f: dict[str, float] = {}
        if xid is not None:
            f["DCGM_FI_DEV_XID_ERRORS"] = float(xid)
        if ecc_dbe is not None:
            f["DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"] = float(ecc_dbe)
        if temp_C is not None:
            f["DCGM_FI_DEV_GPU_TEMP"] = float(temp_C)
        if throttle is not None:
            bit = {v: k for k, v in THROTTLE_BITS.items()}.get(throttle)
            if bit is None:
                raise ValueError(f"throttle={throttle!r}: give one of {sorted(THROTTLE_BITS.values())}")
            f["DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"] = float(bit)
        if nvlink_crc is not None:
            f["DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL"] = float(nvlink_crc)
        with self._lock:
            self._faults.setdefault(gpu, {}).update(f)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    # ---- reading -------------------------------------------------------------------------------------------
    def gpu_values(self) -> list[tuple[dict[str, str], dict[str, float]]]:
        """[(labels, {field: value})] for every GPU, real first, then simulated."""
        from helpers.core.nvmlquery import ask, text

        rows = []
        if self.nvml is not None:
            n, _ = ask(self.nvml.nvmlDeviceGetCount)
            for i in range(n or 0):
                h, err = ask(self.nvml.nvmlDeviceGetHandleByIndex, i)
                if h is None:
                    continue
                name, _ = ask(self.nvml.nvmlDeviceGetName, h)
                uuid, _ = ask(self.nvml.nvmlDeviceGetUUID, h)
                labels = {"gpu": str(i), "UUID": text(uuid) or "", "modelName": text(name) or "",
                          "device": f"nvidia{i}", "Hostname": self.hostname}
                rows.append((labels, _nvml_gpu(self.nvml, h)))
        for k in range(self.simulated_gpus):
            i = len(rows)
            rows.append(({"gpu": str(i), "UUID": f"GPU-simulated-{k}", "modelName": "simulated (no GPU)",
                          "device": f"nvidia{i}", "Hostname": self.hostname}, dict(_SIM_IDLE)))
        with self._lock:
            for labels, values in rows:
                values.update(self._faults.get(int(labels["gpu"]), {}))
        return rows

    def host_values(self) -> dict[str, float]:
        import os

        import psutil

        vm = psutil.virtual_memory()
        du = psutil.disk_usage("/")
        return {"node_load1": os.getloadavg()[0], "node_memory_MemTotal_bytes": float(vm.total),
                "node_memory_MemAvailable_bytes": float(vm.available),
                "node_filesystem_avail_bytes": float(du.free),
                "node_cpu_utilisation_ratio": psutil.cpu_percent(interval=None) / 100.0}

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        rows = self.gpu_values()
        for f in FIELDS:
            # DCGM's counters are exposed with TYPE gauge: prometheus_client would rename a counter to NAME_total,
            # and the point of the table is that the names match the DCGM exporter's (rate() works either way).
            name = f["dcgm"]
            fam = GaugeMetricFamily(name, f"{f['help']} ({f['type']} in DCGM)",
                                    labels=["gpu", "UUID", "device", "modelName", "Hostname"])
            for labels, values in rows:
                if name in values:
                    fam.add_metric([labels[k] for k in ("gpu", "UUID", "device", "modelName", "Hostname")],
                                   values[name])
            yield fam
        for name, v in self.host_values().items():
            g = GaugeMetricFamily(name, f"{name} (psutil)", labels=["instance"])
            g.add_metric([self.hostname], v)
            yield g

    def text(self) -> str:
        """One scrape in the Prometheus text exposition format."""
        from prometheus_client import CollectorRegistry, generate_latest

        reg = CollectorRegistry()
        reg.register(self)
        return generate_latest(reg).decode()

    @contextlib.contextmanager
    def serve(self, host: str = "127.0.0.1", port: int = 0):
        """Serve /metrics on ``host`` (loopback) and a free port for the duration of the ``with`` block."""
        from prometheus_client import CollectorRegistry, start_http_server

        reg = CollectorRegistry()
        reg.register(self)
        server, thread = start_http_server(port, addr=host, registry=reg)
        try:
            yield f"http://{host}:{server.server_port}/metrics"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def parse_text(text: str) -> dict[tuple[str, str], float]:
    """Prometheus text format back into {(metric, gpu or instance): value}, read by the book's one exposition-format
    reader (:func:`helpers.ops.dcgmread.parse_prometheus`: names as printed, no ``_total`` appended)."""
    from helpers.ops.dcgmread import parse_prometheus

    return {(s.name, s.label("gpu", s.label("instance"))): s.value for s in parse_prometheus(text)}


def sample(seconds: float = 3.0, interval_s: float = 0.25, load: bool = True) -> list[Sample]:
    """Sample every field over a short workload: a matmul loop on the GPU when there is one (so utilisation, power
    and clocks move), none on CPU (then only host metrics are sampled)."""
    from helpers.core import device

    ex = Exporter()
    dev, _ = device.pick_device()
    stop = threading.Event()
    worker = None
    if load and dev.type == "cuda":
        import torch

        def burn():
            a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
            while not stop.is_set():
                for _ in range(20):
                    a = (a @ a).clamp_(-1, 1)
                torch.cuda.synchronize()
        worker = threading.Thread(target=burn, daemon=True)
        worker.start()
    out, t0 = [], time.perf_counter()
    try:
        while time.perf_counter() - t0 < seconds:
            t = time.perf_counter() - t0
            for labels, values in ex.gpu_values():
                out += [Sample(round(t, 3), k, labels["gpu"], v) for k, v in values.items()]
            out += [Sample(round(t, 3), k, "host", v) for k, v in ex.host_values().items()]
            time.sleep(interval_s)
    finally:
        stop.set()
        if worker is not None:
            worker.join(timeout=30)
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers exporter", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="sample GPU and host metrics over a short workload")
    s.add_argument("--seconds", type=cli.bounded_float(0.5, 120), default=3.0)
    s.add_argument("--interval", type=cli.bounded_float(0.05, 10), default=0.25)
    results.add_output_args(s)
    t = sub.add_parser("text", help="print one scrape in the Prometheus text format")
    t.add_argument("--simulated-gpus", type=cli.bounded_int(0, 8), default=0)
    args = ap.parse_args(argv)
    if args.cmd == "text":
        print(Exporter(simulated_gpus=args.simulated_gpus).text(), end="")
        return 0
    recs = sample(args.seconds, args.interval)
    results.emit(recs, "exporter-sample", args, fields={f["dcgm"]: f["unit"] for f in FIELDS})
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
