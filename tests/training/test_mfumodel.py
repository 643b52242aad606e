"""helpers.training.calc.mfumodel: MFU predicted from the configuration (model, sequence, GPU, layout, links),
fitted on a third of the published runs (all A100) and checked on the rest, on H100 runs, and leave-one-out.
Run with -s to see every out-of-sample error."""
import pytest

from helpers.training.calc import mfumodel as M

RUNS = M.load_runs()


def _show(title, preds):
    print(f"\n{title}")
    for p in preds:
        print(f"  {p.name:44s} {'fit' if p.fitted_on_it else '   '} published {p.published:8.3f} "
              f"predicted {p.predicted:8.3f} error {p.error:+6.1%}")
    s = M.summary(preds)
    print(f"  out of sample: n={s['n']} median {s['median']:.1%} worst {s['worst']:.1%} ({s['worst_run']}), "
          f"{s['within_10pct']} within 10 %")
    return s


def test_runs_are_sourced_and_a_third_is_fitted():
    assert len(RUNS) >= 20 and len({r.name for r in RUNS}) == len(RUNS)
    for r in RUNS:
        assert r.source.startswith("https://") and r.says
        assert r.metric in ("mfu", "tflops") and r.published > 0
    fit = [r for r in RUNS if r.fit]
    assert 0.25 <= len(fit) / len(RUNS) <= 0.4 and all("A100" in r.gpu for r in fit)
    l3 = next(r for r in RUNS if r.name == "Llama 3 405B 16384 GPUs seq 131072")
    assert (l3.layout["tp"], l3.layout["cp"], l3.layout["pp"], l3.layout["dp"], l3.published) == (8, 16, 16, 8, 0.38)


def test_out_of_sample_errors():
    fit, preds = M.check(RUNS)
    assert len(fit.fitted_on) == sum(r.fit for r in RUNS) and len(fit.fitted_on) <= 3 * len(RUNS) // 8 + 1
    print(f"\nfitted on {len(fit.fitted_on)} runs: {', '.join(fit.fitted_on)}\nconstants {fit.params}")
    s = _show("fitted on the marked third (A100), predicted on the rest", preds)
    assert s["n"] >= 20
    assert s["median"] <= 0.10                      # the goal (median ≤ 10 %) is met
    assert s["worst"] <= 0.35                       # the goal (worst ≤ 25 %) is NOT met: this only stops regressions
    a100 = M.summary([p for p in preds if "A100" in p.gpu])
    h100 = M.summary([p for p in preds if "H100" in p.gpu])
    print(f"  A100 held out: median {a100['median']:.1%} worst {a100['worst']:.1%}; "
          f"H100 (other generation): median {h100['median']:.1%} worst {h100['worst']:.1%}")
    assert a100["median"] <= 0.06 and a100["worst"] <= 0.20
    assert h100["median"] <= 0.12 and h100["worst"] <= 0.35
    tpu = [p for p in preds if p.gpu == "TPU v4"]                # fitted on A100s, checked on PaLM's TPU v4 run
    print(f"  TPU v4 (PaLM 540B): error {tpu[0].error:+.1%}")
    assert len(tpu) == 1 and abs(tpu[0].error) <= 0.12
    # a run's prediction is its published figure × (1 + error), and the step time is positive
    for p in preds:
        assert p.predicted == pytest.approx(p.published * (1 + p.error)) and p.step_time_s > 0


def test_leave_one_out():
    s = _show("leave-one-out over all runs (constants refitted without each run)", M.leave_one_out(RUNS))
    assert s["n"] == len(RUNS) and s["median"] <= 0.085 and s["worst"] <= 0.34


def test_model_moves_the_right_way():
    run = next(r for r in RUNS if r.name == "Megatron GPT 1008.0B (3072 GPUs)")
    p = M.Params(0.83, 76.0, 1.0)
    base = M.predict(run, p)
    assert 0.05 < base.bubble_share < 0.2                       # (p−1)/(m+p−1) with p = 64, m = 512
    slow = M.Params(0.83, 76.0, 0.5)                            # half the link bandwidth: slower
    assert M.predict(run, slow).predicted < base.predicted
    with pytest.raises(ValueError, match="unknown"):
        M.flops_per_token(M.LayoutRun("x", "H100 SXM", 8, 1e9, {**run.layout, "convention": "?"}, 1, "mfu", "", ""))
    with pytest.raises(ValueError, match="fit needs"):
        M.fit([])


def test_named_attention_kernels():
    """MosaicML's runs name Triton flash attention: on H100 it runs at FlashAttention-2's 35 % ÷ 1.9 of the peak,
    on A100 at 61.5 % ÷ 1.9; a run that names no kernel keeps the GEMM-rate assumption; an unknown one is refused."""
    h = next(r for r in RUNS if r.name == "MPT-7b s2048 8xH100 80GB")
    a = next(r for r in RUNS if r.name == "MPT-7b s2048 8xA100 80GB")
    assert h.layout["attn_kernel"] == a.layout["attn_kernel"] == "triton_flash"
    assert M.attention_rate(h) == pytest.approx(0.35 / 1.9 * h.hardware()[1])
    assert M.attention_rate(a) == pytest.approx(0.615 / 1.9 * a.hardware()[1])
    assert M.attention_rate(next(r for r in RUNS if r.name.startswith("Llama 3"))) is None
    # FlashAttention-3 instead of Triton flash: faster attention, higher predicted MFU
    fa3 = M.LayoutRun(h.name, h.gpu, h.n_gpus, h.n_params, {**h.layout, "attn_kernel": "fa3"}, h.published, h.metric,
                      h.source, h.says)
    p = M.Params(0.83, 76.0, 1.0)
    assert M.predict(fa3, p).predicted > M.predict(h, p).predicted
    bad = M.LayoutRun(a.name, a.gpu, 8, a.n_params, {**a.layout, "attn_kernel": "fa3"}, 1, "mfu", "", "")
    with pytest.raises(ValueError, match="no published rate"):
        M.attention_rate(bad)                                   # FlashAttention-3 is Hopper-only


def test_unfused_attention_moves_scores_through_hbm():
    """Without flash attention the s×s scores cost HBM time (Korthikanti et al. 2022 §4.1), so more heads or a longer
    sequence slow the step; a run without flash must say how many heads it has."""
    run = next(r for r in RUNS if r.name == "Megatron GPT 1.7B (32 GPUs)")
    assert run.layout["heads"] == 24 and not run.layout.get("flash") and run.layout["micro_batch"] == 16
    p = M.Params(0.88, 124.0, 1.0)
    more = M.LayoutRun(run.name, run.gpu, run.n_gpus, run.n_params, {**run.layout, "heads": 48}, run.published,
                       run.metric, run.source, run.says)
    assert M.predict(more, p).step_time_s > M.predict(run, p).step_time_s
    no_heads = {k: v for k, v in run.layout.items() if k != "heads"}
    with pytest.raises(ValueError, match="needs layout.heads"):
        M.predict(M.LayoutRun(run.name, run.gpu, run.n_gpus, run.n_params, no_heads, 1, "tflops", "", ""), p)
