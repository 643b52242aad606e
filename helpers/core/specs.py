"""GPU datasheet figures as data, with a source for every row (chapter 02, "Choosing hardware").

    from helpers.core import specs
    specs.lookup("NVIDIA H200")           # → GPUSpec for "H200 SXM"  (nvidia-smi / NVML names are aliases)
    specs.lookup("NVIDIA A100-SXM4-40GB") # → the 40 GB row, never the 80 GB one
    specs.lookup("Mystery GPU")           # → None, with a warning: never a guessed number
    specs.lookup("V100").training_peak()  # → (125.0, "no bf16 ... fp16 peak used"): never a TypeError
    specs.table()                         # every row as a pandas DataFrame with derived ratios

The figures live in ``helpers/core/data/gpu_specs.yaml``; this module only reads them and derives ratios
(ridge point = peak FLOP/s ÷ memory bandwidth, FLOP/s per watt). Imports no other helper.

Memory units: ``memory_GB`` is the vendor's *nominal* capacity ("141GB"), which is neither 10^9 nor 2^30 bytes
exactly; ``memory_reported_MiB`` is what the driver reports (nvidia-smi ``memory.total``, MiB = 2^20 B) in a
public output or a recording named in the row's notes. Arithmetic that depends on the size uses ``memory_bytes``
(the reported size where known).
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data" / "gpu_specs.yaml"
DTYPES = ("fp64", "fp64_tc", "fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class GPUSpec:
    name: str
    aliases: tuple[str, ...]
    architecture: str
    year: int
    fp64_tflops: float | None
    fp64_tc_tflops: float | None
    fp32_tflops: float | None
    tf32_tflops: float | None
    bf16_tflops: float | None
    fp16_tflops: float | None
    fp8_tflops: float | None
    int8_tops: float | None
    memory_GB: float
    memory_type: str
    hbm_GBps: float
    nvlink_GBps: float | None
    pcie_gen: int
    pcie_lanes: int
    tdp_W: float
    source: str
    notes: str = ""
    memory_reported_MiB: float | None = None   # driver-reported total (MiB = 2^20 B); notes name the output

    @property
    def memory_bytes(self) -> float:
        """Bytes the driver reports when a public output or recording gives it, else the nominal ``memory_GB``
        read as 10^9 B (below the real size for HBM parts: H200 "141GB" reports 150,754,820,096 B)."""
        if self.memory_reported_MiB:
            return self.memory_reported_MiB * 2**20
        return self.memory_GB * 1e9

    def training_peak(self, dtype: str = "bf16") -> tuple[float, str]:
        """Dense peak (TFLOP/s) for mixed-precision training in ``dtype`` and a note: a card without bf16
        (Volta, Turing) trains in fp16, so its fp16 peak is used and the note says so. Raises ValueError, naming
        the card, when neither is published."""
        p = self.peak_tflops(dtype)
        if p:
            return float(p), ""
        if dtype == "bf16" and self.fp16_tflops:
            return float(self.fp16_tflops), (f"{self.name} has no bf16 peak ({self.architecture}): its fp16 "
                                             f"peak {self.fp16_tflops:g} TFLOP/s is used (fp16 mixed precision)")
        raise ValueError(f"{self.name} has no published {dtype} peak in {DATA.name}: pick another dtype "
                         f"(it has {[d for d in DTYPES if self.peak_tflops(d)]})")

    def peak_tflops(self, dtype: str) -> float | None:
        """Dense peak for ``dtype`` (one of DTYPES), or None when the datasheet gives none."""
        if dtype not in DTYPES:
            raise ValueError(f"dtype={dtype!r}: use one of {DTYPES}")
        return getattr(self, f"{dtype}_tflops")

    def ridge_flop_per_byte(self, dtype: str = "bf16") -> float | None:
        """Arithmetic intensity where the roofline's slope meets its flat roof: peak FLOP/s ÷ bytes/s."""
        p = self.peak_tflops(dtype)
        return None if p is None else p * 1e12 / (self.hbm_GBps * 1e9)

    def tflops_per_W(self, dtype: str = "bf16") -> float | None:
        p = self.peak_tflops(dtype)
        return None if p is None else p / self.tdp_W

    @property
    def pcie_GBps(self) -> float:
        return pcie_GBps(self.pcie_gen, self.pcie_lanes)


# PCIe per-lane transfer rates (GT/s) and line encodings, from the PCI-SIG specifications.
_PCIE = {1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
         5: (32.0, 128 / 130), 6: (64.0, 242 / 256)}


def pcie_GBps(gen: int, lanes: int = 16) -> float:
    """Raw one-direction PCIe bandwidth in GB/s (10^9 B/s) after line encoding, before protocol overhead
    (TLP headers cost a further ~5-15%). Gen5 x16 → 63.0 GB/s each way."""
    if gen not in _PCIE:
        raise ValueError(f"PCIe gen {gen!r}: known generations are {sorted(_PCIE)}")
    gts, enc = _PCIE[gen]
    return gts * lanes * enc / 8


@lru_cache(maxsize=1)
def all_specs() -> tuple[GPUSpec, ...]:
    rows = yaml.safe_load(DATA.read_text())
    names = {f.name for f in fields(GPUSpec)}
    out = []
    for r in rows:
        unknown = set(r) - names
        if unknown:
            raise ValueError(f"{DATA.name}: row {r.get('name')!r} has unknown keys {sorted(unknown)}")
        if not r.get("source", "").startswith("http"):
            raise ValueError(f"{DATA.name}: row {r.get('name')!r} has no source URL")
        r["aliases"] = tuple(r.get("aliases", ()))
        out.append(GPUSpec(**r))
    return tuple(out)


_VENDOR_PREFIXES = ("nvidia", "tesla")


def _norm(s: str) -> str:
    """Lower case, letters and digits only, without the vendor/brand word NVML prints in front
    ("NVIDIA A10" and "A10", "Tesla V100-SXM2-32GB" and "V100-SXM2-32GB" are one key)."""
    key = "".join(ch for ch in s.lower() if ch.isalnum())
    for p in _VENDOR_PREFIXES:
        if key.startswith(p) and len(key) > len(p):
            key = key[len(p):]
    return key


@lru_cache(maxsize=1)
def _index() -> dict[str, GPUSpec]:
    idx: dict[str, GPUSpec] = {}
    for s in all_specs():
        for n in (s.name, *s.aliases):
            k = _norm(n)
            if k in idx and idx[k] is not s:
                raise ValueError(f"{DATA.name}: name {n!r} is given to both {idx[k].name!r} and {s.name!r}")
            idx[k] = s
    return idx


def lookup(name: str, *, warn: bool = True) -> GPUSpec | None:
    """The spec row whose name or alias matches ``name`` exactly (case, punctuation and a leading "NVIDIA" or
    "Tesla" ignored), as NVML, nvidia-smi and torch print it.

    No fuzzy matching: "NVIDIA H100 NVL" is not silently taken for "H100 PCIe", nor a 40 GB part for an 80 GB
    one. A MIG slice ("NVIDIA A100-SXM4-40GB MIG 1g.5gb") is not its parent GPU: its peaks are a fraction of
    the card's. Unknown → None and a warning that says why."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"GPU name {name!r}: pass the name nvidia-smi or NVML prints, e.g. 'NVIDIA H200'")
    if " mig " in f" {name.lower()} ":
        if warn:
            warnings.warn(f"GPU {name!r} is a MIG slice: the spec table holds whole GPUs only, and a slice has a "
                          "fraction of its parent's SMs and memory bandwidth.", stacklevel=2)
        return None
    s = _index().get(_norm(name))
    if s is None and warn:
        warnings.warn(f"GPU {name!r} is not in the spec table ({DATA.name}): peaks are 'unknown'. "
                      "Add a row with its datasheet URL to compare against it.", stacklevel=2)
    return s


def table(dtype: str = "bf16"):
    """All rows as a DataFrame with derived columns for ``dtype``: ridge point and TFLOP/s per watt."""
    import pandas as pd

    rows = []
    for s in all_specs():
        d = asdict(s)
        d.pop("aliases")
        d[f"ridge_{dtype}_flop_per_byte"] = s.ridge_flop_per_byte(dtype)
        d[f"{dtype}_tflops_per_W"] = s.tflops_per_W(dtype)
        d["pcie_GBps_per_direction"] = round(s.pcie_GBps, 1)
        d["memory_bytes"] = s.memory_bytes
        rows.append(d)
    return pd.DataFrame(rows).set_index("name")
