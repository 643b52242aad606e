"""Redfish Thermal, Power, ComputerSystem and Processor, read on DMTF's public mockup and on real Dell iDRAC, HPE iLO,
Cisco CIMC, Supermicro, Lenovo XCC and OpenBMC (NVIDIA HGX/GH200/GB200/BlueField) responses
(tests/data/real/redfish/SOURCES.md). Expectations are the files' own fields."""
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


def test_supermicro_hgx_server_thermal_power_system():
    """A Supermicro SYS-821GE-TNHR (8-GPU HGX H100) captured by DMTF's mockup creator (NVIDIA/libredfish)."""
    df = bmc.parse_redfish_thermal(_vendor("libredfish-supermicro-sys-821ge-tnhr-thermal.json"))
    assert len(df) == 44 and df.unit.value_counts().to_dict() == {"degrees C": 38, "RPM": 6}
    gpu = df[df.name == "GPU Temp"].iloc[0]
    assert (gpu.reading, gpu.ucr, gpu.unr, gpu.status) == (37, 87, 89, "ok")
    assert df[df.status == "absent"].name.tolist() == ["M2_SSD1 Temp", "M2_SSD2 Temp"]     # State Absent, no reading
    fans = df[df.unit == "RPM"]
    assert list(zip(fans.name, fans.reading, fans.lcr))[:2] == [("FAN9", 2240, 420), ("FAN10", 2240, 420)]
    pw = redfishread.parse_power(_vendor("libredfish-supermicro-sys-821ge-tnhr-power.json"))
    assert pw.consumed_W == 2161 and len(pw.supplies) == 8 and {p.health for p in pw.supplies} == {"OK"}
    assert (pw.supplies[0].name, pw.supplies[0].input_W, pw.supplies[0].output_W) == ("Power Supply Bay 1", 361, 329)
    # bays 6 and 7 (PWS-DF009-2F) print every reading null: no reading, not 0 W
    assert [(p.name, p.input_W, p.output_W) for p in pw.supplies[5:7]] == [("Power Supply Bay 6", None, None),
                                                                         ("Power Supply Bay 7", None, None)]
    s = redfishread.parse_system(_vendor("libredfish-supermicro-sys-821ge-tnhr-system.json"))
    assert (s.name, s.model, s.power_state, s.health, s.health_rollup, s.processors, s.memory_GiB) == \
        ("System", "SYS-821GE-TNHR", "On", "OK", "", 2, 2048)


def test_lenovo_xcc_output_watts_and_gpu_processor():
    """Lenovo XCC (ThinkSystem SR670 V2): LastPowerOutputWatts 635 beside a measured PowerOutputWatts 179 out of
    PowerInputWatts 199 — the measured value is the output; the four outputs (632 W) fit the 708 W consumed."""
    pw = redfishread.parse_power(_vendor("libredfish-lenovo-xcc-sr670v2-power.json"))
    assert pw.consumed_W == 708
    assert [(p.name, p.input_W, p.output_W) for p in pw.supplies] == [
        ("PSU1", 199, 179), ("PSU2", 169, 151), ("PSU3", 170, 151), ("PSU4", 168, 151)]
    assert all(p.output_W <= p.input_W for p in pw.supplies)
    gpu = redfishread.parse_processor(_vendor("libredfish-lenovo-xcc-sr670v2-processor-gpu1.json"))
    assert (gpu.id, gpu.type, gpu.model, gpu.manufacturer, gpu.health, gpu.state) == \
        ("GPU1", "GPU", "", "NVIDIA Corporation", "", "")        # XCC gives this GPU no Status and no Model
    s = redfishread.parse_system(_vendor("libredfish-lenovo-xcc-sr670v2-system.json"))
    assert (s.name, s.model, s.health_rollup, s.processors, s.memory_GiB) == \
        ("XCC-7Z23-J105958B", "ThinkSystem SR670 V2", "OK", 2, 1024)
    df = bmc.parse_redfish_thermal(_vendor("libredfish-lenovo-xcc-sr670v2-thermal.json"))
    assert len(df) == 31 and (df.unit == "RPM").sum() == 10
    # empty PCIe slots (State Disabled, "Health": null) and BoardAverageTemp (State Absent)
    assert df.status.value_counts().to_dict() == {"ok": 24, "disabled": 6, "absent": 1}
    amb = df.iloc[0]
    assert (amb["name"], amb.reading, amb.unc, amb.ucr, amb.unr) == ("Ambient Temp", 19, 43, 46, 50)
    assert df[df.name == "CPU 1 DTS"].reading.item() == -51       # a margin below Tjmax, printed as degrees C
    f = nodecheck.read_path(REAL / "libredfish-lenovo-xcc-sr670v2-processor-gpu1.json")
    assert [(x.component, x.item, x.why) for x in f] == [("GPUs", "GPU GPU1", "Health ?, State ?")]


def test_openbmc_gpu_processors_and_system():
    """GPUs as Redfish Processors served by OpenBMC: the HGX H100 baseboard's BMC inside a DGX H100 (GPU_SXM_1), the
    GH200 and GB200 BMCs (GPU_0); the GB200 one has no Model."""
    sxm = redfishread.parse_processor(_vendor("libredfish-openbmc-nvidia-dgxh100-hgx-processor-gpu-sxm1.json"))
    assert (sxm.id, sxm.type, sxm.model, sxm.manufacturer, sxm.health, sxm.state) == \
        ("GPU_SXM_1", "GPU", "H100 80GB HBM3", "NVIDIA", "OK", "Enabled")
    gh = redfishread.parse_processor(_vendor("libredfish-openbmc-nvidia-gh200-processor-gpu0.json"))
    assert (gh.id, gh.model, gh.health, gh.state) == ("GPU_0", "NVIDIA GH200 96GB HBM3", "OK", "Enabled")
    gb = redfishread.parse_processor(_vendor("libredfish-openbmc-nvidia-gb200-processor-gpu0.json"))
    assert (gb.id, gb.type, gb.model, gb.manufacturer, gb.health) == ("GPU_0", "GPU", "", "", "OK")
    s = redfishread.parse_system(_vendor("libredfish-openbmc-nvidia-gh200-system.json"))
    assert (s.name, s.model, s.power_state, s.health, s.health_rollup, s.processors, s.memory_GiB) == \
        ("System_0", "", "On", "OK", "OK", 2, 960)
    f = nodecheck.read_path(REAL / "libredfish-openbmc-nvidia-dgxh100-hgx-processor-gpu-sxm1.json")
    assert [(x.component, x.item, x.status) for x in f] == [("GPUs", "GPU GPU_SXM_1 H100 80GB HBM3", "healthy")]


def test_openbmc_bluefield_thermal_null_reading_marked_critical():
    """bmcweb's Thermal on a BlueField-3 card: float readings, LowerThresholdCritical 0.0, and two port sensors with
    ReadingCelsius null that the BMC marks Health Critical (State Enabled)."""
    df = bmc.parse_redfish_thermal(_vendor("libredfish-openbmc-nvidia-bluefield3-card1-thermal.json"))
    assert list(zip(df.name, df.reading.fillna(-1), df.bmc_status)) == [
        ("bluefield temp", 59, "OK"), ("ddr temp", 75, "OK"), ("p0 temp", -1, "Critical"), ("p1 temp", -1, "Critical")]
    assert (df.lcr[0], df.unc[0], df.ucr[0]) == (0, 95, 105)


def test_nodecheck_reports_a_sensor_the_bmc_marks_critical_without_a_reading():
    f = nodecheck.read_path(REAL / "libredfish-openbmc-nvidia-bluefield3-card1-thermal.json")
    assert {(x.item, x.status) for x in f} >= {("p0 temp", "failed"), ("p1 temp", "failed")}


def test_new_vendor_files_detected_and_read():
    # the 12 Thermal/Power/ComputerSystem/Processor files (the Sensor/Fan/PowerSupply ones: test_redfishsensors.py)
    names = sorted(f"libredfish-{n}.json" for n in (
        "lenovo-xcc-sr670v2-power", "lenovo-xcc-sr670v2-processor-gpu1", "lenovo-xcc-sr670v2-system",
        "lenovo-xcc-sr670v2-thermal", "openbmc-nvidia-bluefield3-card1-thermal",
        "openbmc-nvidia-dgxh100-hgx-processor-gpu-sxm1", "openbmc-nvidia-gb200-processor-gpu0",
        "openbmc-nvidia-gh200-processor-gpu0", "openbmc-nvidia-gh200-system", "supermicro-sys-821ge-tnhr-power",
        "supermicro-sys-821ge-tnhr-system", "supermicro-sys-821ge-tnhr-thermal"))
    assert len(names) == 12 and all((REAL / n).is_file() for n in names)
    kinds = {n: nodecheck.detect((REAL / n).read_text()) for n in names}
    assert {n.rsplit("-", 1)[-1][:-5]: k for n, k in kinds.items() if "processor" not in n} == {
        "thermal": "redfish-thermal", "power": "redfish-power", "system": "redfish-system"}
    assert {k for n, k in kinds.items() if "processor" in n} == {"redfish-processor"}
    bad = {(n, x.item, x.status) for n in names for x in nodecheck.read_path(REAL / n) if x.status != "healthy"}
    assert bad == {("libredfish-openbmc-nvidia-bluefield3-card1-thermal.json", f"p{i} temp", "failed") for i in (0, 1)}


def test_bad_redfish_input_gives_a_clear_error():
    # OpenBMC / XCC ThermalSubsystem links Fans as an object: another schema, not a Thermal resource
    assert redfishread.kind({"@odata.type": "#ThermalSubsystem.v1_0_0.ThermalSubsystem",
                             "Fans": {"@odata.id": "/redfish/v1/Chassis/1/ThermalSubsystem/Fans"}}) is None
    assert redfishread.kind({"Fans": {"@odata.id": "/x"}}) is None
    assert redfishread.kind({"@odata.type": "#ProcessorCollection.ProcessorCollection", "Members": []}) is None
    with pytest.raises(ValueError, match="Status.State"):       # Huawei's Atlas docs print "State": true
        redfishread.parse_processor({"ProcessorType": "GPU", "Status": {"Health": "OK", "State": True}})
    with pytest.raises(ValueError, match="PowerSupplies"):
        redfishread.parse_power({"PowerControl": [], "PowerSupplies": {"0": {}}})
    with pytest.raises(ValueError, match="PowerOutputWatts"):
        redfishread.parse_power({"PowerSupplies": [{"Name": "PSU1", "PowerOutputWatts": "N/A"}]})
    with pytest.raises(ValueError, match="Status"):
        redfishread.parse_system({"ProcessorSummary": {"Count": 2}, "Status": "OK"})
    with pytest.raises(ValueError, match="Power"):
        redfishread.parse_power(["not", "a", "resource"])
