"""Redfish Sensor, SensorCollection, Fan and PowerSupply (the newer DMTF schemas) read on real BMC responses from
NVIDIA/libredfish's mockups: OpenBMC of GH200 and GB200, the AMI BMC of a DGX H100, Lenovo XCC, Dell iDRAC
(tests/data/real/redfish/SOURCES.md). Expectations are the files' own fields."""
import json
from pathlib import Path

import pytest

from helpers.ops import nodecheck, redfishsensors as rs

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "redfish"
NEW = {  # file: format nodecheck detects
    "libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-temp0.json": "redfish-sensor",
    "libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-temp1.json": "redfish-sensor",
    "libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-power0.json": "redfish-sensor",
    "libredfish-openbmc-nvidia-gb200-sensor-io-board0-cx7-0-port0-temp.json": "redfish-sensor",
    "libredfish-openbmc-nvidia-gb200-sensors-hgx-gpu0.json": "redfish-sensors",
    "libredfish-ami-nvidia-dgxh100-sensor-energy-gb-sxm6.json": "redfish-sensor",
    "libredfish-ami-nvidia-dgxh100-powersupply-psu0.json": "redfish-powersupply",
    "libredfish-lenovo-xcc-sr670v2-sensor-208l0.json": "redfish-sensor",
    "libredfish-lenovo-xcc-sr670v2-sensor-110l0.json": "redfish-sensor",
    "libredfish-lenovo-xcc-sr670v2-fan-fan-1a-tach.json": "redfish-fan",
    "libredfish-lenovo-xcc-sr670v2-powersupply-psu1.json": "redfish-powersupply",
    "libredfish-idrac-dell-r750-sensor-psu-slot1-outputpower.json": "redfish-sensor",
}


def _doc(name):
    return json.loads((REAL / name).read_text())


def _found(name):
    return [(f.component, f.item, f.status, f.why) for f in nodecheck.read_path(REAL / name)]


def test_detected_by_odata_type():
    assert {n: nodecheck.detect((REAL / n).read_text()) for n in NEW} == NEW
    assert rs.kind({"@odata.type": "#Thermal.v1_7_1.Thermal"}) is None


def test_gh200_gpu_temperatures_and_power():
    t0 = rs.parse_sensor(_doc("libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-temp0.json"))
    assert (t0.id, t0.name, t0.reading_type, t0.physical_context, t0.reading, t0.unit, t0.health, t0.state) == \
        ("HGX_GPU_0_Temp_0", "HGX GPU 0 Temp 0", "Temperature", "GPU", 31.1875, "Cel", "OK", "Enabled")
    assert t0.crossed() is None and t0.upper_critical is None          # bmcweb gives this one no thresholds
    t1 = rs.parse_sensor(_doc("libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-temp1.json"))
    assert (t1.reading, t1.lower_caution, t1.lower_critical, t1.lower_fatal, t1.upper_caution) == (54.0, 0.0, -2.0,
                                                                                                  -8.0, None)
    pw = rs.parse_sensor(_doc("libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-power0.json"))
    assert (pw.reading_type, pw.reading, pw.unit, pw.physical_context) == ("Power", 84.766, "W", "GPU")
    assert _found("libredfish-openbmc-nvidia-gh200-sensor-hgx-gpu0-power0.json") == [
        ("BMC sensors", "HGX GPU 0 Power 0", "healthy", "84.766 W (GPU)")]


def test_gb200_absent_critical_sensor_and_empty_collection():
    s = rs.parse_sensor(_doc("libredfish-openbmc-nvidia-gb200-sensor-io-board0-cx7-0-port0-temp.json"))
    assert (s.reading, s.health, s.state, s.upper_caution, s.upper_critical) == (None, "Critical", "Absent", 70.0, 75.0)
    [f] = _found("libredfish-openbmc-nvidia-gb200-sensor-io-board0-cx7-0-port0-temp.json")
    assert f[:3] == ("BMC sensors", "IO Board 0 CX7 0 Port 0 Temp", "healthy") and "Health Critical" in f[3]
    assert rs.parse_sensors(_doc("libredfish-openbmc-nvidia-gb200-sensors-hgx-gpu0.json")) == ()
    assert [x[2] for x in _found("libredfish-openbmc-nvidia-gb200-sensors-hgx-gpu0.json")] == ["healthy"]


def test_dgx_energy_counter_and_psu_without_status():
    e = rs.parse_sensor(_doc("libredfish-ami-nvidia-dgxh100-sensor-energy-gb-sxm6.json"))
    assert (e.reading_type, e.reading, e.unit, e.upper_caution, e.upper_critical, e.health) == \
        ("EnergyJoules", 3537175.605, "", 272850, 272850, "OK")
    assert e.counter and e.crossed() == ("UpperCritical", 272850)
    [f] = _found("libredfish-ami-nvidia-dgxh100-sensor-energy-gb-sxm6.json")
    assert f[2] == "healthy" and "3537175.605 EnergyJoules" in f[3] and "not a limit" in f[3]
    p = rs.parse_power_supply(_doc("libredfish-ami-nvidia-dgxh100-powersupply-psu0.json"))
    assert (p.id, p.model, p.health, p.state, p.capacity_W) == ("PSU0", "01", "", "", None)
    assert p.metrics_uri == "/redfish/v1/Chassis/DGX/PowerSubsystem/PowerSupplies/PSU0/Metrics"
    assert _found("libredfish-ami-nvidia-dgxh100-powersupply-psu0.json")[0][:3] == ("PSUs", "PSU0", "healthy")


def test_lenovo_sensors_fan_and_psu():
    a = rs.parse_sensor(_doc("libredfish-lenovo-xcc-sr670v2-sensor-208l0.json"))
    assert (a.name, a.reading, a.unit, a.upper_caution, a.upper_critical, a.upper_fatal, a.lower_caution) == \
        ("Ambient Temp", 19, "C", 43, 46, 50, None)
    assert _found("libredfish-lenovo-xcc-sr670v2-sensor-208l0.json") == [
        ("BMC sensors", "Ambient Temp (208L0)", "healthy", "19 C (Intake)")]
    d = rs.parse_sensor(_doc("libredfish-lenovo-xcc-sr670v2-sensor-110l0.json"))
    assert (d.name, d.reading, d.health, d.state) == ("PCIe 15 Temp", None, "", "Disabled")
    assert [x[2] for x in _found("libredfish-lenovo-xcc-sr670v2-sensor-110l0.json")] == ["healthy"]
    f = rs.parse_fan(_doc("libredfish-lenovo-xcc-sr670v2-fan-fan-1a-tach.json"))
    assert (f.name, f.health, f.speed_RPM, f.speed_percent) == ("Fan 1A Tach", "OK", 6431, None)   # 6431 "percent"
    assert "not a percentage" in f.note
    assert _found("libredfish-lenovo-xcc-sr670v2-fan-fan-1a-tach.json")[0][:3] == ("fans", "Fan 1A Tach", "healthy")
    p = rs.parse_power_supply(_doc("libredfish-lenovo-xcc-sr670v2-powersupply-psu1.json"))
    assert (p.name, p.model, p.health, p.state, p.capacity_W) == ("Power Supply 1", "LENOVO-SP57B07051", "OK",
                                                                  "Enabled", 2400)


def test_dell_psu_output_sensor_counts_for_psus():
    s = rs.parse_sensor(_doc("libredfish-idrac-dell-r750-sensor-psu-slot1-outputpower.json"))
    assert (s.name, s.reading, s.unit, s.physical_context, s.upper_critical) == ("OutputPowerSensor", 273.0, "W",
                                                                                 "PowerSupply", None)
    assert _found("libredfish-idrac-dell-r750-sensor-psu-slot1-outputpower.json") == [
        ("PSUs", "OutputPowerSensor (PSU.Slot.1_OutputPower)", "healthy", "273 W (PowerSupply)")]


def test_verdicts_from_thresholds_and_health():
    base = _doc("libredfish-lenovo-xcc-sr670v2-sensor-208l0.json")    # Ambient Temp: 43 / 46 / 50

    def status(**kw):
        d = {**base, **kw}
        return nodecheck.noderules_ext.findings("redfish-sensor", json.dumps(d), "x")[0].status
    assert [status(Reading=r) for r in (42, 43, 46, 51)] == ["healthy", "degraded", "failed", "failed"]
    assert status(Status={"Health": "Warning", "State": "Enabled"}) == "degraded"
    assert status(Status={"Health": "Critical", "State": "Enabled"}, Reading=None) == "failed"
    assert status(Status={"Health": "Critical", "State": "Absent"}, Reading=None) == "healthy"
    fan = _doc("libredfish-lenovo-xcc-sr670v2-fan-fan-1a-tach.json")
    assert nodecheck.noderules_ext.findings("redfish-fan", json.dumps(
        {**fan, "Status": {"Health": "Critical", "State": "Enabled"}}), "x")[0].status == "failed"


def test_bad_input_named(tmp_path):
    s = _doc("libredfish-lenovo-xcc-sr670v2-sensor-208l0.json")
    with pytest.raises(ValueError, match="Status is str"):
        rs.parse_sensor({**s, "Status": "OK"})
    with pytest.raises(ValueError, match="Reading"):
        rs.parse_sensor({**s, "Reading": "N/A"})
    with pytest.raises(ValueError, match="Thresholds.UpperCritical"):
        rs.parse_sensor({**s, "Thresholds": {"UpperCritical": 46}})
    coll = _doc("libredfish-openbmc-nvidia-gb200-sensors-hgx-gpu0.json")
    with pytest.raises(ValueError, match="Members is dict"):
        rs.parse_sensors({**coll, "Members": {}})
    with pytest.raises(ValueError, match=r"links only .*\$expand=\. .*member Sensor files"):
        rs.parse_sensors({**coll, "Members": [{"@odata.id": "/redfish/v1/Chassis/HGX_GPU_0/Sensors/T0"}]})
    assert [x.name for x in rs.parse_sensors({**coll, "Members": [s]})] == ["Ambient Temp"]     # expanded
    with pytest.raises(ValueError, match="SpeedPercent"):
        rs.parse_fan({**_doc("libredfish-lenovo-xcc-sr670v2-fan-fan-1a-tach.json"), "SpeedPercent": 50})
    with pytest.raises(ValueError, match="not a Redfish Sensor"):
        rs.parse_sensor({"@odata.type": "#Fan.v1_1_1.Fan"})
    p = tmp_path / "sensors.json"
    p.write_text(json.dumps({**coll, "Members": [{"@odata.id": "/x"}]}))
    with pytest.raises(ValueError, match="looks like redfish-sensors but cannot be read: .*expand"):
        nodecheck.read_path(p)
