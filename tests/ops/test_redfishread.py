"""Redfish Thermal, Power, ComputerSystem and Processor, read on DMTF's public mockup and on real Dell iDRAC and HPE iLO
responses (telegraf's fixtures; tests/data/real/redfish/SOURCES.md). Expectations are the files' own fields."""
import json
from pathlib import Path

import pytest

from helpers.ops import bmc, nodecheck, redfishread

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "redfish"


def _doc(name):
    return json.loads((REAL / f"dmtf-mockup-rackmount1-{name}.json").read_text())


def test_kinds():
    assert [redfishread.kind(_doc(n)) for n in ("thermal", "power", "system", "processor-cpu1", "processor-fpga1")] == \
        ["thermal", "power", "system", "processor", "processor"]
    assert redfishread.kind({"Members": []}) is None


def test_power_supply_warning():
    pw = redfishread.parse_power(_doc("power"))
    assert pw.consumed_W == 344 and len(pw.supplies) == 1
    assert (pw.supplies[0].name, pw.supplies[0].health, pw.supplies[0].output_W) == ("Power Supply Bay", "Warning", 325)


def test_system_summary():
    s = redfishread.parse_system(_doc("system"))
    assert (s.name, s.power_state, s.health, s.health_rollup, s.processors, s.memory_GiB) == \
        ("web483", "On", "OK", "OK", 2, 96)


def test_processors():
    cpu, fpga = redfishread.parse_processor(_doc("processor-cpu1")), redfishread.parse_processor(_doc("processor-fpga1"))
    assert (cpu.type, cpu.health, cpu.state) == ("CPU", "OK", "Enabled")
    assert (fpga.type, fpga.model) == ("FPGA", "Stratix 10")
    with pytest.raises(ValueError, match="Processor"):
        redfishread.parse_processor(_doc("power"))


def _vendor(name):
    return json.loads((REAL / name).read_text())


def test_dell_idrac_thermal_and_power():
    df = bmc.parse_redfish_thermal(_vendor("telegraf-dell-idrac-thermal.json"))
    cpu = df.iloc[0]
    assert (cpu["name"], cpu["reading"], cpu["lcr"], cpu["ucr"], cpu["status"]) == ("CPU1 Temp", 40, 3, 93, "ok")
    fans = df[df.unit == "RPM"]
    assert len(fans) == 16 and (fans.name.iloc[0], fans.reading.iloc[0], fans.lnc.iloc[0]) == \
        ("System Board Fan1A", 17760, 960) and set(fans.status) == {"ok"}
    pw = redfishread.parse_power(_vendor("telegraf-dell-idrac-power.json"))
    (psu,) = pw.supplies            # iDRAC: "LastPowerOutputWatts": null, the reading is in PowerOutputWatts
    assert (pw.consumed_W, psu.name, psu.health, psu.state, psu.output_W) == (429, "PS1 Status", "OK", "Enabled", 203)
    s = redfishread.parse_system(_vendor("telegraf-dell-idrac-system-r640.json"))
    assert (s.model, s.power_state, s.health_rollup, s.processors, round(s.memory_GiB, 3)) == \
        ("PowerEdge R640", "On", "OK", 2, 476.837)


def test_hpe_ilo_power_supplies_named_by_bay():
    pw = redfishread.parse_power(_vendor("telegraf-hpe-ilo-power.json"))
    assert pw.consumed_W == 221          # both supplies are named "HpeServerPowerSupply": the bay tells them apart
    assert [(p.name, p.health, p.output_W) for p in pw.supplies] == [
        ("HpeServerPowerSupply bay 1", "OK", 0), ("HpeServerPowerSupply bay 2", "OK", 90)]
    s = redfishread.parse_system(_vendor("telegraf-hpe-ilo-system-dl360-gen10.json"))
    assert (s.model, s.health, s.health_rollup, s.processors, s.memory_GiB) == ("ProLiant DL360 Gen10", "OK", "", 2, 384)


def test_hpe_ilo_thermal_percent_fans_and_ilo4_names():
    df = bmc.parse_redfish_thermal(_vendor("telegraf-hpe-ilo-thermal.json"))
    assert list(zip(df.name, df.reading, df.unit)) == [("01-Inlet Ambient", 19, "degrees C"), ("44-P/S 2 Zone", 34,
                                                       "degrees C"), ("Fan 1", 23, "Percent"), ("Fan 2", 23, "Percent"),
                                                       ("Fan 3", 23, "Percent")]
    assert (df.ucr[0], df.unr[0]) == (42, 47)
    old = bmc.parse_redfish_thermal(_vendor("telegraf-hpe-ilo4-thermal.json"))   # FanName, CurrentReading, Units
    assert list(zip(old.name, old.reading, old.unit))[-1] == ("Fan 1", 17, "Percent")
    f = nodecheck.read_path(REAL / "telegraf-hpe-ilo4-thermal.json")
    assert [(x.component, x.item, x.status) for x in f][-1] == ("fans", "Fan 1", "healthy")


def test_vendor_files_detected_and_healthy():
    names = sorted(p.name for p in REAL.glob("telegraf-*.json"))
    kinds = [nodecheck.detect((REAL / n).read_text()) for n in names]
    assert dict(zip(names, kinds)) == {
        "telegraf-dell-idrac-power.json": "redfish-power", "telegraf-dell-idrac-system-r640.json": "redfish-system",
        "telegraf-dell-idrac-thermal.json": "redfish-thermal", "telegraf-hpe-ilo-power.json": "redfish-power",
        "telegraf-hpe-ilo-system-dl360-gen10.json": "redfish-system", "telegraf-hpe-ilo-thermal.json": "redfish-thermal",
        "telegraf-hpe-ilo4-thermal.json": "redfish-thermal"}
    assert {x.status for n in names for x in nodecheck.read_path(REAL / n)} == {"healthy"}


def test_cisco_cimc_thermal_and_power():
    """Cisco UCS CIMC responses (the iserver docs): RPM fans named *_SPEED, and a server in standby whose supplies
    draw 16 W and deliver 0 W — healthy, not failed."""
    df = bmc.parse_redfish_thermal(_vendor("iserver-cisco-ucsc-c240-m5sn-thermal.json"))
    assert (df.name[0], df.reading[0], df.ucr[0]) == ("MLOM_TEMP", 54, 90)
    fans = df[df.unit == "RPM"]
    assert len(df) == 24 + 13 and len(fans) == 12 and (fans.name.iloc[0], fans.reading.iloc[0]) == ("MOD1_FAN1_SPEED", 7070)
    assert df[df.name == "MOD7_FAN1_SPEED"].status.tolist() == ["absent"]      # State Absent: an empty fan slot
    pw = redfishread.parse_power(_vendor("iserver-cisco-ucsc-c240-m5sn-power.json"))
    assert pw.consumed_W == 324 and [(p.name, p.input_W, p.output_W) for p in pw.supplies] == [
        ("PSU1", 173, 155), ("PSU2", 176, 152)]
    standby = redfishread.parse_power(_vendor("iserver-cisco-ucsc-c220-m6n-power.json"))
    assert standby.consumed_W == 0 and {(p.health, p.input_W, p.output_W) for p in standby.supplies} == {("OK", 16, 0)}
    small = bmc.parse_redfish_thermal(_vendor("iserver-cisco-ucsc-c220-m6n-thermal.json"))
    assert list(zip(small.name, small.reading)) == [("PSU1_TEMP", 26), ("PSU2_TEMP", 24), ("TEMP_SENS_FRONT", 22)]
    for n in ("iserver-cisco-ucsc-c240-m5sn-thermal.json", "iserver-cisco-ucsc-c240-m5sn-power.json",
              "iserver-cisco-ucsc-c220-m6n-thermal.json", "iserver-cisco-ucsc-c220-m6n-power.json"):
        assert {x.status for x in nodecheck.read_path(REAL / n)} == {"healthy"}, n
