"""``python -m helpers llmtrain`` on the CPU: records with every field, skipped backends and fp8, a real loss curve."""
import json
import sys

import torch

from helpers.training.profiling import llmprofile, llmsetup, llmtrain

FIELDS = ("config", "params", "params_non_embedding", "precision", "compile", "sdpa", "checkpoint", "seq_len",
          "batch", "tokens_per_step", "step_time_ms", "tokens_per_s", "flops_per_token", "mfu", "peak_memory_GiB",
          "sm_clock_MHz_median", "power_W_median", "throttle_reasons", "status", "data", "loss_curve")


def test_cli_tiny_three_steps(tmp_path):
    out = tmp_path / "llm.json"
    rc = llmtrain.main(["--config", "tiny", "--seq-len", "32", "--batch", "2", "--steps", "3", "--warmup", "1",
                        "--sdpa", "math,efficient", "--precision", "fp32,fp8-mixed", "--checkpoint", "1",
                        "--profile", "--out", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "llm_train" and len(doc["records"]) == 4
    r = {(x["sdpa"], x["precision"]): x for x in doc["records"]}
    ok = r["math", "fp32"]
    assert all(f in ok for f in FIELDS) and ok["status"] == "ok"
    assert ok["tokens_per_step"] == 64 and ok["timed_steps"] == 3 and len(ok["loss_curve"]) == 5
    assert ok["step_time_ms"] > 0 and 0 < ok["mfu"] < 1 and "CPU" in ok["peak_source"]
    assert ok["checkpoint"] is True and "text" in ok["data"]
    assert set(ok["profile"]) >= {"data_ms", "forward_ms", "backward_ms", "optimizer_ms", "kernel_share"}
    assert ok["profile"]["kernel_ms_per_step"]["matmul"] > 0
    assert r["math", "fp8-mixed"]["status"].startswith("skipped: fp8")
    assert r["efficient", "fp32"]["status"].startswith("skipped: SDPA backend efficient")   # no CPU kernel
    # --append adds to the same document
    assert llmtrain.main(["--seq-len", "16", "--batch", "1", "--steps", "1", "--warmup", "1", "--sdpa", "cudnn",
                          "--append", "--out", str(out)]) == 0
    doc2 = json.loads(out.read_text())
    assert len(doc2["records"]) == 5 and doc2["records"][-1]["status"].startswith("skipped")
    assert doc2["earlier_runs"][0]["date_utc"] == doc["provenance"]["date_utc"]


def test_fp8_skipped_without_torchao(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchao", None)             # import torchao → ImportError
    monkeypatch.setitem(sys.modules, "torchao.float8", None)
    assert "CPU" in llmsetup.fp8_unavailable(torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda d=None: (9, 0))
    why = llmsetup.fp8_unavailable(torch.device("cuda", 0))
    assert why.startswith("torchao is not importable")


def test_loss_decreases_on_the_books_text():
    base = llmtrain.LLMTrainResult("tiny", 0, 0, "fp32", False, "flash", False, 32, 4, 128, 1)
    r = llmtrain.run_one(base, torch.device("cpu"), steps=10, warmup=1, data="text", lr=3e-3)
    assert r.status == "ok" and "bytes of" in r.data
    first, last = sum(r.loss_curve[:3]) / 3, sum(r.loss_curve[-3:]) / 3
    assert last < first - 0.5, r.loss_curve                   # from ln 256 ≈ 5.5 toward the bytes' entropy


def test_kernel_kinds():
    assert llmprofile.kind_of("flash_fwd_kernel") == "attention"
    assert llmprofile.kind_of("sm90_xmma_gemm_bf16bf16_bf16f32") == "matmul"
    assert llmprofile.kind_of("nvjet_tst_128x256_64x4") == "matmul"
    assert llmprofile.kind_of("void at::native::_fused_adamw_kernel") == "optimizer"
    assert llmprofile.kind_of("triton_poi_fused_mul_silu_0") == "other"


def test_bad_input():
    import pytest
    with pytest.raises(ValueError, match="--append needs --out"):
        llmtrain.main(["--append"])
    with pytest.raises(ValueError, match="byte-level"):
        llmsetup.Tokens("text", 100, 1, 8, torch.device("cpu"))
