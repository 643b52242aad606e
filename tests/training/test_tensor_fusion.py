"""Horovod-style tensor fusion (helpers/training/parallel/tensor_fusion.py) against dist.all_reduce, over the book's ring."""
import pytest

from helpers.network import ringallreduce
from helpers.training.parallel import tensor_fusion


def test_plan_buckets_rule():
    assert tensor_fusion.plan_buckets([4, 4, 4], threshold_bytes=0) == [[0], [1], [2]]
    assert tensor_fusion.plan_buckets([4, 4, 4], threshold_bytes=8) == [[0, 1], [2]]
    assert tensor_fusion.plan_buckets([4, 20, 4], threshold_bytes=8) == [[0], [1], [2]]   # too big: alone
    assert tensor_fusion.plan_buckets([4, 4, 4], ["f32", "f16", "f16"], 100) == [[0], [1, 2]]  # one dtype per buffer
    with pytest.raises(ValueError, match="threshold"):
        tensor_fusion.plan_buckets([4], threshold_bytes=-1)


def test_single_process_average_identity():
    import torch

    ts = [torch.arange(3.0), torch.ones(2, 2)]
    st = tensor_fusion.fused_allreduce(ts, lambda b: None, threshold_bytes=1 << 20, world_size=1)
    assert st.n_allreduce_calls == 1 and st.buffer_bytes == 28 and torch.equal(ts[0], torch.arange(3.0))


def test_fused_ring_equals_dist_all_reduce():
    recs = tensor_fusion.compare(ringallreduce.ring_allreduce, 2, thresholds=(0, 65536, tensor_fusion.HOROVOD_DEFAULT_THRESHOLD_BYTES))
    calls = [r["allreduce_calls"] for r in recs]
    assert calls[0] == recs[0]["n_tensors"] and calls[-1] == 1 and calls == sorted(calls, reverse=True)
    assert all(r["max_abs_diff_vs_dist"] < 1e-6 for r in recs)
    assert [r["messages_sent_rank0"] for r in recs] == [2 * c for c in calls]           # 2(p-1) per ring, p=2
    assert len({r["bytes_sent_rank0"] for r in recs}) == 1                               # fusion saves messages, not bytes
