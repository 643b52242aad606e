"""The roofline model: ceilings and kernels placed by arithmetic intensity (chapter 28; used in 10, 15).

Attainable performance P = min(π, β·I) (Williams, Waterman & Patterson, CACM 52(4), 2009; the formula, the ridge
and the time bound are ``helpers.formulas.roofline``, the FLOPs and bytes ``helpers.formulas.flops``): π the compute
ceiling (FLOP/s, one per dtype), β a memory ceiling (B/s, one per level: HBM/DRAM and, in the hierarchical
roofline of Yang et al. 2020, L2/LLC), I = FLOPs ÷ bytes moved at that level. The *ridge point* π/β is the
intensity where a kernel stops being memory-bound.

    roof = roofline.from_spec(specs.lookup("NVIDIA H200"))            # datasheet ceilings
    live = roofline.from_bench(records, "this machine (measured)")    # ceilings measured by helpers.compute.bench
    ks = [roofline.gemm_kernel(8192, 8192, 8192, "bf16"), roofline.stream_kernel("triad", 2**28)]

The figure (plotly, with menus) and the ipywidgets explorer are ``helpers.figures.compute.roofline_figure`` and
``roofline_widget``.

Units: compute ceilings in TFLOP/s (10^12 FLOP/s), memory ceilings in GB/s (10^9 B/s), intensity in FLOP/byte.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from helpers.formulas import dtypes, flops
from helpers.formulas import roofline as bound


@dataclass(frozen=True)
class Roofline:
    device: str                                   # what the ceilings describe, e.g. "H200 SXM (datasheet)"
    compute_tflops: tuple[tuple[str, float], ...]  # (dtype, TFLOP/s), fastest last is not required
    memory_GBps: tuple[tuple[str, float], ...]     # (level, GB/s); the first is main memory (HBM/DRAM)
    source: str = ""

    def __post_init__(self):
        if not self.compute_tflops or not self.memory_GBps:
            raise ValueError(f"{self.device}: a roofline needs at least one compute and one memory ceiling")
        for name, v in (*self.compute_tflops, *self.memory_GBps):
            if not v > 0:
                raise ValueError(f"{self.device}: ceiling {name!r} = {v!r} must be > 0")

    @property
    def dtypes(self) -> list[str]:
        return [d for d, _ in self.compute_tflops]

    @property
    def levels(self) -> list[str]:
        return [lv for lv, _ in self.memory_GBps]

    def peak_tflops(self, dtype: str) -> float:
        for d, v in self.compute_tflops:
            if d == dtype:
                return v
        raise KeyError(f"{self.device} has no {dtype!r} ceiling; it has {self.dtypes}")

    def bw_GBps(self, level: str | None = None) -> float:
        level = level or self.levels[0]
        for lv, v in self.memory_GBps:
            if lv == level:
                return v
        raise KeyError(f"{self.device} has no {level!r} memory ceiling; it has {self.levels}")

    def attainable_tflops(self, intensity: float, dtype: str, level: str | None = None) -> float:
        """min(π, β·I): GB/s × FLOP/byte = GFLOP/s, hence the 1e-3 to TFLOP/s."""
        return bound.attainable_tflops(intensity, self.peak_tflops(dtype), self.bw_GBps(level))

    def ridge(self, dtype: str, level: str | None = None) -> float:
        """The intensity (FLOP/byte) where the slope meets the roof: π/β."""
        return bound.ridge_flop_per_byte(self.peak_tflops(dtype), self.bw_GBps(level))


@dataclass(frozen=True)
class Kernel:
    name: str
    flop: float
    traffic_bytes: float                 # bytes moved to/from main memory (or the level named in ``note``)
    dtype: str
    achieved_tflops: float | None = None  # measured rate, when there is one
    note: str = field(default="", compare=False)

    @property
    def intensity(self) -> float:
        return self.flop / self.traffic_bytes

    def time_s(self, roof: Roofline, level: str | None = None) -> float:
        """The roofline's time prediction: max(FLOPs ÷ π, bytes ÷ β)."""
        return bound.time_s(self.flop, self.traffic_bytes, roof.peak_tflops(self.dtype), roof.bw_GBps(level))

    def bound(self, roof: Roofline, level: str | None = None) -> str:
        return "compute" if self.intensity >= roof.ridge(self.dtype, level) else "memory"


# ---------------------------------------------------------------- ceilings

def from_spec(spec, dtypes=("fp32", "tf32", "bf16", "fp8")) -> Roofline:
    """Datasheet ceilings of a ``helpers.core.specs.GPUSpec`` (dtypes the datasheet leaves empty are left out;
    fp16 is left out by default because every datasheet in the table gives it the bf16 rate)."""
    comp = tuple((d, float(spec.peak_tflops(d))) for d in dtypes if spec.peak_tflops(d))
    return Roofline(f"{spec.name} (datasheet)", comp, (("HBM", float(spec.hbm_GBps)),), source=spec.source)


def from_bench(records, device: str) -> Roofline:
    """Measured ceilings from ``helpers.compute.bench`` records (objects or JSON dicts): the best GEMM per dtype
    (MAMF method) and the best STREAM bandwidth per level (HBM/DRAM, L2/LLC)."""
    g = lambda r, k: r[k] if isinstance(r, dict) else getattr(r, k)  # noqa: E731
    comp: dict[str, float] = {}
    for r in records:
        if g(r, "kind") == "gemm" and g(r, "method") == "mamf":
            comp[g(r, "dtype")] = max(comp.get(g(r, "dtype"), 0.0), g(r, "tflops"))
    gpu = any(not str(g(r, "device")).startswith("CPU") for r in records if g(r, "kind") == "membw")
    names = {"memory": "HBM" if gpu else "DRAM", "cache": "L2" if gpu else "LLC"}
    mem: dict[str, float] = {}
    for r in records:
        if g(r, "kind") == "membw":
            lv = names[g(r, "level")]
            mem[lv] = max(mem.get(lv, 0.0), g(r, "bw_GBps"))
    order = [d for d in dtypes.BYTES_PER_ELEMENT if d in comp]
    return Roofline(device, tuple((d, comp[d]) for d in order),
                    tuple((lv, mem[lv]) for lv in names.values() if lv in mem), source="helpers.compute.bench")


# ---------------------------------------------------------------- kernels, counted analytically

def gemm_kernel(m: int, n: int, k: int, dtype: str = "bf16", name: str | None = None) -> Kernel:
    """C = A·B: 2mnk FLOPs; each matrix read or written once (the ideal a tiled kernel approaches)."""
    return Kernel(name or f"GEMM {m}×{n}×{k}", flops.gemm_flops(m, n, k),
                  flops.gemm_bytes(m, n, k, dtypes.bytes_per_element(dtype)), dtype)


def stream_kernel(op: str, n: int, dtype: str = "fp32") -> Kernel:
    """A STREAM kernel on n elements, counted as STREAM counts it (helpers.compute.membw.OPS)."""
    words, n_flop = {"copy": (2, 0), "scale": (2, 1), "add": (3, 1), "triad": (3, 2), "dot": (2, 2)}[op]
    return Kernel(f"STREAM {op}", float(n_flop * n), float(words * n * dtypes.bytes_per_element(dtype)), dtype)


def elementwise_kernel(name: str, n: int, flops_per_element: float, words_per_element: float,
                       dtype: str = "bf16") -> Kernel:
    """Any element-wise op: LayerNorm ≈ 8 FLOPs and 2 words per element, GELU ≈ 14 and 2, a residual add 1 and 3."""
    return Kernel(name, flops_per_element * n, words_per_element * n * dtypes.bytes_per_element(dtype), dtype)


def kernels_from_bench(records, min_flop: float = 1.0) -> list[Kernel]:
    """One measured kernel per GEMM (best shape per dtype) and per STREAM op with FLOPs (copy has none)."""
    from helpers.compute import gemm as _gemm

    g = lambda r, k: r[k] if isinstance(r, dict) else getattr(r, k)  # noqa: E731
    out = []
    for dt in dtypes.BYTES_PER_ELEMENT:
        r = _gemm.best(records, dt)
        if r is not None:
            m, n, k = g(r, "m"), g(r, "n"), g(r, "k")
            b_in = dtypes.bytes_per_element(dt)
            b_out = 2 if dt == "fp8" else b_in                              # fp8 GEMMs here write bf16
            out.append(Kernel(f"GEMM {dt} {g(r, 'shape')}", flops.gemm_flops(m, n, k),
                              flops.gemm_bytes(m, n, k, b_in, b_out), dt, g(r, "tflops")))
    for r in records:
        if g(r, "kind") == "membw" and g(r, "flop") >= min_flop and g(r, "backend") != "numpy":
            out.append(Kernel(f"{g(r, 'op')} ({g(r, 'level')})", float(g(r, "flop")), float(g(r, "size_bytes")),
                              "fp32", g(r, "flop") / g(r, "time_s") / 1e12, note=g(r, "backend")))
    return out
