"""helpers.training.profiling.bottleneck: where a training step's time goes, by operator (chapter 15)."""
import pytest

from helpers.training.profiling import bottleneck


def test_mlp_step_profile_and_summary():
    step = bottleneck.mlp_step(batch=16, width=32, depth=2)
    rows = bottleneck.profile(step, steps=2, top=8)
    assert rows and all(0 < r.share <= 1 for r in rows) and sum(r.share for r in rows) <= 1 + 1e-9
    assert any(r.category == "matmul" for r in rows)
    s = bottleneck.summary(rows)
    assert s["matmul_share"] + s["other_share"] == pytest.approx(sum(r.share for r in rows))
    with pytest.raises(ValueError, match="at least one"):
        bottleneck.profile(step, steps=0)
