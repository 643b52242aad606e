"""Out-of-band readings from the BMC: ``ipmitool sensor`` text and Redfish Thermal JSON, parsed into one table and
judged against their own thresholds (chapter 27, "BMC and IPMI").

The BMC's status column is not trusted: the status is recomputed from the reading and the thresholds the BMC itself
publishes (some BMCs print ``ok`` above a critical threshold: openbmc/openbmc#3743, in tests/data/real).

    from helpers.ops import bmc
    df = bmc.parse_ipmitool_sensor(open("sensor.txt").read())    # name, reading, unit, bmc_status, thresholds, status
    df = bmc.parse_redfish_thermal(json.load(open("thermal.json")))
    bmc.problems(df)                                             # the rows that are not ok
    ipmitool -I lanplus -H BMC -U USER -E sensor                 # how the text is obtained on a real server
"""
from __future__ import annotations

import math

import pandas as pd

from helpers.core import inputs

# ipmitool sensor columns (ipmitool(1)): name | reading | unit | status | lnr | lcr | lnc | unc | ucr | unr
COLUMNS = ["name", "reading", "unit", "bmc_status", "lnr", "lcr", "lnc", "unc", "ucr", "unr"]
THRESHOLDS = ["lnr", "lcr", "lnc", "unc", "ucr", "unr"]


def _num(x: str) -> float:
    x = x.strip()
    if x in ("", "na", "N/A"):
        return math.nan
    try:
        return float(int(x, 16)) if x.lower().startswith("0x") else float(x)   # discrete sensors print hex (0x0180)
    except ValueError:
        return math.nan


def judge(reading: float, t: dict[str, float]) -> str:
    """ok / warning (beyond non-critical) / critical / non-recoverable / absent, from the thresholds alone."""
    if math.isnan(reading):
        return "absent"
    def beyond(lo: str, hi: str) -> bool:
        return (not math.isnan(t.get(lo, math.nan)) and reading <= t[lo]) or \
               (not math.isnan(t.get(hi, math.nan)) and reading >= t[hi])
    if beyond("lnr", "unr"):
        return "non-recoverable"
    if beyond("lcr", "ucr"):
        return "critical"
    if beyond("lnc", "unc"):
        return "warning"
    return "ok"


def parse_ipmitool_sensor(text: str) -> pd.DataFrame:
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != len(COLUMNS):
            raise ValueError(f"line {n}: {len(parts)} '|' fields, ipmitool sensor prints {len(COLUMNS)}: {line!r}")
        row = dict(zip(COLUMNS, parts))
        row["discrete"] = row["unit"] == "discrete"
        row["reading"] = _num(row["reading"])
        for k in THRESHOLDS:
            row[k] = _num(row[k])
        rows.append(row)
    df = pd.DataFrame(rows)
    df["status"] = [("discrete" if r.discrete else judge(r.reading, r._asdict())) for r in df.itertuples()]
    df["source"] = "ipmitool"
    return df


def parse_redfish_thermal(doc: dict) -> pd.DataFrame:
    """A Redfish ``Thermal`` resource: Temperatures (°C) and Fans, with Redfish's threshold names mapped to IPMI's."""
    if "Temperatures" not in doc and "Fans" not in doc:
        raise ValueError("not a Redfish Thermal resource (no Temperatures or Fans); GET /redfish/v1/Chassis/<id>/Thermal")
    names = {"LowerThresholdFatal": "lnr", "LowerThresholdCritical": "lcr", "LowerThresholdNonCritical": "lnc",
             "UpperThresholdNonCritical": "unc", "UpperThresholdCritical": "ucr", "UpperThresholdFatal": "unr"}
    rows = []
    # iLO 4 (Thermal.v1_1_0) names a fan FanName and prints CurrentReading / Units where later BMCs print
    # Name, Reading and ReadingUnits (tests/data/real/redfish/telegraf-hpe-ilo4-thermal.json)
    for kind, items, reading_key in (("temperature", doc.get("Temperatures", []), "ReadingCelsius"),
                                     ("fan", doc.get("Fans", []), "Reading")):
        for it in items:
            st = it.get("Status", {})
            reading = it.get(reading_key, it.get("CurrentReading"))
            name = str(it.get("Name") or it.get("FanName") or it.get("MemberId", "?"))
            row = {"name": name, "reading": math.nan if reading is None else
                   inputs.number(reading, what=f"Redfish {name} reading", allow_negative=True),
                   "unit": "degrees C" if kind == "temperature" else str(it.get("ReadingUnits") or it.get("Units", "")),
                   "bmc_status": st.get("Health") or st.get("State", ""), "discrete": False}
            row.update({v: inputs.number(it[k], what=f"Redfish {name} {k}", allow_negative=True)
                        if it.get(k) is not None else math.nan for k, v in names.items()})
            row["status"] = "disabled" if st.get("State") == "Disabled" else judge(row["reading"], row)
            row["source"] = "redfish"
            rows.append(row)
    return pd.DataFrame(rows)


def problems(df: pd.DataFrame) -> pd.DataFrame:
    """Sensors that need attention (warning or worse), and those where the BMC's own status disagrees."""
    bad = df["status"].isin(["warning", "critical", "non-recoverable"])
    return df.loc[bad, ["name", "reading", "unit", "bmc_status", "status", "unc", "ucr", "source"]]
