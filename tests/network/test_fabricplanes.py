"""Out-of-sample checks of the fabric models (chapter 24): SuperPODs the model was not built on, and Alibaba HPN."""
import pytest

from helpers.network import fabric, fabricplanes as fp

OUT_OF_SAMPLE = ("superpod_h100", "superpod_b300_xdr", "superpod_b300_twinplane")


def test_b200_rows_the_model_was_built_on_still_match():
    for row in fabric.published()["superpod_b200"]["rows"]:
        su, nodes, gpus, leaf, spine, core, nl, ls, sc = row
        f = fp.su_fabric(su)
        assert (f.nodes, f.gpus, f.leaf, f.spine, f.core) == (nodes, gpus, leaf, spine, core)
        assert (f.node_leaf_cables, f.leaf_spine_cables, f.spine_core_cables) == (nl, ls, sc)


@pytest.mark.parametrize("spread", ["ceil", "even"])
def test_out_of_sample_superpods_print_every_error(spread):
    errs = []
    for name in OUT_OF_SAMPLE:
        df = fp.superpod_check(name, spread)
        bad = df[df.error != 0]
        print(f"{name} ({spread}): {len(df)} numbers, {len(bad)} wrong")
        for r in bad.itertuples():
            print(f"   {r.su} SU {r.quantity}: published {r.published}, model {r.model} (error {r.error:+d})")
        errs += list(df.error.abs() / df.published)
    errs.sort()
    print(f"relative error median {errs[len(errs) // 2]:.3f}, worst {errs[-1]:.3f}")
    wrong = sum(e > 0 for e in errs)
    # 'ceil' (the rule the B200 table shows) misses 3 spine counts; 'even' (added after seeing them) misses none of
    # the switch counts. Both miss the B300-XDR 18-SU GPU count, which disagrees with its own node count x 8.
    assert wrong == (4 if spread == "ceil" else 1)
    x = fp.superpod_check("superpod_b300_xdr", spread)
    row = x[(x.su == 18) & (x.quantity == "gpus")].iloc[0]
    nodes = x[(x.su == 18) & (x.quantity == "nodes")].iloc[0]
    assert row.model == nodes.published * 8 != row.published


def test_appliance_slot_and_planes():
    h = fp.su_fabric(4, appliance_slots=1, appliances=4)
    assert (h.nodes, h.gpus, h.node_leaf_cables, h.leaf_spine_cables) == (127, 1016, 1020, 1024)
    t = fp.su_fabric(16, nodes_per_su=64, radix=128, planes=2, cable_Gbps=800)
    assert (t.leaf, t.spine, t.core, t.node_leaf_cables) == (256, 128, 0, 8192)
    assert fp.su_fabric(3, spread="ceil").spine == 12 and fp.su_fabric(3).spine == 16
    with pytest.raises(ValueError, match="spread="):
        fp.su_fabric(1, spread="round")
    with pytest.raises(ValueError, match="appliance_slots"):
        fp.su_fabric(1, appliance_slots=32)


def test_hpn_table2_and_table4():
    t = fp.hpn_table2()
    print(t.to_string())
    tier1 = t.dropna(subset=["tier1_published"])
    assert (tier1.tier1_published == tier1.tier1_model).all()
    tier2 = t.dropna(subset=["tier2_K_published"])
    miss = tier2[tier2.tier2_K_published != tier2.tier2_K_model]
    # the first row (plain 51.2 Tb/s Clos, 2K) is not reproduced: the model gives 4K; the other three match
    assert list(miss.mechanism) == ["51.2Tbps Clos"] and miss.iloc[0].tier2_K_model == 4
    d = fabric.published()["alibaba_hpn"]
    for design, planes, gpus in d["table4"]:
        p = fp.hpn_pod("dual-plane" if design == "any-to-any" else "rail-only")
        assert (p.planes, p.gpus_per_pod) == (planes, gpus)
    p = fp.hpn_pod()
    assert (p.gpus_per_segment, p.tors_per_segment, p.aggs_per_plane, p.segments) == (1024, 16, 60, 15)
    assert p.tor_oversubscription == pytest.approx(1.067, abs=1e-3)
    with pytest.raises(ValueError, match="dual_tor=True"):
        fp.hpn_pod("dual-plane", dual_tor=False)
