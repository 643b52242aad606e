"""Failures as inputs: rates per GPU-day and their mix from published clusters, MTTF and lost work, checkpoint
bytes from what is saved, and write bandwidth presets (chapter 14; ``perfmodel.goodput`` in chapter 28 uses one
constant, this module gives the inputs behind it).

* :data:`FAILURE_PRESETS` — failures per GPU-day (and the mix of causes where published) per cluster kind, each
  with its source: Llama 3's 16K-H100 snapshot, BLOOM's 384 A100s, OPT-175B's logbook on 992 A100s.
* :func:`mttf_h` — a job that needs all its GPUs fails when any fails: MTTF = 24 ÷ (rate × GPUs) hours.
* :func:`checkpoint_bytes_per_param` — from what is saved (weights, fp32 master, optimizer moments) in which
  precision (``helpers.formulas.dtypes``), divided over the ranks that share it.
* :data:`WRITE_PRESETS` — write bandwidth of storage tiers, sourced; :func:`lost_work` — Young's interval and
  the lost fraction (``helpers.formulas.checkpointing``) from all of the above.
* :func:`check_out_of_sample` — Llama 3's interruptions predicted from the *other* clusters' rates, and its
  "more than 90 % effective training time" predicted from its own rate (the 90 % is not used for the preset).
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.formulas import checkpointing, dtypes

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class FailurePreset:
    name: str
    failures_per_gpu_day: float
    mix: dict                       # cause → count (as published), empty when not published
    source: str
    says: str
    lower_bound: bool = False       # the source gives "at least"

    def shares(self) -> dict:
        total = sum(self.mix.values())
        return {k: v / total for k, v in self.mix.items()} if total else {}


# Llama 3 (Dubey et al. 2024, arXiv:2407.21783, §3.3.4 Table 5): 419 unexpected interruptions in 54 days, 16,384 H100.
LLAMA3_MIX = {"faulty GPU": 148, "GPU HBM3 memory": 72, "software bug": 54, "network switch/cable": 35,
              "host maintenance": 32, "GPU SRAM memory": 19, "GPU system processor": 17, "NIC": 7,
              "NCCL watchdog timeouts": 7, "silent data corruption": 6, "GPU thermal interface + sensor": 6,
              "SSD": 3, "power supply": 3, "server chassis": 2, "IO expansion board": 2, "dependency": 2,
              "CPU": 2, "system memory": 2}
FAILURE_PRESETS = {
    "llama3-h100": FailurePreset(
        "Llama 3, 16,384 H100 (Meta)", sum(LLAMA3_MIX.values()) / (54 * 16_384), LLAMA3_MIX,
        "https://arxiv.org/abs/2407.21783",
        "§3.3.4, Table 5: 419 unexpected interruptions during a 54-day snapshot of pre-training on 16,384 H100; "
        "counts per root-cause category (about 78 % confirmed or suspected hardware)."),
    "bloom-a100": FailurePreset(
        "BLOOM-176B, 384 A100 80GB (Jean Zay)", 1.5 / (7 * 384), {},
        "https://arxiv.org/abs/2211.05100",
        "BLOOM paper, training: on average 1-2 GPU failures per week on 384 A100 GPUs (48 nodes); 1.5 used."),
    "opt175b-a100": FailurePreset(
        "OPT-175B, 992 A100 80GB (cloud)", 100 / (60 * 992), {},
        "https://arxiv.org/abs/2205.01068",
        "§2.5: hardware failures contributed to at least 35 manual restarts and the cycling of over 100 hosts over "
        "the course of 2 months, on 992 A100 GPUs; 100 host failures in 60 days used.", lower_bound=True),
}


@dataclass(frozen=True)
class WritePreset:
    name: str
    kind: str                       # parallel FS | object store | local NVMe
    GBps: float                     # aggregate write bandwidth the job sees (per_node: per node)
    per_node: bool
    source: str
    says: str


WRITE_PRESETS = {
    "tectonic-llama3": WritePreset(
        "Tectonic (Meta), Llama 3 checkpoints", "parallel FS", 2000.0, False, "https://arxiv.org/abs/2407.21783",
        "§3.3.1: 240 PB on 7,500 SSD servers, sustainable 2 TB/s, peak 7 TB/s (the sustained figure is used)."),
    "s3-per-node": WritePreset(
        "Amazon S3 from one 100 Gb/s instance", "object store", 12.5, True,
        "https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html",
        "S3 performance guidelines: an instance can reach up to 100 Gb/s to S3 (its network is the bound); "
        "12.5 GB/s per node is that upper bound, not a measurement."),
    "nvme-gen4-x4": WritePreset(
        "one local NVMe drive on PCIe Gen4 x4", "local NVMe", 7.88, True,
        "https://pcisig.com/specifications",
        "PCIe 4.0: 16 GT/s per lane, 128b/130b: 7.88 GB/s for x4 (helpers.core.specs.pcie_GBps) — the link bound; "
        "a drive's sustained write is lower (see its datasheet)."),
}


def mttf_h(n_gpus: int, failures_per_gpu_day: float) -> float:
    """Mean time to a job-stopping failure in hours: 24 ÷ (rate × GPUs) for independent failures."""
    if n_gpus < 1 or failures_per_gpu_day <= 0:
        raise ValueError(f"n_gpus={n_gpus}, failures_per_gpu_day={failures_per_gpu_day}: need ≥ 1 GPU and a rate > 0 "
                         f"(pick a preset: {sorted(FAILURE_PRESETS)})")
    return 24.0 / (failures_per_gpu_day * n_gpus)


def checkpoint_bytes_per_param(weights: str = "bf16", master: str | None = "fp32", moments: int = 2,
                               moment_dtype: str = "fp32", shards: int = 1) -> float:
    """Bytes per parameter that one rank writes: weights + optional fp32 master copy + ``moments`` optimizer states
    (Adam: 2), each in its dtype (``helpers.formulas.dtypes``), over ``shards`` ranks that split it (ZeRO/FSDP)."""
    if moments < 0 or shards < 1:
        raise ValueError(f"moments={moments}, shards={shards}: need moments ≥ 0 and shards ≥ 1")
    b = dtypes.bytes_per_element(weights) + (dtypes.bytes_per_element(master) if master else 0)
    return (b + moments * dtypes.bytes_per_element(moment_dtype)) / shards


@dataclass(frozen=True)
class LostWork:
    n_gpus: int
    mttf_h: float
    checkpoint_TB: float
    write_s: float                  # one checkpoint's stall
    interval_s: float               # Young's optimum
    lost_fraction: float            # writes + redone work + restarts, of wall time
    interruptions_per_day: float

    @property
    def goodput(self) -> float:
        return max(0.0, 1.0 - self.lost_fraction)


def lost_work(n_gpus: int, n_params: float, failures: str | float = "llama3-h100", write: str | float = "tectonic-llama3",
              n_nodes: int | None = None, bytes_per_param: float | None = None, restart_s: float = 600.0) -> LostWork:
    """Lost work of a job: failures (a preset name or failures per GPU-day), checkpoint of ``bytes_per_param``
    (default: bf16 weights + fp32 master + Adam, :func:`checkpoint_bytes_per_param`), written at a preset or a
    GB/s figure (per-node presets scale with ``n_nodes``, default GPUs ÷ 8), Young's interval, ``restart_s``
    (an assumption: 10 minutes to detect, reschedule and reload)."""
    rate = FAILURE_PRESETS[failures].failures_per_gpu_day if isinstance(failures, str) else float(failures)
    if isinstance(write, str):
        if write not in WRITE_PRESETS:
            raise ValueError(f"write={write!r}: use a GB/s number or one of {sorted(WRITE_PRESETS)}")
        w = WRITE_PRESETS[write]
        GBps = w.GBps * ((n_nodes or max(1, n_gpus // 8)) if w.per_node else 1)
    else:
        GBps = float(write)
    size = n_params * (checkpoint_bytes_per_param() if bytes_per_param is None else bytes_per_param)
    delta = size / (GBps * 1e9)
    m_s = mttf_h(n_gpus, rate) * 3600
    tau = checkpointing.young(delta, m_s)
    lost = checkpointing.young_waste_fraction(tau, delta, 1 / m_s, restart_s)
    return LostWork(n_gpus, m_s / 3600, size / 1e12, delta, tau, lost, rate * n_gpus)


def check_out_of_sample() -> list[dict]:
    """Published Llama 3 figures predicted from inputs that did not come from them: its 419 interruptions in 54 days
    from the BLOOM and OPT rates, and its effective training time (> 90 %, §3.3.4) from its own rate, its 405B
    checkpoint and Tectonic's sustained 2 TB/s."""
    rows = []
    for key in ("bloom-a100", "opt175b-a100"):
        p = FAILURE_PRESETS[key]
        pred = p.failures_per_gpu_day * 54 * 16_384
        rows.append({"published": "Llama 3: 419 interruptions in 54 days on 16,384 H100", "from": p.name,
                     "predicted": pred, "actual": 419.0, "error": pred / 419 - 1})
    lw = lost_work(16_384, 405e9)
    rows.append({"published": "Llama 3: effective training time > 90 % (a lower bound)",
                 "from": "Llama 3 rate, 14 B/param, Tectonic 2 TB/s, 10-min restarts", "predicted": lw.goodput,
                 "actual": 0.90, "error": lw.goodput / 0.90 - 1})
    return rows
