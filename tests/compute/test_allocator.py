import os

import pytest
import torch

from helpers.compute import allocator


@pytest.mark.skipif(torch.cuda.is_available(), reason="CPU behaviour")
def test_cpu_says_it_needs_a_gpu():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        allocator.fragmentation_demo()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.skipif("expandable_segments" in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                    reason="the demo's expectations are for the default allocator configuration")
def test_fragmentation_visible_on_gpu():
    s = {x.step[0]: x for x in allocator.fragmentation_demo()}
    assert s["3"].free_in_reserved_MiB >= 512 and s["3"].largest_free_block_MiB < 96
    assert s["4"].reserved_MiB > s["3"].reserved_MiB            # 96 MiB did not fit in any hole
    assert s["5"].reserved_MiB > s["5"].allocated_MiB           # the holes stay reserved
