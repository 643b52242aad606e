"""helpers.kernels.occupancy against NVIDIA's documented worked examples."""
import pytest

from helpers.kernels import occupancy as occ
from helpers.kernels.kbench import occupancy_rows


@pytest.mark.parametrize("arch,threads,regs,smem,blocks,pct,src", occ.DOC_EXAMPLES)
def test_documented_examples(arch, threads, regs, smem, blocks, pct, src):
    o = occ.occupancy(arch, threads, regs, smem)
    assert o.blocks_per_sm == blocks and o.occupancy_pct == pytest.approx(pct), src
    assert o.limiter == "registers"


def test_shared_memory_limit_on_hopper():
    # 48 KiB + 1 KiB reserved per block into 228 KiB → 4 blocks; 8 warps each → 32 warps = 50 %
    o = occ.occupancy("H200", 256, 32, 48 * 1024)
    assert o.blocks_per_sm == 4 and o.limiter == "shared memory" and o.occupancy_pct == 50
    assert occ.occupancy("A100", 1024, 32).blocks_per_sm == 2


def test_rows_and_errors():
    rows = occupancy_rows()
    assert rows and all(r.agrees for r in rows)
    with pytest.raises(ValueError, match="regs_per_thread=300"):
        occ.occupancy("H100", 128, 300)
    with pytest.raises(ValueError, match="arch='B300'"):
        occ.occupancy("B300", 128, 32)
    assert occ.driver_check("", "k", 128)[0] is None
