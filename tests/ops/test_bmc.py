"""ipmitool sensor and Redfish Thermal readings judged against their thresholds (helpers.ops.bmc)."""
import json
from pathlib import Path

import pytest

from helpers.ops import bmc

REAL = Path(__file__).parents[1] / "data" / "real"


def test_a_bmc_that_prints_ok_above_critical_is_caught():
    df = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "openbmc-3743-ok-above-threshold.txt").read_text())
    row = df.iloc[0]
    assert row.bmc_status == "ok" and row.status == "critical" and row.ucr == 40.0
    assert len(bmc.problems(df)) == 1


def test_supermicro_and_hpe():
    sm = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "supermicro-ipmi-fancontrol-ng-1.txt").read_text())
    assert sm.status.value_counts().to_dict() == {"ok": 8, "absent": 2}
    hpe = bmc.parse_ipmitool_sensor((REAL / "ipmitool-sensor" / "hpe-dl360p-pve-mods-93.txt").read_text())
    assert hpe.status.value_counts().to_dict() == {"ok": 8, "discrete": 2}
    assert hpe.loc[hpe.name == "02-CPU 1", "ucr"].item() == 70.0
    assert bmc.problems(sm).empty and bmc.problems(hpe).empty


def test_redfish_thermal_mockup():
    df = bmc.parse_redfish_thermal(json.loads((REAL / "redfish" / "dmtf-mockup-rackmount1-thermal.json").read_text()))
    assert list(df.status) == ["ok", "disabled", "ok", "ok", "ok"]
    assert df.loc[df.name == "CPU1 Temp", "unc"].item() == 42.0 and list(df.reading[3:]) == [2100.0, 2050.0]


def test_thresholds_and_errors():
    t = {"lnr": 0, "lcr": 5, "lnc": 10, "unc": 80, "ucr": 90, "unr": 95}
    assert [bmc.judge(x, t) for x in (50, 85, 92, 99, 3)] == ["ok", "warning", "critical", "non-recoverable", "critical"]
    with pytest.raises(ValueError, match="fields"):
        bmc.parse_ipmitool_sensor("CPU Temp | 31 | degrees C\n")
    with pytest.raises(ValueError, match="Thermal"):
        bmc.parse_redfish_thermal({"Id": "Power"})
