"""ipmitool sdr (list, elist, -v) and sel list, read on real outputs (tests/data/real/ipmitool-sdr, ipmitool-sel)."""
from collections import Counter
from pathlib import Path

import pytest

from helpers.ops import ipmiread

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _sdr(name):
    return ipmiread.parse_ipmitool_sdr((REAL / "ipmitool-sdr" / name).read_text())


def test_sdr_list_with_absent_sensors():
    s = _sdr("home-assistant-ipmi-22-supermicro-list-full.txt")
    assert len(s) == 29 and Counter(x.status for x in s) == {"ok": 21, "absent": 8}
    fan = next(x for x in s if x.name == "FAN1")
    assert (fan.reading, fan.unit) == (3400.0, "RPM")


def test_sdr_hp_discrete_keep_hex_value():
    s = _sdr("collectd-819-hp-dl380g7.txt")
    assert len(s) == 28 and {x.status for x in s} == {"ok"}
    assert (s[0].name, s[0].reading, s[0].unit) == ("UID Light", 0.0, "discrete")
    assert next(x for x in s if x.name == "Power Supply 2").reading == 155.0


def test_sdr_elist():
    s = _sdr("inxi-138-supermicro-elist.txt")
    assert len(s) == 25 and Counter(x.status for x in s) == {"ok": 17, "absent": 8}
    assert (s[0].entity, s[0].reading) == ("3.1", 33.0)


def test_sdr_verbose_thresholds_and_states():
    s = _sdr("occ-6-openpower-v.txt")
    assert [(x.name, x.status) for x in s] == [("Board_Temp", "warning"), ("CPU_Diode_Sensor", "ok")]
    assert dict(s[0].thresholds) == {"unr": 60.0, "ucr": 50.0, "unc": 40.0, "lnr": 0.0, "lcr": 10.0, "lnc": 20.0}
    (r,) = _sdr("ipmitool-176-redundancy-lost-v.txt")
    assert (r.name, r.status, r.unit, r.asserted) == ("Pwr Unit Redund", "ok", "discrete", ("Redundancy Lost",))


def test_sel_list():
    ev = ipmiread.parse_ipmitool_sel((REAL / "ipmitool-sel" / "op-build-594-sel-list.txt").read_text())
    assert len(ev) == 12 and ev[-1].record == "c" and {e.direction for e in ev} == {"Asserted"}
    assert ev[0] == ipmiread.SelEvent("1", "01/01/2000", "00:15:20", "System Firmware Progress #0x05",
                                      "Motherboard initialization", "Asserted")


def test_bad_input():
    with pytest.raises(ValueError, match="ipmitool sdr"):
        ipmiread.parse_ipmitool_sdr("hello\n")
    with pytest.raises(ValueError, match="ipmitool sel"):
        ipmiread.parse_ipmitool_sel("hello\n")


def test_sel_elist_real_faults_and_their_deassertions():
    from helpers.ops import noderules

    t = (REAL / "ipmitool-sel" / "argon-itf-bx43-01-psu-ac-lost-elist.txt").read_text()
    ev = ipmiread.parse_ipmitool_sel(t)
    assert len(ev) == 10 and (ev[6].record, ev[6].sensor, ev[6].event, ev[6].direction) == \
        ("98", "Power Supply PSU1 AC Lost", "Power Supply AC lost", "Asserted")
    f = noderules._sel(t, "x")
    assert [(x.component, x.item, x.status) for x in f] == [
        ("PSUs", "SEL 98: Power Supply PSU1 AC Lost", "degraded"), ("fans", "SEL 9a: Fan PSU1 Slow FAN1", "degraded")]
    assert "deasserted 03/06/2025 19:00:55" in f[0].why          # record 99 clears record 98
    ecc = noderules._sel((REAL / "ipmitool-sel" / "argon-itf-bx41-06-uncorrectable-ecc-elist.txt").read_text(), "x")
    assert [(x.item, x.status) for x in ecc][0] == ("SEL 54: Memory #0x08", "failed")   # Uncorrectable ECC, Asserted
    hw = noderules._sel((REAL / "ipmitool-sel" / "ibm-openbmc-3638-everest-sel-list-excerpt.txt").read_text(), "x")
    assert [x.item for x in hw] == ["SEL 45: System Event #0x4a", "SEL 46: System Event #0x4a"]
    assert {x.status for x in hw} == {"failed"}                 # "Undetermined system hardware failure"
    ok = noderules._sel((REAL / "ipmitool-sel" / "sos-2015-elist-excerpt.txt").read_text(), "x")
    assert [(x.status, x.why) for x in ok] == [("healthy", "3 events, none a fault")]


def test_sel_time_with_zone_and_pre_init_rows():
    text = ("  3a | 12/14/22 | 23:09:44 CET | Memory #0x88 | Correctable ECC (CPU0_G1) | Asserted\n"
            "   5 |  Pre-Init  |0000000123| System Event #0x01 | Timestamp Clock Sync | Asserted\n")
    a, b = ipmiread.parse_ipmitool_sel(text)
    assert (a.time, a.event, b.date, b.time) == ("23:09:44 CET", "Correctable ECC (CPU0_G1)", "Pre-Init", "0000000123")
