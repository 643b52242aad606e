"""The decode bound's byte count by hand, the static-buffer decode step against a plain re-run, prefill FLOPs,
the CUDA-graph path against eager (GPU only) and the llmserve CLI on the tiny model (CPU)."""
import json

import pytest
import torch

from helpers.formulas import decode as dform
from helpers.serving import llama, llmdecode, llmserve

L8 = llama.config("llama3-8b")


def test_llama3_8b_params_and_weight_bytes_by_hand():
    d, L, V, ff = 4096, 32, 128256, 14336
    per_layer = d * 4096 + d * 1024 * 2 + 4096 * d + 3 * d * ff + 2 * d      # q, k, v, o, SwiGLU, 2 norms
    assert per_layer == 218_112_000
    total = 2 * V * d + L * per_layer + d                                     # embeddings + LM head (untied)
    assert L8.params() == total == 8_030_261_248                              # Meta's "8B"
    assert 2 * total / 1e9 == pytest.approx(16.06, abs=0.005)                 # bf16 weights ≈ 16.06 GB
    # a decode step reads every matrix and the LM head, but only B rows of the embedding table
    assert L8.weight_bytes_read(1) == 2 * (total - V * d + d)
    assert L8.weight_bytes_read(1) / 1e9 == pytest.approx(15.01, abs=0.01)


def test_decode_bytes_and_bound_by_hand():
    kv_per_token = 2 * 32 * 8 * 128 * 2                                       # K and V, layers, heads, dim, bf16
    assert kv_per_token == 131_072
    b = dform.decode_bytes_per_step(L8.weight_bytes_read(1), 32, 8, 128, 1024)
    assert b == L8.weight_bytes_read(1) + kv_per_token * 1024
    assert dform.hbm_bound_tokens_per_s(1, b, 4800) == pytest.approx(4800e9 / b)
    assert 315 < dform.hbm_bound_tokens_per_s(1, b, 4800) < 320              # ≈ 317 tokens/s at batch 1
    b64 = dform.decode_bytes_per_step(L8.weight_bytes_read(64), 32, 8, 128, 64 * 1024)
    assert dform.hbm_bound_tokens_per_s(64, b64, 4800) == pytest.approx(64 * 4800e9 / b64)
    with pytest.raises(ValueError):
        dform.hbm_bound_tokens_per_s(0, b, 4800)


def test_prefill_flops_per_token_by_hand():
    cfg = llama.config("tiny")
    T = 16
    mat = cfg.n_layers * (cfg.layer_params() - 2 * cfg.d_model)
    want = 2 * mat + 4 * T * cfg.d_model * cfg.n_layers / 2 + 2 * cfg.vocab * cfg.d_model / T
    assert llmdecode.prefill_flops_per_token(cfg, T) == pytest.approx(want)


def _tiny(dtype=torch.float32):
    return llama.build(llama.config("tiny"), "cpu", dtype, seed=0)


def test_static_step_matches_full_recompute():
    """Decode with the in-place static cache == running the whole sequence through prefill again (greedy)."""
    model = _tiny()
    prompt = torch.randint(0, 256, (2, 5), generator=torch.Generator().manual_seed(1))
    sd = llmdecode.StaticDecoder(model, 2, 16)
    with torch.inference_mode():
        out = sd.generate(prompt, 6)
        seq = prompt
        for i in range(6):
            logits, _ = llama.prefill(model, seq)
            if i:
                assert torch.allclose(logits, prev_logits, atol=1e-4)   # noqa: F821 — set below
            nxt = logits.argmax(-1, keepdim=True)
            assert torch.equal(nxt[:, 0], out[:, i])
            seq = torch.cat([seq, nxt], 1)
            if i < 5:
                sd.tokens.copy_(nxt[:, 0])
                sd.pos.fill_(seq.shape[1] - 1)
                prev_logits = sd.step()


def test_static_buffers_are_reused():
    """The step allocates no new cache or inputs: the buffers a graph would capture keep their storage."""
    sd = llmdecode.StaticDecoder(_tiny(), 1, 8)
    ptrs = [t.data_ptr() for t in (sd.tokens, sd.pos, sd.k, sd.v)]
    with torch.inference_mode():
        for p in range(3):
            sd.pos.fill_(p)
            sd.step()
    assert [t.data_ptr() for t in (sd.tokens, sd.pos, sd.k, sd.v)] == ptrs
    assert sd.k[:, :, :, :3].abs().sum() > 0 and sd.k[:, :, :, 3:].abs().sum() == 0   # written in place, at pos


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU (CPU build of torch here)")
def test_graph_equals_eager_on_gpu():
    model = llama.build(llama.config("tiny"), "cuda", torch.float32)
    prompt = torch.randint(0, 256, (2, 5), device="cuda")
    eager = llmdecode.StaticDecoder(model, 2, 16).generate(prompt, 6)
    g = llmdecode.StaticDecoder(model, 2, 16)
    g.capture()
    assert torch.equal(g.generate(prompt, 6, graph=True), eager)


def test_bench_decode_cpu_record():
    r = llmdecode.bench_decode(_tiny(torch.bfloat16), 2, 16, "eager", 2, (10.0, "test"))
    assert r.kind == "llm_decode" and r.path == "eager" and r.tokens_per_s > 0
    assert r.fraction_of_hbm_bound == pytest.approx(r.tokens_per_s / r.hbm_bound_tokens_per_s)
    g = llmdecode.bench_decode(_tiny(), 2, 16, "graph", 2, (10.0, "test"))
    assert g.tokens_per_s is None and "GPU" in g.note


def test_cli_tiny(tmp_path, capsys):
    out = tmp_path / "llm.json"
    assert llmserve.main(["--model", "tiny", "--batch", "1", "--context", "16", "--steps", "2", "--paths",
                          "eager,paged", "--rates", "50", "--requests", "4", "--max-new", "4", "--prefill", "8",
                          "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    kinds = [r["kind"] for r in doc["records"]]
    assert doc["kind"] == "llm_decode" and kinds == ["llm_decode", "llm_decode", "llm_prefill"]
    assert doc["records"][1]["path"] == "paged" and doc["records"][1]["ttft_ms_p50"] > 0
    assert 0 < doc["records"][2]["mfu"]


def test_cli_bad_input_exits_2():
    from helpers.core import cli
    assert cli.run(llmserve.main, ["--model", "gpt5"]) == 2


def test_full_cache_attention_equals_grouped_when_cache_full():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, h, t, 16, generator=g) for h, t in ((8, 1), (2, 12), (2, 12)))
    full = torch.ones(1, 12, dtype=torch.bool)
    assert torch.allclose(llama.full_cache_attention(q, k, v), llama.grouped_attention(q, k, v, full), atol=1e-5)


def test_gemv_records_by_hand():
    """Each weight shape once, the bytes by hand, the 'all' row the per-step sum; no decode-bound field, so the
    decode bands of helpers.core.expect never judge a lone matrix product."""
    cfg = llama.config("tiny")
    recs = llmserve.bench_gemv(_tiny(), 3, (10.0, "test"), min_time_s=0.01)
    by = {r.weight: r for r in recs}
    assert list(by) == ["wqkv", "wo", "w13", "w2", "lm_head", "all"] and {r.kind for r in recs} == {"llm_gemv"}
    d, hd = cfg.d_model, cfg.head_dim
    assert (by["wqkv"].out_features, by["wqkv"].in_features) == ((cfg.n_heads + 2 * cfg.n_kv_heads) * hd, d)
    assert by["w13"].bytes_moved == 4 * (2 * cfg.d_ff * d + 3 * (d + 2 * cfg.d_ff))      # fp32: W + x + y
    assert by["lm_head"].per_step == 1 and by["w2"].per_step == cfg.n_layers
    assert by["all"].time_us == pytest.approx(sum(r.per_step * r.time_us for r in recs[:-1]))
    assert by["all"].bytes_moved == sum(r.per_step * r.bytes_moved for r in recs[:-1])
    for r in recs:
        assert r.fraction_of_bw == pytest.approx(r.bytes_moved / (r.time_us * 1e-6) / 1e9 / 10.0)
        assert r.batch == 3 and not r.graph and not hasattr(r, "fraction_of_hbm_bound")


def test_cli_gemv_only(tmp_path):
    out = tmp_path / "gemv.json"
    assert llmserve.main(["--model", "tiny", "--paths", "gemv", "--batch", "1,2", "--prefill", "0", "--dtype", "fp32",
                          "--out", str(out)]) == 0
    recs = json.loads(out.read_text())["records"]
    assert [r["kind"] for r in recs] == ["llm_gemv"] * 12 and [r["batch"] for r in recs] == [1] * 6 + [2] * 6
    from helpers.core import expect
    assert not [v for v in expect.judge_document(json.loads(out.read_text()), "llm_decode.json")
                if v.metric.startswith("llm_decode")]
