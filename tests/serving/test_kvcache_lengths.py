"""helpers.serving.kvcache with published request-length distributions: the vLLM paper's Fig. 2 KV-cache shares
predicted out of sample from ShareGPT's mean lengths (run with -s to see the errors)."""
import numpy as np
import pytest

from helpers.serving import kvcache as K


def test_length_distributions_keep_their_published_means_and_caps():
    p, o = K.sample_lengths("sharegpt", 50_000, 100_000, seed=0)           # no cap in effect
    assert np.mean(p) == pytest.approx(161.31, rel=0.03) and np.mean(o) == pytest.approx(337.99, rel=0.03)
    p, o = K.sample_lengths("alpaca", 1000, 2048)
    assert (p >= 1).all() and (o >= 1).all() and (p + o <= 2048).all()
    assert all(d["source"] for d in K.LENGTH_DISTRIBUTIONS.values())
    with pytest.raises(ValueError, match="uniform"):
        K.sample_lengths("zipf", 10, 100)


def test_vllm_fig2_out_of_sample():
    rows = K.check_vllm_fig2()
    for r in rows:
        print(f"\n{r.scheme:38s} predicted {r.token_share:.3f}  Fig. 2 {r.published:.3f} ({r.error:+.1%});"
              f"  without external frag. {r.published_no_external:.3f} ({r.error_no_external:+.1%})")
    by = {r.scheme: r for r in rows}
    assert abs(by["paged blocks (vLLM)"].error) < 0.03                  # 96.3 % of the cache holds tokens
    assert abs(by["reserve next power of 2 (Orca Pow2)"].error_no_external) < 0.05
    assert abs(by["reserve final length (Orca Oracle)"].error_no_external) < 0.10
    assert -0.30 < by["reserve max_len (Orca Max)"].error < -0.15        # low: the model's worst row, stated
    shares = [r.token_share for r in rows]
    assert shares == sorted(shares)                                     # Max < Pow2 < Oracle < paged


def test_fragmentation_takes_a_distribution():
    uni = K.fragmentation(lengths="uniform")
    share = K.fragmentation()                                           # default: ShareGPT lengths
    assert uni[0].requests_admitted == share[0].requests_admitted == 8192 // 1024
    assert share[1].requests_admitted > share[0].requests_admitted
    long = K.token_share("longbench-en", max_len=32_768)
    assert long[0].token_share > K.token_share("sharegpt", max_len=32_768)[0].token_share
