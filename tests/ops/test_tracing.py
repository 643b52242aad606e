"""helpers.ops.tracing: a profiler trace of one training step, summarised as the top operators (chapter 12)."""
from helpers.ops import tracing


def test_profile_step_top_ops_and_a_trace():
    top, trace_bytes = tracing.profile_step(steps=1, batch=4, width=16, top=5)
    assert len(top) == 5 and trace_bytes > 0
    assert list(top.columns) == ["op", "calls", "self_cpu_us", "cpu_total_us", "self_device_us"]
    assert top.attrs["steps"] == 1 and top[top.attrs["sorted_by"]].is_monotonic_decreasing
