"""helpers.figures.workloads: the per-item models against hand arithmetic from their stated inputs."""
import pytest

from helpers.core import specs
from helpers.figures import workloads as W


def test_llm_training_matches_hand_arithmetic():
    w = W.llm_training(n_params=7e9, n_gpus=1024, global_batch_tokens=4e6)
    assert w.flops_per_item == 6 * 7e9
    # ring all-reduce of BF16 grads, shared by the 4e6/1024 tokens each GPU did in the step
    assert w.network_bytes_per_item == pytest.approx(2 * 1023 / 1024 * 2 * 7e9 / (4e6 / 1024))
    assert w.storage_bytes_per_item == pytest.approx(4 + 16 * 7e9 / (1000 * 4e6))
    p = W.profile(w, "H200 SXM", mfu=0.4)
    h200 = specs.lookup("H200 SXM")
    assert p.items_per_s == pytest.approx(0.4 * h200.bf16_tflops * 1e12 / 42e9)
    assert p.network_GBps == pytest.approx(p.items_per_s * w.network_bytes_per_item / 1e9)


def test_hierarchical_allreduce_cuts_nic_traffic():
    flat = W.profile(W.llm_training(n_gpus=1024)).network_GBps
    hier = W.profile(W.llm_training(n_gpus=1024, gpus_per_node=8)).network_GBps
    assert hier < flat / 7


def test_stencil_is_memory_bound_and_video_sends_nothing():
    st = W.profile(W.hpc_stencil(n=512), mfu=0.4, hbm_efficiency=0.8)
    h200 = specs.lookup("H200 SXM")
    assert st.binds == "HBM" and st.items_per_s == pytest.approx(0.8 * h200.hbm_GBps * 1e9 / 24)
    assert st.flop_per_hbm_byte == pytest.approx(1 / 3)        # Williams et al. 2009: 0.33
    v = W.profile(W.video_analytics())
    assert v.network_GBps == 0 and v.flop_per_network_byte is None and v.binds == "compute"
    assert W.video_analytics().storage_bytes_per_item == pytest.approx(8e6 / 8 / 30)


def test_table_and_figure():
    ws = [W.llm_training(), W.video_analytics(), W.hpc_stencil()]
    t = W.profile_table(ws)
    assert list(t.index) == [w.name for w in ws] and (t["TFLOP/s"] > 0).all()
    assert len(W.shares_figure(ws).data) == 4


@pytest.mark.parametrize("call", [lambda: W.llm_training(n_gpus=0), lambda: W.llm_training(n_gpus=10, gpus_per_node=8),
                                  lambda: W.hpc_stencil(n=1), lambda: W.video_analytics(fps=0),
                                  lambda: W.profile(W.hpc_stencil(), mfu=1.5), lambda: W.profile(W.hpc_stencil(), "nope")])
def test_bad_inputs_raise(call):
    with pytest.raises(ValueError):
        call()
