"""helpers.network.ringallreduce: the ring from send/recv equals dist.all_reduce on 2, 3 and 4 ranks (chapter 08)."""
import numpy as np
import pytest

from helpers.core import launch
from helpers.network import ringallreduce as ra


@pytest.mark.parametrize("p", [2, 3, 4, 5])
def test_schedule_computes_the_sum(p):
    rng = np.random.default_rng(0)
    data = [list(rng.integers(-9, 9, size=p)) for _ in range(p)]      # rank r holds chunks data[r][0..p-1]
    want = [sum(data[r][c] for r in range(p)) for c in range(p)]
    steps = ra.ring_schedule(p)
    assert len(steps) == 2 * (p - 1) * p
    for s in range(2 * (p - 1)):
        moves = [x for x in steps if x["step"] == s]
        sent = {x["rank"]: data[x["rank"]][x["send_chunk"]] for x in moves}   # everyone sends at once
        for x in moves:
            assert x["from"] == (x["rank"] - 1) % p
            v = sent[x["from"]]
            data[x["rank"]][x["recv_chunk"]] = data[x["rank"]][x["recv_chunk"]] + v if x["phase"] == "reduce-scatter" else v
    assert all(row == want for row in data)


def test_ring_equals_all_reduce_on_2_3_4_ranks():
    res = launch.run(ra.check_worker, 4, (2, 3, None), (1, 5, 1000), ("int64", "float32"), timeout_s=180)
    recs = res.results[0]
    assert {r["world_size"] for r in recs} == {2, 3, 4}
    for r in recs:
        assert r["ring_equal"] and r["naive_equal"], r
        if r["dtype"] == "int64":
            assert r["max_abs_diff"] == 0.0                                   # integers: exactly equal
    big = [r for r in recs if r["count_elems"] == 1000 and r["dtype"] == "int64"]
    for r in big:                                                              # 2(p-1)/p of the tensor, ±1 chunk
        p = r["world_size"]
        assert abs(r["ring_bytes_sent_rank0"] - 2 * (p - 1) / p * 8000) <= 2 * (p - 1) * 8
