"""The decode-step byte count and the bandwidth bound, by hand."""
import pytest

from helpers.formulas import decode


def test_kv_read_bytes_by_hand():
    # Llama 3 8B: 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 B = 131,072 B per token of context
    assert decode.kv_read_bytes(32, 8, 128, 1) == 131_072
    assert decode.kv_read_bytes(32, 8, 128, 64 * 1024) == 131_072 * 65_536


def test_bound_by_hand():
    b = decode.decode_bytes_per_step(1e9, 1, 1, 1, 0)
    assert b == 1e9
    assert decode.hbm_bound_tokens_per_s(4, b, 100) == pytest.approx(400.0)     # 4 tokens per 10 ms


@pytest.mark.parametrize("args", [(0, 1, 1, 1, 0), (1e9, 0, 1, 1, 0), (1e9, 1, 1, 1, -1)])
def test_bad_input(args):
    with pytest.raises(ValueError):
        decode.decode_bytes_per_step(*args)
