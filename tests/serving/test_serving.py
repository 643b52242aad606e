"""Chapter 19: KV cache vs published figures, paged allocation, batching schedules, the HTTP server, INT8, ONNX."""
import threading

import pytest

from helpers.serving import batching, kvcache, quant, server
from helpers.training.models import tiny


def test_kv_formula_matches_the_vllm_paper():
    rows = kvcache.check_published()
    assert rows and rows[0]["ratio"] == 1.0                     # 800 KB per token, exactly
    assert all(0.95 < r["ratio"] < 1.1 for r in rows)


def test_paged_allocator():
    pa = kvcache.PagedAllocator(4, block_tokens=4)
    assert pa.append(0, 5) and pa.reserved_slots() == 8 and pa.used_slots() == 5
    assert not pa.append(1, 9) and 1 not in pa.tables          # refused, nothing changed
    pa.release(0)
    assert len(pa.free) == 4
    f = kvcache.fragmentation()
    assert f[1].requests_admitted > f[0].requests_admitted and f[1].waste_frac < f[0].waste_frac
    with pytest.raises(ValueError):
        kvcache.kv_bytes_per_token(0, 1, 1)


def test_static_vs_continuous_steps():
    w = [1, 10, 1, 10]
    st, co = batching.simulate(w, 2, 1.0, 0.0)
    assert st.steps == 20 and co.steps == 12 and co.total_s < st.total_s


def test_real_run_matches_the_schedule_and_server_cleans_up():
    w = batching.workload(6, 2, 6, seed=1)
    dec = batching.TinyDecoder(d_model=32, n_layers=1, seq_len=16)
    real = batching.run_real(w, 3, dec)
    model = batching.simulate(w, 3, 1.0, 0.0)
    assert [r.steps for r in real] == [m.steps for m in model]
    before = threading.active_count()
    with server.serve(dec, 3) as (url, sched):
        r = server.load_test(url, sched, w, concurrency=3)
    assert r.tokens == sum(w) and threading.active_count() == before


def test_int8_and_onnx():
    kw = dict(d_model=64, n_layers=1, seq_len=16)
    m = tiny.build("gpt", seed=0, **kw)
    x, _ = tiny.make_batch("gpt", 4, seed=1, **kw)
    fp32, int8 = quant.compare_int8(m, x)
    assert int8.size_bytes < fp32.size_bytes and int8.top1_agreement > 0.8
    ok, why = quant.onnx_available()
    if not ok:
        pytest.skip(why)
    o = quant.onnx_roundtrip(m, x)
    assert max(o["max_abs_diff_by_batch"].values()) < 1e-4
