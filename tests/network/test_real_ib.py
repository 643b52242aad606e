"""helpers.network.ibparse / ibdiag on published InfiniBand tool output (tests/data/real/<tool>, SOURCES.md there).

Expectations come from the sources: ArchWiki's reading of its own ibstat/iblinkinfo examples, the threads' setups
(RoCE ports, a port disabled with ibportstate, ibstat stopping with ibpanic), the mailing-list post's "seems to be
OK", and the IBA counter widths."""
from pathlib import Path

import pytest

from helpers.network import ibdiag, ibinventory, ibparse

REAL = Path(__file__).parents[1] / "data" / "real"


def snap(tool, name):
    return ibparse.snapshot({tool: (REAL / tool / name).read_text()}, f"real: {name}")


def test_archwiki_ibstat_active_and_polling():
    s = snap("ibstat", "archwiki-mlx4-port2-polling.txt")
    p1, p2 = s.ports
    assert (p1.state, p1.physical_state, p1.rate_Gbps, p1.base_lid, p1.sm_lid) == ("Active", "LinkUp", 20, 3, 3)
    assert (p2.state, p2.physical_state) == ("Down", "Polling")
    fs = ibdiag.diagnose(s)
    # ArchWiki: a physical state other than LinkUp means the cable is not plugged in / not connected / defective
    assert ibdiag.primary(fs) == "link_down" and "cable" in fs[0].evidence and "mlx4_0" in fs[0].component


def test_roce_ports_are_not_infiniband_and_carry_no_sm():
    s = snap("ibstat", "mooncake-1999-roce-ethernet-excerpt.txt")
    eth = [p for p in s.ports if p.link_layer == "Ethernet"]
    assert [p.ca for p in eth] == ["mlx5_0", "mlx5_1"] and all(p.sm_lid == 0 and p.base_lid == 0 for p in eth)
    assert all(p.link_layer != "Ethernet" for p in s.ib_ports)
    fs = ibdiag.diagnose(s)
    assert "config_conflict" not in {f.fault for f in fs}           # the old bug: SM lid 0 taken for a second SM
    assert any("cut off" in n for n in s.notes)                     # the excerpt ends inside mlx5_10


def test_port_disabled_with_ibportstate_and_partial_block():
    s = snap("ibstat", "rdma-core-847-port1-disabled-excerpt.txt")
    p1, p2 = s.ports
    assert (p1.state, p1.physical_state, p1.base_lid, p1.sm_lid) == ("Down", "Disabled", 38, 13)
    assert (p2.state, p2.rate_Gbps) == ("Active", 56)                # 4X FDR
    assert sum(n.startswith("ibstat on localhost: ibwarn") for n in s.notes) == 4
    assert any("port 2 is cut off" in n for n in s.notes)
    assert "administratively disabled" in ibdiag.diagnose(s)[0].evidence


def test_ibpanic_partial_output_is_kept_and_reported():
    s = snap("ibstat", "gpud-752-ibpanic-partial.txt")
    (p,) = s.ports
    assert (p.ca, p.state, p.rate_Gbps, p.base_lid, p.sm_lid) == ("mlx5_7", "Active", 200, 13305, 1)
    assert any("ibpanic" in n and "mlx5_8" in n for n in s.notes)


def test_hdr_fabric_expects_hdr_without_inventory():
    s = snap("ibstat", "lustreperfmon-27-hdr-one-disabled.txt")
    inv = ibinventory.infer_inventory(s)
    assert inv.rate_Gbps == 200                                     # from the fabric's own Active port
    fs = ibdiag.diagnose(s)
    assert "low_bandwidth" not in {f.fault for f in fs}             # HDR is not "low" on an HDR fabric
    assert [f.component for f in fs if f.fault == "link_down"] == ["localhost/mlx5_2"]


@pytest.mark.parametrize("name, ca, state, layer, mtu", [
    ("deepep-60-ethernet-down-excerpt.txt", "mlx5_12", "Down", "Ethernet", 1024),
    ("deepep-38-roce-h100-excerpt.txt", "mlx5_2", "Active", "Ethernet", 4096),
    ("deepep-55-infiniband-excerpt.txt", "mlx5_3", "Active", "InfiniBand", 4096),
    ("azhpc-44-azure-ethernet-excerpt.txt", "rdmaP23800p0s2", "Active", "Ethernet", 1024),
    ("ompi-users-7361-mthca-cexec.txt", "mthca0", "Active", "", 2048)])
def test_ibv_devinfo(name, ca, state, layer, mtu):
    recs = ibparse.parse_ibv_devinfo((REAL / "ibv_devinfo" / name).read_text())
    r = recs[0]
    assert (r["ca"], r["state"], r.get("link_layer", ""), r["active_mtu"]) == (ca, state, layer, mtu)
    s = snap("ibv_devinfo", name)
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"         # Ethernet ports are outside the IB rules


def test_cexec_hosts_and_one_master_sm():
    s = snap("sminfo", "ompi-users-7361-four-nodes-one-master.txt")
    assert [m.host for m in s.sms] == ["n01", "n02", "n03", "n04"]
    assert {(m.sm_lid, m.sm_guid, m.state) for m in s.sms} == {(2, "0x2c90200259201", "SMINFO_MASTER")}
    assert [m.activity for m in s.sms] == [6881, 6882, 6883, 6884]
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"         # "seems to be OK": one master SM


def test_bare_sminfo_line_is_the_local_host():
    s = snap("sminfo", "thesis-chatbot-bda-ib-card-replacement.txt")     # "sminfo: sm lid 15 …" with no host prefix
    assert [(m.host, m.sm_lid, m.sm_guid, m.activity, m.priority, m.state) for m in s.sms] == \
        [("localhost", 15, "0x10e0406d5aa0a0", 26263191, 14, "SMINFO_MASTER")]
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"


def test_failed_sminfo_is_named_not_taken_for_garbage():
    # hand-written error-path input in the tool's own format (no public capture of a failed sminfo was found)
    with pytest.raises(ValueError, match="sminfo failed, no SMInfo was read: 'sminfo: iberror: failed: query'.*opensm"):
        ibparse.parse_sminfo("ibwarn: [4021] _do_madrpc: recv failed: Connection timed out\nsminfo: iberror: failed: query\n")


def test_two_different_masters_is_a_conflict():
    text = (REAL / "sminfo" / "ompi-users-7361-four-nodes-one-master.txt").read_text()
    text = text.replace("sm lid 2 sm guid 0x2c90200259201, activity count 6884",
                        "sm lid 7 sm guid 0x2c902002592ff, activity count 12")    # edited for the book: a 2nd SM
    fs = ibdiag.diagnose(ibparse.snapshot({"sminfo": text}, "edited"))
    assert ibdiag.primary(fs) == "config_conflict" and "2 different master SMs" in fs[0].evidence


@pytest.mark.parametrize("name, lid, port", [("infiniband-diags-16-extended.txt", 10, 1),
                                             ("netdata-2620-extended-email-wrapped.txt", 21, 1),
                                             ("ibsim-1-no-header.txt", 5, 1)])
def test_perfquery_real_dumps(name, lid, port):
    s = snap("perfquery", name)
    (c,) = s.counters
    assert (c.lid, c.port) == (lid, port)
    assert all(c.get(k) == 0 for k in ibparse.COUNTER_BITS) and c.saturated() == []
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"


def test_perfquery_traffic_counters_and_widths():
    (c,) = snap("perfquery", "netdata-2620-extended-email-wrapped.txt").counters
    assert c.get("PortRcvData") == 2341975277576 and c.get("PortMulticastRcvPkts") == 6779
    text = (REAL / "perfquery" / "infiniband-diags-16-extended.txt").read_text()
    with pytest.raises(ValueError, match="8-bit counter"):
        ibparse.parse_perfquery(text.replace("PortRcvConstraintErrors:.........0", "PortRcvConstraintErrors:.........8812"))
    sat = ibparse.parse_perfquery(text.replace("LinkDownedCounter:...............0", "LinkDownedCounter:...............255"))
    assert sat[0].saturated() == ["LinkDownedCounter"]


def test_link_downed_and_discards_count_on_any_port():
    text = (REAL / "perfquery" / "infiniband-diags-16-extended.txt").read_text()
    text = text.replace("LinkDownedCounter:...............0", "LinkDownedCounter:...............3").replace(
        "PortXmitDiscards:................0", "PortXmitDiscards:................41")      # edited for the book
    fs = ibdiag.diagnose(ibparse.snapshot({"perfquery": text}, "edited"))
    assert {f.fault for f in fs} >= {"link_down", "packet_loss"}
    assert any("LinkDownedCounter 3" in f.evidence for f in fs) and any("PortXmitDiscards 41" in f.evidence for f in fs)


def test_iblinkinfo_back_to_back():
    s = snap("iblinkinfo", "archwiki-two-hcas-back-to-back.txt")
    assert [(ln.lid, ln.port, ln.peer_lid, ln.peer_port) for ln in s.links] == [(4, 1, 3, 1), (3, 1, 4, 1)]
    assert all(ln.width == "4X" and ln.lane_Gbps == 5.0 and ln.speed == "DDR" and ln.rate_Gbps == 20 and
               ln.state == "Active" and ln.physical_state == "LinkUp" for ln in s.links)   # "5.0 Gb/s … 4X"
    assert s.links[1].node == "hostname mlx4_0" and s.links[0].peer == "kvm mlx4_0"
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"


def test_ibdiagnet_1x_is_refused_by_name():
    with pytest.raises(ValueError, match="ibdiagnet 1.x"):
        snap("ibdiagnet", "archwiki-ibdiagnet-1.5.7.txt")


def test_unknown_text_names_what_it_saw():
    for parse in (ibparse.parse_ibstat, ibparse.parse_ibstatus, ibparse.parse_ibv_devinfo, ibparse.parse_iblinkinfo,
                  ibparse.parse_sminfo, ibparse.parse_ibdiagnet):
        with pytest.raises(ValueError, match="first 'Hello there'"):
            parse("Hello there\nsecond line\n")


def test_every_real_file_is_listed_and_read():
    owned = ("ibstat", "ibv_devinfo", "perfquery", "iblinkinfo", "sminfo", "ibdiagnet", "nccl-tests", "fio-json",
             "fio-text", "nvidia-smi", "nvidia-smi-q", "nvidia-smi-topo")
    tests = "".join(p.read_text() for p in Path(__file__).parents[1].rglob("test_real_*.py"))
    for fmt in owned:
        sources = (REAL / fmt / "SOURCES.md").read_text()
        for f in (REAL / fmt).iterdir():
            if f.name != "SOURCES.md":
                assert f"`{f.name}`" in sources, f"{fmt}/{f.name} is not in SOURCES.md"
                assert f.name in tests, f"{fmt}/{f.name} is read by no test"


def test_ibstat_without_indentation_as_web_pages_show_it():
    s = snap("ibstat", "advancedclustering-kb-flat-qdr.txt")
    (p,) = s.ports
    assert (p.ca, p.state, p.physical_state, p.rate_Gbps, p.base_lid, p.sm_lid) == ("mlx4_0", "Active", "LinkUp", 40, 1, 1)
    assert ibdiag.primary(ibdiag.diagnose(s)) == "healthy"      # "for proper operation … Active … LinkUp"


def test_topology_with_five_gpus_and_no_nic():
    """nvidia-smi topo -m without NIC columns (club-3090#46): what the source's matrix says, cell by cell."""
    from helpers.core import topology

    t = topology.parse_topo_matrix((REAL / "nvidia-smi-topo" / "club3090-46-five-gpus-two-numa.txt").read_text())
    assert t.devices == ("GPU0", "GPU1", "GPU2", "GPU3", "GPU4") and t.nic_names == ()
    assert t.matrix[0][1:] == ("SYS",) * 4 and (t.matrix[1][2], t.matrix[1][3], t.matrix[3][4]) == ("PHB", "NODE", "PHB")
    assert t.numa_affinity == ("1", "0", "0", "0", "0") and t.cpu_affinity[0] == "8-15,24-31"
