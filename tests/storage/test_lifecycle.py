"""Lifecycle model: the tier table is dated and sourced; moves, retrieval and early-deletion charges follow the
rules; the policy beats keeping everything hot; costs add up to what the capacities say."""
import pytest

from helpers.storage import lifecycle as lc

TIERS = lc.load_tiers()


def test_tier_table_has_dates_and_sources():
    assert list(TIERS) == list(lc.TIERS)
    for t in TIERS.values():
        assert t.source.startswith(("reported by", "http")) and "http" in t.source and len(t.date) >= 7


def test_bad_tier_table(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(lc.DATA.read_text().replace("usd_per_GB_month: 0.00099", "usd_per_GB_month: 0.5"))
    with pytest.raises(ValueError, match="fall from hot to cold"):
        lc.load_tiers(p)


def test_one_object_walks_down_and_back():
    o = lc.Obj("x", "c", 1e9, 0, reads=(40,))
    sim = lc.simulate([o], {"c": lc.Rule(warm_after_idle_days=5, cold_after_idle_days=20)}, TIERS, 60)
    where = {d.day: d.tier for d in sim.days if d.stored_TB > 0}
    assert where[4] == "hot" and where[5] == "warm" and where[19] == "warm" and where[20] == "cold"
    assert where[40] == "hot" and where[45] == "warm"
    assert sim.moves == {"hot->warm": 2, "warm->cold": 1, "cold->hot": 1}
    m2 = {m.tier: m for m in sim.months if m.month == 2}
    assert m2["cold"].retrieval_usd == pytest.approx(round(TIERS["cold"].retrieval_usd_per_GB, 2))
    # left cold after 20 of its 180 minimum days: 160 days billed as the early charge
    assert m2["cold"].early_usd == pytest.approx(round(TIERS["cold"].usd_per_GB_month / 30 * 160, 2))


def test_storage_cost_is_capacity_times_price():
    o = lc.Obj("x", "c", 2e12, 0)
    sim = lc.simulate([o], {"c": lc.KEEP_ALL_HOT}, TIERS, 30)
    assert sim.total_usd() == pytest.approx(2000 * TIERS["hot"].usd_per_GB_month, rel=1e-6)


def test_retention_keeps_latest_and_milestones():
    objs = [lc.Obj(f"c{d}", "ck", 1e9, d, milestone=(d == 2)) for d in range(10)]
    sim = lc.simulate(objs, {"ck": lc.Rule(delete_after_days=3, keep_latest_hot=3)}, TIERS, 10)
    last = {d.tier: d.stored_TB for d in sim.days if d.day == 9}
    assert last["hot"] == pytest.approx(0.004)      # the three newest and the milestone
    assert sim.moves["hot->delete"] == 6


def test_policy_beats_all_hot():
    objs = lc.training_project(0.98e12)
    hot = lc.simulate(objs, {c: lc.KEEP_ALL_HOT for c in ("raw", "dataset", "checkpoint", "log")}, TIERS, 180)
    pol = lc.simulate(objs, lc.default_rules(), TIERS, 180)
    assert pol.total_usd() < hot.total_usd() / 5
    assert max(d.stored_TB for d in pol.days if d.tier == "hot") < max(d.stored_TB for d in hot.days)


def test_bad_rules():
    with pytest.raises(ValueError, match="must exceed"):
        lc.Rule(warm_after_idle_days=10, cold_after_idle_days=5)
    with pytest.raises(ValueError, match="no rule for data class"):
        lc.simulate([lc.Obj("x", "new", 1, 0)], {}, TIERS, 1)
    with pytest.raises(ValueError, match="train_days"):
        lc.training_project(1e9, days=10)
