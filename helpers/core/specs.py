"""GPU datasheet figures as data, with a source for every row (chapter 02, "Choosing hardware").

    from helpers.core import specs
    specs.lookup("NVIDIA H200")           # → GPUSpec for "H200 SXM"  (nvidia-smi names are aliases)
    specs.lookup("Mystery GPU")           # → None, with a warning: never a guessed number
    specs.table()                         # every row as a pandas DataFrame with derived ratios

The figures live in ``helpers/core/data/gpu_specs.yaml``; this module only reads them and derives ratios
(ridge point = peak FLOP/s ÷ memory bandwidth, FLOP/s per watt). Imports no other helper.
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


def _norm(s: str) -> str:
    return "".join(ch for ch in s.lower() if ch.isalnum())


def lookup(name: str, *, warn: bool = True) -> GPUSpec | None:
    """The spec row whose name or alias matches ``name`` exactly (case and punctuation ignored).

    No fuzzy matching: "H100 NVL" is not silently taken for "H100 PCIe". Unknown → None and a warning."""
    key = _norm(name)
    for s in all_specs():
        if key in {_norm(s.name), *(_norm(a) for a in s.aliases)}:
            return s
    if warn:
        warnings.warn(f"GPU {name!r} is not in the spec table ({DATA.name}): peaks are 'unknown'. "
                      "Add a row with its datasheet URL to compare against it.", stacklevel=2)
    return None


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
        rows.append(d)
    return pd.DataFrame(rows).set_index("name")
