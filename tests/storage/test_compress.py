"""helpers.storage.compress: codecs round-trip, byte shuffle, the pipeline model and the read pipeline (chapter 23)."""
import pytest

from helpers.storage import compress


def test_every_available_codec_round_trips():
    data = b"the same line again and again\n" * 500
    av = compress.available()
    assert av["zlib"] is None
    for name, why in av.items():
        if why is None:
            r = compress.measure(data, name, input_name="text", repeats=1)
            assert r.ratio > 5 and r.compress_MBps > 0 and r.decompress_MBps > 0
        else:
            assert "pip install" in why


def test_unknown_codec_is_named():
    with pytest.raises(ValueError, match="'brotli'"):
        compress.codec("brotli")


def test_byte_shuffle_is_invertible_and_groups_bytes():
    data = bytes(range(12))
    s = compress.byte_shuffle(data, 4)
    assert s[:3] == bytes([0, 4, 8]) and compress.byte_unshuffle(s, 4) == data
    with pytest.raises(ValueError, match="itemsize=4"):
        compress.byte_shuffle(b"abcde", 4)


def test_pipeline_model():
    assert compress.pipeline_model_MBps(100, 3, 1000) == 300
    assert compress.pipeline_model_MBps(1000, 3, 500) == 500
    assert compress.pipeline_model_MBps(100, 2, 200, overlapped=False) == pytest.approx(100)
    with pytest.raises(ValueError):
        compress.pipeline_model_MBps(0, 2, 100)


def test_read_pipeline_delivers_all_bytes_and_cleans_up(tmp_path):
    data = (b"abc" * 1000 + bytes(range(256))) * 400
    recs = compress.read_pipeline(tmp_path, data, "zlib", chunk_bytes=2**16)
    assert list(tmp_path.iterdir()) == []
    assert {(r.method, r.cache) for r in recs} == {("raw read", "cold"), ("raw read", "warm"),
                                                   ("read + zlib decompress", "cold"),
                                                   ("read + zlib decompress", "warm")}
    assert all(r.delivered_bytes == len(data) for r in recs)
    z = [r for r in recs if r.method != "raw read"][0]
    assert z.stored_bytes < len(data) / 5


def test_trained_weights_are_deterministic():
    a, _ = compress.trained_mlp(steps=2)
    b, _ = compress.trained_mlp(steps=2)
    assert all((x == y).all() for x, y in zip(a.parameters(), b.parameters()))
