"""The paged cache against the contiguous one token for token, the block allocator, Poisson arrivals and
TTFT/TPOT on a synthetic timeline."""
import numpy as np
import pytest
import torch

from helpers.serving import llama, llmdecode, pagedkv


def _tiny():
    return llama.build(llama.config("tiny"), "cpu", torch.float32, seed=0)


def test_paged_equals_contiguous_token_for_token():
    model = _tiny()
    g = torch.Generator().manual_seed(3)
    prompts = [torch.randint(0, 256, (n,), generator=g) for n in (5, 17, 9)]     # different lengths, block 4
    n_new = 7
    with torch.inference_mode():
        want, want_logits = [], []
        for p in prompts:                                                       # contiguous, one at a time
            sd = llmdecode.StaticDecoder(model, 1, 32)
            logits, _ = llama.prefill(model, p.view(1, -1), sd.k, sd.v)
            toks, ls = [int(logits.argmax())], [logits[0]]
            for pos in range(len(p), len(p) + n_new - 1):
                sd.tokens.fill_(toks[-1])
                sd.pos.fill_(pos)
                ls.append(sd.step()[0])
                toks.append(int(ls[-1].argmax()))
            want.append(toks)
            want_logits.append(torch.stack(ls))
        cache = pagedkv.PagedKVCache(model["cfg"], 64, 4, dtype=torch.float32)     # paged, all three in one batch
        got = [[int(pagedkv.prefill_paged(model, cache, i, p).argmax())] for i, p in enumerate(prompts)]
        got_logits = [[] for _ in prompts]
        for _ in range(n_new - 1):
            logits = pagedkv.decode_paged(model, cache, [0, 1, 2], torch.tensor([t[-1] for t in got]))
            for i in range(3):
                got[i].append(int(logits[i].argmax()))
                got_logits[i].append(logits[i])
    assert got == want
    for i in range(3):
        assert torch.allclose(torch.stack(got_logits[i]), want_logits[i][1:], atol=1e-4)
    # the block tables hold exactly ceil(len / 4) blocks, all distinct
    used = [b for t in cache.tables.values() for b in t]
    assert len(used) == len(set(used)) == sum(-(-(len(p) + n_new - 1) // 4) for p in prompts)


def test_blocks_reserved_and_released():
    cache = pagedkv.PagedKVCache(llama.config("tiny"), 4, 16)
    assert cache.reserve(0, 20) and cache.tables[0] == [0, 1]
    assert not cache.reserve(1, 40) and cache.tables[1] == []                   # 3 blocks needed, 2 free
    cache.release(0)
    assert cache.reserve(1, 40) and len(cache.tables[1]) == 3
    assert cache.slots(1, 15, 2) == [cache.tables[1][0] * 16 + 15, cache.tables[1][1] * 16]


def test_poisson_arrivals_seeded():
    a = pagedkv.poisson_arrivals(10.0, 2000, seed=1)
    assert np.array_equal(a, pagedkv.poisson_arrivals(10.0, 2000, seed=1))
    assert np.all(np.diff(a) > 0)
    assert np.mean(np.diff(a)) == pytest.approx(0.1, rel=0.1)                  # mean gap 1/rate
    with pytest.raises(ValueError):
        pagedkv.poisson_arrivals(0, 5)


def test_latency_summary_on_a_synthetic_timeline():
    # request 0: arrives 0, first token 0.1, 11 tokens by 1.1 -> TTFT 100 ms, TPOT 100 ms
    # request 1: arrives 0.5, first 0.55, 3 tokens by 0.65 -> TTFT 50 ms, TPOT 50 ms
    s = pagedkv.latency_summary([0, 0.5], [0.1, 0.55], [1.1, 0.65], [11, 3])
    assert s["ttft_ms_p50"] == pytest.approx(75) and s["tpot_ms_p50"] == pytest.approx(75)
    assert s["ttft_ms_p99"] == pytest.approx(50 + 0.99 * 50) and s["tpot_ms_p99"] == pytest.approx(99.5)
    with pytest.raises(ValueError):
        pagedkv.latency_summary([1.0], [0.5], [2.0], [3])


def test_run_load_joins_and_leaves():
    """Continuous batching with a fake clock: every request gets its tokens, later arrivals join a running batch."""
    model = _tiny()
    cache = pagedkv.PagedKVCache(model["cfg"], 32, 4, dtype=torch.float32)
    t = {"now": 0.0}

    def clock():
        t["now"] += 0.001
        return t["now"]
    prompts = [torch.randint(0, 256, (6,), generator=torch.Generator().manual_seed(i)) for i in range(4)]
    with torch.inference_mode():
        run = pagedkv.run_load(model, cache, [0.0, 0.0, 0.004, 0.5], prompts, [5, 3, 4, 2], 3, clock=clock)
    assert run.n_tokens == [5, 3, 4, 2]
    assert all(f >= a for f, a in zip(run.first_token_s, run.arrival_s))
    assert run.mean_batch > 1                                                   # sequences shared decode steps
    assert cache.tables == {} and len(cache.free) == 32                         # every block returned
