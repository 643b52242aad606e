"""helpers.network.ibparse / helpers.network.ibdiag: each shipped sample shows its fault; parsers read live-format text (chapter 03)."""
import pytest

from helpers.network import ibdiag, ibparse

EXPECTED = {"healthy": "healthy", "link_down": "link_down", "low_bandwidth": "low_bandwidth",
            "packet_loss": "packet_loss", "config_mismatch": "config_mismatch", "switch_failure": "switch_failure",
            "multipath_unstable": "multipath_unstable", "unauthorized_access": "unauthorized_access",
            "config_conflict": "config_conflict"}


def test_all_scenarios_shipped():
    assert sorted(ibparse.scenarios()) == sorted(EXPECTED)
    assert set(ibdiag.FAULTS) == set(EXPECTED) - {"healthy"}          # the seed's eight faults


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_diagnosis(name):
    fs = ibdiag.diagnose(ibparse.load_sample(name))
    assert ibdiag.primary(fs) == EXPECTED[name], ibdiag.report(fs)
    if name != "healthy":
        assert all(f.evidence for f in fs) and EXPECTED[name] in ibdiag.report(fs)


def test_healthy_sample_has_every_tool():
    s = ibparse.load_sample("healthy")
    assert set(s.tools) == set(ibparse.TOOLS) - {"iblinkinfo", "sminfo"}   # the book's samples predate those two
    assert len(s.ports) == 9 and all(p.state == "Active" and p.width == "4X" for p in s.ports)
    assert s.diagnet.summary == {"Total Nodes": 13, "IB Switches": 4, "IB Channel Adapters": 9}


LOCAL_IBSTAT = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.2048
\tPort 1:
\t\tState: Initializing
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tBase lid: 65535
\t\tSM lid: 0
\t\tLink layer: InfiniBand
"""


def test_unprefixed_local_output_and_no_sm():
    s = ibparse.snapshot({"ibstat": LOCAL_IBSTAT}, "live")
    (p,) = s.ports
    assert (p.host, p.ca, p.state, p.rate_Gbps) == ("localhost", "mlx5_0", "Initializing", 400.0)
    fs = ibdiag.diagnose(s)
    assert ibdiag.primary(fs) == "link_down" and "no subnet manager" in fs[0].evidence


def test_parsers_reject_other_text():
    with pytest.raises(ValueError, match="ibstat"):
        ibparse.parse_ibstat("hello\nworld\n")
    with pytest.raises(ValueError, match="unknown tool"):
        ibparse.snapshot({"ibnetdiscover": ""}, "x")
    with pytest.raises(ValueError, match="no sample scenario"):
        ibparse.load_sample("nope")


def test_capture_live_without_tools(monkeypatch):
    monkeypatch.setattr(ibparse.shutil, "which", lambda name: None)
    snap, why = ibparse.capture_live()
    assert snap is None and "infiniband-diags" in why



def test_counter_table_and_excerpt():
    rows = ibdiag.counter_table(ibparse.load_sample("multipath_unstable"), lids=[4])
    assert [r["port"] for r in rows] == ["leaf01/P17", "leaf01/P18", "leaf01/P19", "leaf01/P20"]
    assert rows[2]["LinkDownedCounter"] == 23
    assert "Polling" in ibdiag.excerpt("link_down", "ibstat", "Polling")
    with pytest.raises(ValueError, match="no line"):
        ibdiag.excerpt("healthy", "ibstat", "Polling")


def test_ibstatus_alone_keeps_state_and_physical_state():
    # the book's link_down sample (written for the book): gpu03's mlx5_1 is DOWN / Polling in ibstatus
    s = ibparse.snapshot({"ibstatus": ibparse.sample_text("link_down", "ibstatus")}, "sample: ibstatus only")
    down = [p for p in s.ports if p.state != "Active"]
    assert down and all(p.physical_state == "Polling" for p in down)
    assert ibdiag.primary(ibdiag.diagnose(s)) == "link_down"


def test_ibdiagnet_unexpected_width_and_speed_wording():
    # lines in ibdiagnet 2.x's wording (written for the book): width and speed downgrades are low_bandwidth
    text = ibparse.sample_text("healthy", "ibdiagnet").replace(
        "-I- Links Check finished successfully",
        "-E- Link: leaf01/P2<-->gpu02/U1/P1 - Unexpected actual link speed 2.5 (enable_speed1=\"2.5 or 5 or 10\", "
        "enable_speed2=\"2.5 or 5 or 10\" therefore final speed should be 10)\n"
        "-E- Link: leaf01/P3<-->gpu03/U1/P1 - Unexpected width 1x (expected 4x)")
    assert "Unexpected width" in text
    fs = ibdiag.diagnose(ibparse.snapshot({"ibdiagnet": text}, "sample: edited"))
    assert sum(f.fault == "low_bandwidth" for f in fs) == 2
