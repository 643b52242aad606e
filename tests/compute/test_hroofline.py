"""Hierarchical roofline: level classification, the CPU working-set sweep, ceilings; GPU path on a GPU."""
import pytest

from helpers.compute import hroofline as h

LEVELS = [h.Level("L1d", 48 * 2**10, "t"), h.Level("L2", 2 * 2**20, "t"), h.Level("DRAM", 2**62, "t")]


def test_classify_needs_the_working_set_firmly_inside_a_level():
    assert h.classify(16 * 2**10, LEVELS) == "L1d"          # ≤ half of 48 KiB
    assert h.classify(32 * 2**10, LEVELS) == ""             # over half of L1d, under L1d: between
    assert h.classify(128 * 2**10, LEVELS) == ""            # ≥ L1d but < 4 × L1d: between
    assert h.classify(256 * 2**10, LEVELS) == "L2"
    assert h.classify(2 * 2**20, LEVELS) == ""
    assert h.classify(8 * 2**20, LEVELS) == "DRAM"


def test_sizes_are_powers_of_two_and_refuse_nonsense():
    assert h.sizes(4096, 65536) == [4096, 8192, 16384, 32768, 65536]
    with pytest.raises(ValueError, match="0 < lo <= hi"):
        h.sizes(0, 10)


def test_cpu_levels_come_from_sysfs_or_say_they_are_assumed():
    lv = h.cpu_levels()
    assert lv[-1].name == "DRAM" and len(lv) >= 3
    assert [x.capacity_bytes for x in lv] == sorted(x.capacity_bytes for x in lv)


def test_cpu_sweep_moves_the_bytes_it_says_and_gives_one_ceiling_per_level():
    pts = h.sweep_cpu([8 * 2**10, 256 * 2**10, 8 * 2**20], LEVELS, bytes_per_call=2**22, repeats=2)
    assert [p.level for p in pts] == ["L1d", "L2", "DRAM"]
    for p in pts:
        assert p.bytes_moved % (3 * p.working_set_bytes // 2) == 0     # 3 × buf bytes per pass, buf = ws / 2
        assert p.bw_GBps == pytest.approx(p.bytes_moved / p.time_s / 1e9)
    cs = h.ceilings(pts, LEVELS)
    assert [c.level for c in cs] == ["L1d", "L2", "DRAM"] and all(c.n_points == 1 for c in cs)


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="GPU path: needs CUDA and cupy")
def test_gpu_sweep_steps_down_from_l1_to_hbm():
    pytest.importorskip("cupy")
    pts, levels = h.measure(max_bytes=2**30)
    cs = {c.level: c.bw_GBps for c in h.ceilings(pts, levels)}
    assert cs["L1"] > cs["L2"] > cs["HBM"] > 0
