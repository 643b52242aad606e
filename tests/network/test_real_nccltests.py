"""helpers.network.nccltests on published nccl-tests logs (tests/data/real/nccl-tests, sources in SOURCES.md).

Each expectation is what the source shows or says: the header's ranks, the rows it prints, the summary line, the
thread's own description (two nodes × four GPUs, a run that "run seperately", #wrong counts)."""
import math
from pathlib import Path

import pytest

from helpers.formulas import comm
from helpers.network import commmodel, nccltests

REAL = Path(__file__).parents[1] / "data" / "real" / "nccl-tests"


def log(name, **kw):
    return nccltests.parse((REAL / name).read_text(), **kw)


def test_oci_a100_two_nodes_sixteen_ranks():
    L = log("oci-oke-a100-2node-allreduce.txt")
    assert L.ranks == 16 and L.devices == ("NVIDIA A100-SXM4-40GB",) * 16
    assert L.avg_busbw_GBps == pytest.approx(188.648) and not L.partial
    out = L.table("out-of-place")
    assert [r["size_bytes"] for r in out] == [1073741824, 2147483648, 4294967296]
    assert out[0]["time_us"] == 10776 and out[0]["algbw_GBps"] == 99.64 and out[0]["busbw_GBps"] == 186.83
    assert L.table("in-place")[2]["busbw_GBps"] == 190.09
    # the log does not name its binary; busbw/algbw = 2·15/16 is all_reduce's factor on the header's 16 ranks
    assert L.op is None and any("all_reduce on 16 ranks" in w for w in L.warnings)
    assert all(r.wrong == 0 and r.dtype == "float" and r.redop == "sum" and r.root == -1 for r in L.rows)


def test_gb200_excerpt_header_cut_off_ranks_from_the_factor():
    L = log("oci-oke-gb200-32node-allreduce-excerpt.txt")
    assert L.op == "all_reduce"                      # "# Collective test concluded: all_reduce_perf"
    assert L.ranks is None and L.partial             # only "Rank 127" of the header is shown
    assert L.inferred_ranks == 128                   # 32 nodes × 4 GB200 (the README's sentence)
    assert L.avg_busbw_GBps == pytest.approx(152.682)
    assert L.table()[-1]["size_bytes"] == 34359738368 and L.table()[-1]["busbw_GBps"] == 683.57


def test_two_nodes_four_gpus_each_is_eight_ranks():
    L = log("nccl-1411-allreduce-2node-4gpu.txt")
    assert L.ranks is None and L.inferred_ranks == 8            # "4 GPUs on each node", two nodes
    assert len(L.table()) == 7 and L.table()[0]["busbw_GBps"] == 30.02


def test_wrong_results_are_flagged_and_left_out_of_the_fit():
    L = log("nccl-1184-allreduce-2node-wrong.txt")
    bad = [r for r in L.rows if r.wrong]
    assert [(r.size_bytes, r.placement, r.wrong) for r in bad] == [(524288, "out-of-place", 237858),
                                                                   (524288, "in-place", 238038)]
    assert sum("#wrong" in w for w in L.warnings) == 2
    f = nccltests.fit_alpha_beta(L)
    assert f.n_points == 2                            # 8 B and 262144 B; the wrong row is not fitted


def test_old_format_without_redop_or_root():
    L = log("nccl-340-allreduce-2gpu-old-format.txt", op="all_reduce")
    assert L.avg_busbw_GBps == pytest.approx(6.6972)
    r = L.table()[0]
    assert (r["size_bytes"], r["count"], r["type"], r["redop"], r["time_us"]) == (65536, 8192, "float", None, 16.57)
    assert all(x.wrong is None for x in L.rows)       # an "error" column (0e+00), not #wrong
    # busbw == algbw in every row: all_reduce's factor 2(n-1)/n is 1 for n = 2 (the thread ran -g 2)
    assert all(x.busbw_GBps == x.algbw_GBps for x in L.rows)
    assert comm.busbw_factor("all_reduce", 2) == 1.0


def test_header_printed_twice_means_separate_runs():
    for name in ("nccl-tests-107-two-single-rank-runs.txt", "nccl-tests-213-runs-separately-excerpt.txt"):
        with pytest.raises(ValueError, match="separate one-process runs"):
            log(name)


def test_reduce_scatter_zero_size_rows_and_cut_rows():
    L = log("nccl-tests-128-reducescatter-2node-4gpu.txt", op="reduce_scatter")
    assert [r["size_bytes"] for r in L.table()][:6] == [0, 0, 0, 0, 0, 128]
    cut = log("nccl-1530-allreduce-8x4090-header.txt")
    assert cut.op == "all_reduce" and cut.ranks == 8 and cut.devices[0] == "NVIDIA GeForce RTX 4090"
    assert cut.partial and any("cut off" in w for w in cut.warnings)
    assert [r.placement for r in cut.rows] == ["out-of-place"]


def test_every_op_the_reader_knows_has_a_factor():
    """The reader checks rows with helpers.formulas.comm.busbw_factor (its PERFORMANCE.md table is tested in
    tests/formulas/test_comm.py): every op nccl-tests names must be in it."""
    assert [comm.busbw_factor(op, 8) for op in nccltests.OPS] == pytest.approx(
        [1.75, 0.875, 0.875, 0.875, 1.0, 1.0, 1.0, 0.875, 0.875, 1.0])


def test_fit_agrees_with_commmodel():
    L = log("oci-oke-a100-2node-allreduce.txt")
    f = nccltests.fit_alpha_beta(L)
    rows = L.table()
    direct = commmodel.fit([r["size_bytes"] for r in rows], [r["time_us"] * 1e-6 for r in rows])
    assert f.line == direct.line and f.max_rel_error < 0.01
    # the fitted 1/β is the algorithm bandwidth of the largest messages (≈ 101 GB/s in the log)
    assert 95 < f.line.bw_GBps < 106 and not math.isinf(f.line.bw_GBps)


def test_not_a_log():
    with pytest.raises(ValueError, match="no result rows"):
        nccltests.parse("hello\nworld\n")


def test_cli(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert nccltests.main([str(REAL / "oci-oke-a100-2node-allreduce.txt"), "--op", "all_reduce",
                           "--out", str(out)]) == 0
    assert out.exists() and "alpha-beta fit" in capsys.readouterr().err


def test_efa_two_node_log_with_mpirun_tags_and_plugin_lines():
    """EKS blueprint's EFA NCCL test on two g4dn.metal nodes (one T4 each): `[1,0]<stdout>:` tags, NCCL INFO and
    aws-ofi-nccl "NET/OFI" lines between the header and the rows, hostnames in the `#  Rank … Group … Pid … on
    HOST device …` lines; the README says "the average bus bandwidth is 1.15 GB/s" and 3.13 / 3.12 GB/s at 512 MiB."""
    L = log("eks-efa-t4-2node-allreduce.txt")
    assert L.ranks == 2 and L.devices == ("Tesla T4", "Tesla T4") and not L.partial
    assert L.avg_busbw_GBps == pytest.approx(1.15327)
    row = [r for r in L.table() if r["size_bytes"] == 536870912][0]
    assert row["busbw_GBps"] == 3.13 and L.table("in-place")[-2]["busbw_GBps"] == 3.12
    assert len(L.table()) == 31 and L.table()[0]["size_bytes"] == 0


def test_nan_inf_negative_and_non_ascii_cells_are_refused():
    head = "#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] GPU\n"
    good = "        1024   256  float  sum  -1   10.0   0.10   0.10   0   10.0   0.10   0.10   0\n"
    assert nccltests.parse(head + good, op="all_reduce").rows[0].time_us == 10.0
    for bad in ("nan", "inf", "-3.0"):
        with pytest.raises(ValueError, match="not a|negative|finite"):
            nccltests.parse(head + good.replace("   10.0   0.10", f"   {bad}   0.10", 1), op="all_reduce")
    with pytest.raises(ValueError, match="no result rows"):       # fullwidth digits are not a row
        nccltests.parse(head + good.replace("1024", "１０２４"), op="all_reduce")
