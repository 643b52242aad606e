"""helpers.network.collectives: nccl-tests' busbw factors, the data check, and the CLI on 4 gloo ranks (chapter 03)."""
import json
import subprocess
import sys

import pytest
import torch

from helpers.formulas import comm
from helpers.network import collectives as c


def test_busbw_factors_of_every_op():
    """The benchmark's ops all have an nccl-tests factor (helpers.formulas.comm, tested in tests/formulas)."""
    assert [comm.busbw_factor(op, 4) for op in c.OPS] == pytest.approx([1.5, 0.75, 0.75, 1.0, 0.75])


def test_sizes():
    assert c.parse_size("4M") == 4 * 2**20 and c.parse_size("64K") == 65536 and c.parse_size(512) == 512
    assert c.size_sweep("1K", "16K", 4) == [1024, 4096, 16384]
    with pytest.raises(ValueError, match="optional K, M or G"):
        c.parse_size("4 megabytes")
    with pytest.raises(ValueError, match="factor"):
        c.size_sweep("1K", "1M", 1)


def _simulate(op, ins, n):
    """What the collective must produce on every rank, computed from all ranks' inputs."""
    if op == "all_reduce":
        s = sum(ins)
        return [s] * n
    if op == "broadcast":
        return [ins[0]] * n
    if op == "all_gather":
        return [torch.cat(ins)] * n
    if op == "reduce_scatter":
        return list(torch.tensor_split(sum(ins), n))
    if op == "all_to_all":
        chunks = [torch.tensor_split(x, n) for x in ins]
        return [torch.cat([chunks[s][d] for s in range(n)]) for d in range(n)]
    raise AssertionError(op)


@pytest.mark.parametrize("op", c.OPS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_data_check_accepts_right_and_rejects_wrong(op, dtype):
    n, count = 3, 12
    cases = [c._Case(op, count, r, n, torch.device("cpu"), dtype) for r in range(n)]
    for k in cases:
        k.refill()
    want = _simulate(op, [k.inp.clone() for k in cases], n)
    for k, w in zip(cases, want):
        k.out.copy_(w)
        assert k.correct(), (op, k.out, k.expected)
    cases[1].out[-1] += 8          # one wrong element on one rank
    assert not cases[1].correct()


def test_expected_values_exact_beyond_float32_integers():
    """Index arithmetic must stay exact for buffers of more than 2^24 elements (float32 loses integers there)."""
    n, k = 4, 2**25 + 3
    j = torch.tensor([3 * k + k - 1, 2 * k + 5], dtype=torch.int64)     # near the end of a 2^27-element buffer
    _, got = c._values("all_gather", 0, n, k, j, j % k)
    assert got.tolist() == [(3 + 1) + (k - 1) % 7, (2 + 1) + 5 % 7]
    src, _ = c._values("all_to_all", 1, n, k, j, j % k)
    assert src.tolist() == [1 + 1 + n * 3 + n * n * ((k - 1) % 3), 1 + 1 + n * 2 + n * n * (5 % 3)]


def test_cli_rejects_bad_op():
    r = subprocess.run([sys.executable, "-m", "helpers.network.collectives", "--op", "allreduce"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "allreduce" in r.stderr and "choose from" in r.stderr


def test_cli_four_gloo_ranks_all_ops():
    cmd = [sys.executable, "-m", "helpers.network.collectives", "--backend", "gloo", "--world-size", "4", "--op", "all",
           "--min-bytes", "1K", "--max-bytes", "16K", "--warmup", "1", "--iters", "2", "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert doc["kind"] == "collectives" and doc["provenance"]["command"]
    recs = doc["records"]
    assert {x["op"] for x in recs} == set(c.OPS) and len(recs) == 5 * 3
    for x in recs:
        assert {"op", "world_size", "backend", "size_bytes", "time_s", "algbw_GBps", "busbw_GBps", "correct"} <= set(x)
        assert x["world_size"] == 4 and x["backend"] == "gloo" and x["correct"] is True
        assert x["time_s"] > 0 and x["size_bytes"] == x["count_elems"] * 4
        assert x["busbw_GBps"] / x["algbw_GBps"] == pytest.approx(comm.busbw_factor(x["op"], 4))
        assert x["algbw_GBps"] == pytest.approx(x["size_bytes"] / x["time_s"] / 1e9)
    assert recs[0]["busbw_GBps"] / recs[0]["algbw_GBps"] == pytest.approx(2 * 3 / 4)
