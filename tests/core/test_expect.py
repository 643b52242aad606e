"""helpers.core.expect: band lookups by the names nvidia-smi prints, every verdict path, the book's H200 records."""
import json
from pathlib import Path

import pytest

from helpers.core import expect, specs
from helpers.core.expect_causes import family

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "assets" / "measurements" / "h200"


@pytest.mark.parametrize("name, row", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"), ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"), ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA L40S", "L40S"), ("NVIDIA L4", "L4"), ("NVIDIA B200", "B200 (HGX)"),
    ("AMD Instinct MI300X", "MI300X"), ("cpu", "cpu"), ("CPU: Intel(R) Xeon(R)", "cpu")])
def test_gpu_names_as_nvidia_smi_prints_them(name, row):
    assert expect.gpu_key(name) == row
    assert expect.bands(name), f"no band rows for {name}"


def test_40_and_80_gb_sxm_and_pcie_are_different_rows():
    a80 = expect.band("gemm_bf16_tflops", "NVIDIA A100-SXM4-80GB")
    a40 = expect.band("gemm_bf16_tflops", "NVIDIA A100-PCIE-40GB")
    assert a80.gpu != a40.gpu and a80.typical != a40.typical
    assert expect.band("hbm_triad_GBps", "NVIDIA H100 PCIe").typical < expect.band("hbm_triad_GBps", "NVIDIA H100 80GB HBM3").typical
    assert expect.gpu_key("NVIDIA A100-SXM4-40GB MIG 1g.5gb") is None        # a slice is not its parent


def test_every_row_is_sourced_ordered_and_honestly_labelled():
    rows = expect.all_bands()
    assert len(rows) >= 60
    metrics = {b.metric for b in rows}
    assert set(expect.LABELS) <= metrics
    for b in rows:
        assert b.source.startswith("http") and b.quote and b.bibkey, b
        assert b.kind in ("measured", "derived", "datasheet"), b
        assert b.low <= b.typical <= b.high, b
        if b.kind == "derived":
            assert b.fraction and len(b.fraction) == 3 and b.rule, b
        if b.kind == "measured":
            assert b.fraction is None, b          # a derived row is never called measured
        if b.gpu not in ("cpu", "L4", "MI300X"):
            assert specs.lookup(b.gpu, warn=False) is not None, b.gpu


def test_every_band_source_has_a_bibliography_entry():
    bib = (ROOT / "references.bib").read_text()
    for key in {b.bibkey for b in expect.all_bands()}:
        assert "{" + key + "," in bib, key


def test_real_workload_bands():
    # training MFU of a ~1B model on one node: measured on H100 and A100 (llm-foundry), derived for the H200
    h100, a100, h200 = (expect.band("llm_train_mfu_1b_node", g) for g in
                        ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA H200"))
    assert h100.kind == a100.kind == "measured" and h200.kind == "derived"
    assert "41.82" in h100.quote and "59.86" in a100.quote and {h100.bibkey, a100.bibkey, h200.bibkey} == {h100.bibkey}
    assert h200.typical == h100.typical and h200.high == a100.typical      # the H200 lies between the two
    # a large-scale MFU (communication included) stays a separate metric from the one-node band
    assert expect.band("llm_train_mfu", "NVIDIA H100 80GB HBM3").bibkey != h100.bibkey
    for metric in ("llm_decode_batch1_fraction_of_hbm_bound", "llm_decode_batch64_fraction_of_hbm_bound"):
        b = expect.band(metric, "NVIDIA H200")
        assert b.kind == "derived" and b.high <= 1.0                         # never above the bound itself


def test_within_below_above_and_no_band():
    assert expect.judge(794.0, "gemm_bf16_tflops", "NVIDIA H200").verdict == "within"
    below = expect.judge(500.0, "gemm_bf16_tflops", "NVIDIA H200")
    assert below.verdict == "below" and below.causes and "throttl" in below.causes[0]
    above = expect.judge(7000.0, "hbm_triad_GBps", "NVIDIA H200")
    assert above.verdict == "above" and "cache-resident" in above.causes[0]
    ring = expect.judge(470.0, "allreduce_busbw_8gpu_ring_GBps", "NVIDIA H100 80GB HBM3")
    assert ring.verdict == "above" and "NVLS" in ring.causes[0]
    assert "algbw" in " ".join(ring.causes)
    unknown_gpu = expect.judge(1.0, "gemm_bf16_tflops", "Mystery GPU 9000")
    assert unknown_gpu.verdict == "no band" and "unknown GPU" in unknown_gpu.reason
    unknown_metric = expect.judge(1.0, "frobnication_rate", "NVIDIA H200")
    assert unknown_metric.verdict == "no band" and "unknown metric" in unknown_metric.reason
    assert expect.judge(1.0, "gemm_fp8_tflops", "NVIDIA A100-SXM4-80GB").verdict == "no band"   # no fp8 on A100


def test_power_capped_record_is_below_with_that_cause_first():
    rec = {"kind": "gemm", "method": "mamf", "dtype": "bf16", "m": 8192, "n": 8192, "k": 8192, "tflops": 520.0,
           "device": "NVIDIA H100 80GB HBM3", "sm_clock_MHz_median": 1980, "throttle_reasons": ["sw_power_cap"]}
    v = expect.judge_document({"kind": "bench", "provenance": {"device": "NVIDIA H100 80GB HBM3", "gpu_count": 8},
                               "records": [rec]})[0]
    assert v.verdict == "below" and v.gpu == "H100 SXM"
    assert "sw_power_cap" in v.causes[0] and v.causes[0].endswith("(seen in the record)")
    assert "likely: power cap" in expect.line(rec, "gemm_bf16_tflops", "NVIDIA H100 80GB HBM3")


def test_line_reads_like_the_book():
    s = expect.line(812.0, "gemm_bf16_tflops", "NVIDIA H200")
    assert s.startswith("H200 SXM bf16 GEMM (MAMF) 812 TFLOP/s: within the band 715–874 (measured, ml-engineering")
    assert "no band" in expect.line(1.0, "gemm_bf16_tflops", "Mystery GPU")
    assert expect.line(30.0, "hbm_triad_GBps", "cpu").startswith("cpu memory STREAM triad 30 GB/s: within the band 15.4–46.1 (derived, JEDEC")
    assert family("d2h_pinned_GBps") == "h2d"


def test_the_book_h200_records_judged():
    vs = expect.judge_files(sorted(str(p) for p in H200.glob("*.json")))
    judged = {(v.file, v.metric): v for v in vs if v.verdict != "no band"}
    # every GPU microbenchmark of the reference machine falls within its band
    for key in [("bench.json", "gemm_bf16_tflops"), ("bench.json", "gemm_fp8_tflops"), ("bench.json", "hbm_triad_GBps"),
                ("membw.json", "hbm_triad_GBps"), ("transfer.json", "h2d_pinned_GBps"), ("transfer.json", "d2h_pinned_GBps"),
                ("gemm_sweep.json", "gemm_bf16_tflops"), ("gemm_sweep.json", "gemm_fp8_tflops")]:
        if key in judged:
            assert judged[key].verdict == "within", judged[key]
    # the real workloads: a 1B Llama trained on one H200 (PaLM's count) and an 8B-shaped decode at batch 1 and 64
    for key in [("llm_train.json", "llm_train_mfu_1b_node"), ("llm_decode.json", "llm_decode_batch1_fraction_of_hbm_bound"),
                ("llm_decode.json", "llm_decode_batch64_fraction_of_hbm_bound")]:
        assert judged[key].verdict == "within", judged[key]
    # … and what was judged is the best bf16-mixed run (fp8 is not held to a bf16 band) and the best decode path
    train = json.loads((H200 / "llm_train.json").read_text())["records"]
    bf16 = [r["mfu_palm"] for r in train if r["status"] == "ok" and r["precision"] == "bf16-mixed"]
    assert judged[("llm_train.json", "llm_train_mfu_1b_node")].value == max(bf16)
    assert max(r["mfu_palm"] for r in train if r["status"] == "ok") > max(bf16)          # the fp8 run, left out
    decode = json.loads((H200 / "llm_decode.json").read_text())["records"]
    for batch, metric in ((1, "llm_decode_batch1_fraction_of_hbm_bound"), (64, "llm_decode_batch64_fraction_of_hbm_bound")):
        best = max(r["fraction_of_hbm_bound"] for r in decode if r.get("batch") == batch and r.get("fraction_of_hbm_bound"))
        assert judged[("llm_decode.json", metric)].value == best
    # the two below are explained by the record itself: a toy GPT and one VM disk
    if ("gpt_mfu.json", "llm_train_mfu") in judged:
        v = judged[("gpt_mfu.json", "llm_train_mfu")]
        assert v.verdict == "below" and "toy model" in v.causes[0]
    if ("iobench.json", "nvme_seq_read_GBps") in judged:
        v = judged[("iobench.json", "nvme_seq_read_GBps")]
        assert v.verdict == "below" and v.causes[0].endswith("(seen in the record)")
    shm = [v for v in vs if v.file == "iobench_shm.json"]
    assert all(v.verdict == "no band" and "tmpfs" in v.reason for v in shm)


def test_cli(tmp_path, capsys, monkeypatch):
    from helpers.core import results
    monkeypatch.setattr(results, "provenance", lambda command=None: {"device": "test"})   # skip device detection
    assert expect.main(["--bands", "--gpu", "NVIDIA H200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["records"] and all({"gpu", "metric", "low", "typical", "high", "unit", "kind", "source"} <= set(r)
                                  for r in doc["records"])
    assert expect.main(["--bands", "--gpu", "Mystery"]) == 2
    assert expect.main([]) == 2
    assert expect.main([str(tmp_path / "missing.json")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert expect.main([str(bad)]) == 2
    capsys.readouterr()
    assert expect.main(["--json", str(H200 / "transfer.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["verdict"] for r in out["records"]} == {"within"}


def test_band_on_a_figure():
    from helpers.core import plotting
    from helpers.figures import expect as expectfig
    fig = plotting.figure(title="t", yaxis_title="TFLOP/s")
    fig.add_scatter(x=[0, 1], y=[790, 800])
    expectfig.add_band(fig, "gemm_bf16_tflops", "NVIDIA H200")
    rect = [s for s in fig.layout.shapes if s.type == "rect"][0]
    assert (rect.y0, rect.y1) == (715.1, 874.0)
    fig2 = expectfig.add_band(plotting.figure(), "gemm_bf16_tflops", "Mystery GPU")
    assert not fig2.layout.shapes and "no band" in fig2.layout.annotations[0].text
    bars = expectfig.band_figure("hbm_triad_GBps")
    assert {t.name for t in bars.data if t.type == "bar"} == {"measured band (low–high)", "derived band (low–high)"}
    with pytest.raises(ValueError):
        expectfig.band_figure("nope")
