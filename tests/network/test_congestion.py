"""The incast simulator: what each configuration must show (drops, pauses, head-of-line blocking, DCQCN's rules)."""
import pytest

from helpers.network import congestion as cg


@pytest.fixture(scope="module")
def runs():
    summ, series = cg.compare(duration_us=1000)
    return {s.mode: s for s in summ}, series


def test_no_control_drops_and_pfc_does_not(runs):
    s, _ = runs
    assert s["none"].dropped_bytes > 0 and s["none"].max_queue_bytes <= cg.Config().buffer_bytes
    assert s["pfc"].dropped_bytes == 0 and s["dcqcn"].dropped_bytes == 0


def test_pfc_blocks_the_victim_and_dcqcn_frees_it(runs):
    s, _ = runs
    assert s["pfc"].victim_Gbps < 0.5 * s["none"].victim_Gbps          # head-of-line blocking
    assert s["dcqcn"].victim_Gbps > 2 * s["pfc"].victim_Gbps
    assert s["dcqcn"].paused_fraction < s["pfc"].paused_fraction / 4


def test_dcqcn_keeps_the_queue_short(runs):
    _, series = runs
    tail = slice(len(series["dcqcn"]["queue_bytes"]) // 2, None)
    assert series["dcqcn"]["queue_bytes"][tail].mean() < 0.5 * series["pfc"]["queue_bytes"][tail].mean()


def test_rate_rules():
    c = cg.Config()
    rc, rt, a = cg.dcqcn_on_cnp(100.0, 100.0, 1.0, c)
    assert rc == 50.0 and rt == 100.0 and a == 1.0                     # α = 1: the first CNP halves the rate
    rc, rt, st = cg.dcqcn_on_timer(50.0, 100.0, 0, 100.0, c)
    assert (rc, rt, st) == (75.0, 100.0, 1)                            # fast recovery: halfway to the target
    _, rt2, _ = cg.dcqcn_on_timer(50.0, 90.0, c.fast_recovery_steps, 100.0, c)
    assert rt2 == 90.0 + c.rai_Gbps


def test_jain_and_bad_input():
    assert cg.jain([1, 1, 1, 1]) == 1.0 and cg.jain([1, 0, 0, 0]) == 0.25
    with pytest.raises(ValueError, match="mode"):
        cg.simulate("ecn-only")
    with pytest.raises(ValueError, match="xon"):
        cg.Config(xon_bytes=10, xoff_bytes=5)


def test_cnps_to_reach():
    assert cg.cnps_to_reach(100.0, 12.5) == 3 and cg.cnps_to_reach(100.0, 100.0) == 0
    with pytest.raises(ValueError):
        cg.cnps_to_reach(10.0, 20.0)
