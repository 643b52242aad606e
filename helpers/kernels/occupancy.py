"""Occupancy: how many warps of a kernel can live on one SM at once, from its registers, shared memory and block
size (chapter 25).

The calculation is the one in NVIDIA's ``cuda_occupancy.h`` (the header behind the CUDA Occupancy Calculator and
``cudaOccupancyMaxActiveBlocksPerMultiprocessor``). Resident blocks per SM are the minimum of four limits:

* **blocks**: the SM's maximum resident blocks (32 on 7.0–9.0);
* **warps**: maximum resident warps (64) ÷ warps per block;
* **registers**: registers are given to each warp in units of 256 (``regs/thread × 32`` rounded up), and an SM's
  65,536 registers sit in 4 sub-partitions, so warps per SM = 4 × ⌊16,384 ÷ registers per warp⌋, then ÷ warps per block;
* **shared memory**: (static + dynamic + the 1 KiB the system reserves per block on 8.0 and later), rounded up to
  128 bytes, into the SM's shared-memory capacity (164 KiB on A100, 228 KiB on H100/H200).

Occupancy = resident warps ÷ maximum warps. ``DOC_EXAMPLES`` holds the worked examples of NVIDIA's own documents;
the tests check the calculator against every one. On a GPU with cupy, :func:`driver_check` asks the CUDA driver
the same question for a real kernel.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SMLimits:
    name: str
    compute_capability: str
    max_warps: int
    max_blocks: int
    max_threads_per_block: int
    regs_per_sm: int
    max_regs_per_thread: int
    reg_alloc_unit: int            # registers, per warp
    sub_partitions: int
    smem_per_sm_bytes: int         # largest shared-memory carve-out
    smem_per_block_max_bytes: int  # opt-in maximum per block
    smem_alloc_unit_bytes: int
    smem_reserved_per_block_bytes: int
    source: str


_CG = "CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' table"
ARCHS = {
    "6.1": SMLimits("Pascal (GTX 10x0, P40)", "6.1", 64, 32, 1024, 65536, 255, 256, 4, 96 * 1024, 48 * 1024, 256, 0, _CG),
    "7.0": SMLimits("Volta (V100)", "7.0", 64, 32, 1024, 65536, 255, 256, 4, 96 * 1024, 96 * 1024, 256, 0, _CG),
    "8.0": SMLimits("A100", "8.0", 64, 32, 1024, 65536, 255, 256, 4, 164 * 1024, 163 * 1024, 128, 1024, _CG),
    "9.0": SMLimits("H100 / H200", "9.0", 64, 32, 1024, 65536, 255, 256, 4, 228 * 1024, 227 * 1024, 128, 1024, _CG),
}
GPUS = {"A100": "8.0", "H100": "9.0", "H200": "9.0", "V100": "7.0"}


@dataclass(frozen=True)
class Occupancy:
    arch: str
    threads_per_block: int
    regs_per_thread: int
    smem_per_block_bytes: int
    warps_per_block: int
    blocks_by_warps: int
    blocks_by_regs: int
    blocks_by_smem: int
    blocks_per_sm: int
    limiter: str                   # which limit gave the minimum
    active_warps: int
    occupancy_pct: float


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def limits(arch: str) -> SMLimits:
    cc = GPUS.get(arch, arch)
    if cc not in ARCHS:
        raise ValueError(f"arch={arch!r}: use a compute capability {sorted(ARCHS)} or a GPU {sorted(GPUS)}")
    return ARCHS[cc]


def occupancy(arch: str, threads_per_block: int, regs_per_thread: int, smem_per_block_bytes: int = 0) -> Occupancy:
    """Resident blocks and warps per SM for one kernel launch configuration (``cuda_occupancy.h``'s method)."""
    L = limits(arch)
    if not 1 <= threads_per_block <= L.max_threads_per_block:
        raise ValueError(f"threads_per_block={threads_per_block}: use 1…{L.max_threads_per_block}")
    if not 1 <= regs_per_thread <= L.max_regs_per_thread:
        raise ValueError(f"regs_per_thread={regs_per_thread}: use 1…{L.max_regs_per_thread} (more spill to local memory)")
    if not 0 <= smem_per_block_bytes <= L.smem_per_block_max_bytes:
        raise ValueError(f"smem_per_block_bytes={smem_per_block_bytes}: a block may use at most "
                         f"{L.smem_per_block_max_bytes} bytes on {L.name}")
    warps = -(-threads_per_block // 32)
    by_blocks = L.max_blocks
    by_warps = L.max_warps // warps
    regs_per_warp = _round_up(regs_per_thread * 32, L.reg_alloc_unit)
    if regs_per_warp * warps > L.regs_per_sm:
        by_regs = 0
    else:
        warps_per_sp = (L.regs_per_sm // L.sub_partitions) // regs_per_warp
        by_regs = warps_per_sp * L.sub_partitions // warps
    if smem_per_block_bytes == 0 and L.smem_reserved_per_block_bytes == 0:
        by_smem = by_blocks
    else:
        per_block = _round_up(smem_per_block_bytes + L.smem_reserved_per_block_bytes, L.smem_alloc_unit_bytes)
        by_smem = L.smem_per_sm_bytes // per_block
    cands = {"blocks per SM": by_blocks, "warps per SM": by_warps, "registers": by_regs, "shared memory": by_smem}
    limiter = min(cands, key=cands.get)
    blocks = cands[limiter]
    return Occupancy(L.compute_capability, threads_per_block, regs_per_thread, smem_per_block_bytes, warps,
                     by_warps, by_regs, by_smem, blocks, limiter, blocks * warps, 100.0 * blocks * warps / L.max_warps)


# Worked examples from NVIDIA's documents, as (arch, threads, regs, smem, expected blocks per SM, expected %, source)
DOC_EXAMPLES = [
    ("7.0", 128, 37, 0, 12, 75.0, "CUDA C++ Best Practices Guide, 'Calculating Occupancy': 128-thread blocks with "
     "37 registers per thread on compute capability 7.0 give 75 % occupancy with 12 active blocks"),
    ("7.0", 320, 37, 0, 4, 62.5, "same section: 320-thread blocks with the same 37 registers give four blocks per SM "
     "(the guide rounds 40/64 warps to 63 %)"),
    ("6.1", 512, 64, 0, 2, 50.0, "CUDA C++ Programming Guide, 'Multiprocessor Level' (6.x): 64 registers, 512-thread "
     "blocks → two blocks (32 warps) fit, as 2 × 512 × 64 registers exactly fill the SM"),
    ("6.1", 512, 65, 0, 1, 25.0, "same paragraph: one register more (65) → only one block (16 warps) is resident"),
]


def sweep(arch: str, regs_per_thread: int, smem_per_block_bytes: int = 0, block_sizes=(64, 128, 256, 512, 1024)):
    """Occupancy over block sizes for fixed registers and shared memory (the calculator's first graph)."""
    return [occupancy(arch, b, regs_per_thread, smem_per_block_bytes) for b in block_sizes]


def driver_check(kernel_source: str, name: str, threads_per_block: int, dyn_smem_bytes: int = 0):
    """On a GPU with cupy: (driver's blocks per SM, this calculator's Occupancy) for a real compiled kernel, using
    the kernel's own register and shared-memory counts. Returns (None, reason) without one."""
    if not kernel_source.strip():
        return None, "no kernel source given"
    try:
        import cupy as cp
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 — no cupy or no GPU: say so
        return None, f"no cupy GPU here ({type(e).__name__}): the driver check runs on the H200"
    k = cp.RawKernel(kernel_source, name)
    k.compile()
    drv = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, threads_per_block, dyn_smem_bytes)
    major, minor = cp.cuda.Device().compute_capability[:1], cp.cuda.Device().compute_capability[1:]
    ours = occupancy(f"{major}.{minor}", threads_per_block, max(1, k.num_regs),
                     k.shared_size_bytes + dyn_smem_bytes)
    return drv, ours
