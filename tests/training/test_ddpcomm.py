"""helpers.training.parallel.ddpcomm: bucket counting and the compression hooks on 2 gloo ranks (chapter 08)."""
import pytest

from helpers.training.parallel import ddpcomm


def test_buckets_and_compression():
    buckets, comp = ddpcomm.labs(2, (0.1, 25.0), ("allreduce", "fp16", "powersgd_r1"), timeout_s=180,
                                 bucket_kw=dict(width=128, depth=4, batch=8, warmup=0, iters=1),
                                 compression_kw=dict(steps=12))
    small, large = buckets
    assert small["n_buckets"] == 2 and large["n_buckets"] == 1    # 4 layers of 64.5 KiB: a bucket closes once ≥ 0.1 MB
    assert small["grad_bytes"] == large["grad_bytes"] == 4 * (128 * 128 + 128) * 4
    for b in buckets:
        assert 0 <= b["hidden_fraction"] <= 1 and b["step_s"] > 0
    by = {r["hook"]: r for r in comp}
    assert by["allreduce"]["bytes_per_step"] == 6532 * 4                 # every fp32 gradient, once
    assert by["fp16"]["bytes_vs_allreduce"] == pytest.approx(0.5)
    assert by["powersgd_r1"]["bytes_vs_allreduce"] < 0.1
    assert all(0.25 < r["test_accuracy"] <= 1 for r in comp)            # better than chance (4 classes)


def test_bad_arguments():
    with pytest.raises(ValueError, match="include 'allreduce'"):
        ddpcomm.compression(hooks=("fp16",))
    with pytest.raises(TypeError, match="accepts"):
        ddpcomm.bucket_sweep(widht=3)
