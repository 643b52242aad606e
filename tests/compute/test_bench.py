"""helpers.compute.bench, helpers.compute.gemm, helpers.compute.membw on a CPU (the GPU paths run in `make test-gpu`). No speed asserts."""
import json

import pytest
import torch

from helpers.compute import bench, gemm, membw


def test_gemm_records_mamf_and_plain():
    skipped = []
    recs = gemm.measure(dtypes=("fp32", "tf32"), shapes=((64, 64, 64),), device="cpu", budget_s=0.01,
                        skipped=skipped)
    assert [r.method for r in recs] == ["mamf", "plain"]
    r = recs[0]
    assert r.kind == "gemm" and r.flop == 2 * 64**3 and r.repeats >= 5
    assert r.tflops == pytest.approx(r.flop / r.time_s / 1e12)
    assert r.pct_of_peak is None and "no datasheet peak" in r.peak_note
    assert skipped and skipped[0][0] == "tf32"
    assert gemm.ratio_to_plain(recs, "fp32") == pytest.approx(recs[0].tflops / recs[1].tflops)


def test_gemm_mamf_call_computes_a_times_b_transposed():
    A, B, C, _ = gemm._operands(32, 48, 16, "fp32", torch.device("cpu"), 0)
    mamf, plain = gemm._calls(A, B, C, "fp32")
    mamf()
    torch.testing.assert_close(C, A @ B.T)
    torch.testing.assert_close(plain(), A @ B.T)
    _, plain_nn = gemm._calls(A, B, C, "fp32", "nn")
    torch.testing.assert_close(plain_nn(), A @ B.T)


def test_gemm_bad_inputs():
    with pytest.raises(ValueError, match="multiples of 16"):
        gemm.measure(dtypes=("fp32",), shapes=((100, 64, 64),), device="cpu")
    with pytest.raises(ValueError, match="dtype='int4'"):
        gemm.unsupported("int4", torch.device("cpu"))


def test_membw_stream_counts_and_backends():
    skipped = []
    recs = membw.measure(backends=("torch", "numpy", "cupy"), levels=("memory",), n_elements=2**12,
                         repeats=2, device="cpu", skipped=skipped)
    assert {r.backend for r in recs} == {"torch", "numpy"} and skipped[0][0] == "cupy"
    triad = next(r for r in recs if r.op == "triad" and r.backend == "torch")
    assert triad.size_bytes == 3 * 4 * 2**12 and triad.flop == 2 * 2**12
    assert triad.bw_GBps == pytest.approx(triad.size_bytes / triad.time_s / 1e9)
    assert "two passes" in next(r for r in recs if r.op == "triad" and r.backend == "numpy").note


def test_membw_cache_level_multiplies_calls():
    recs = membw.measure(backends=("torch",), levels=("cache",), n_cache=2**10, repeats=2, inner=5,
                         device="cpu", ops=("copy",))
    assert recs[0].size_bytes == 2 * 4 * 2**10 * 5 and recs[0].level == "cache"
    with pytest.raises(ValueError, match="op='copy2'"):
        membw.measure(ops=("copy2",), device="cpu")


def test_copy_uses_transfer_and_says_why_no_peak():
    recs = bench.copy(sizes_bytes=(2**16,), repeats=2, device="cpu")
    assert recs[0].direction == "h2h" and recs[0].pct_of_peak is None and "no host↔device link" in recs[0].peak_note


def test_cli_json(capsys):
    assert bench.main(["hpl", "--n", "64", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kind"] == "bench-hpl" and doc["provenance"]["device"] and doc["summary"]
    with pytest.raises(SystemExit):
        bench.main(["gemm", "--shapes", "64x64"])
