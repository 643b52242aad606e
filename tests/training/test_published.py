"""helpers.training.calc.published: the published runs (each with its source) and the out-of-sample check of the
performance model against them (chapter 28)."""
import statistics

import pytest

from helpers.training.calc import published as pub


def test_published_runs_file_has_sources_and_known_gpus():
    runs = pub.load_runs()
    assert len(runs) >= 10 and len({r.name for r in runs}) == len(runs)
    for r in runs:
        assert r.source.startswith("https://") and r.says and r.spec is not None
        assert r.total_gpu_hours or r.mfu_published or r.tflops_published      # something to compare
    l65 = next(r for r in runs if r.name == "LLaMA-65B")
    assert (l65.n_gpus, l65.gpu_hours, l65.days) == (2048, 1_022_362, 21)      # LLaMA §2.4 and Table 15
    gpt3 = next(r for r in runs if r.name == "GPT-3 175B")
    assert gpt3.gpu_hours is None and gpt3.total_gpu_hours == 10_000 * 14.8 * 24  # derived, flagged


def test_check_published_is_out_of_sample():
    rows = pub.check_published()
    assert len(rows) == len(pub.PUBLISHED_RUNS)
    steady = {}
    for r in rows:
        if r.published_gpu_hours:
            assert r.predicted_gpu_hours == pytest.approx(r.published_gpu_hours * (1 + r.gpu_hours_error))
            run = next(x for x in pub.PUBLISHED_RUNS if x.name == r.name)
            steady[r.name] = run.implied_mfu() / (r.goodput or 1)
    for r in rows:   # the fitted MFU is the median of the OTHER runs, never the run itself
        assert r.predicted_mfu == pytest.approx(statistics.median(v for k, v in steady.items() if k != r.name))
    gpt3 = next(r for r in rows if r.name == "GPT-3 175B")
    assert "fp16" in gpt3.note and gpt3.days_error is not None       # V100: fp16 peak, never a TypeError
    opt = next(r for r in rows if r.name == "OPT-175B")
    assert opt.gpu_hours_error is None and opt.mfu_error is not None
    s = pub.error_summary(rows)
    assert s["gpu_hours_error"]["n"] == sum(r.gpu_hours_error is not None for r in rows)
    assert s["gpu_hours_error"]["worst"] >= s["gpu_hours_error"]["median"]
    fixed = pub.check_published(mfu=0.4, failures_per_gpu_day=0)
    l2_70 = next(r for r in fixed if r.name == "Llama 2 70B")
    assert l2_70.gpu_hours_error == pytest.approx(1_869_658 / 1_720_320 - 1, rel=1e-4)
