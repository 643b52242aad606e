"""Readers for the newer DMTF schemas that the BMCs of NVIDIA GH200 / GB200 / HGX baseboards (OpenBMC's bmcweb), the
AMI BMC of a DGX H100, Dell iDRAC 9 and Lenovo XCC serve beside or instead of ``Thermal``/``Power``
(:mod:`helpers.ops.redfishread`): ``Sensor`` (``/redfish/v1/Chassis/<id>/Sensors/<sensor>``), a ``SensorCollection``
fetched with ``?$expand=.``, ``Fan`` (``ThermalSubsystem/Fans/<fan>``) and ``PowerSupply``
(``PowerSubsystem/PowerSupplies/<psu>``) (chapter 27).

A Sensor carries its own thresholds (``Thresholds.UpperCaution.Reading`` …, any of them null or missing) and units
as served (``ReadingUnits``: bmcweb prints UCUM ``Cel``, Lenovo XCC ``C``; the AMI BMC of a DGX H100 prints none for
its energy counters). Fan and PowerSupply have no thresholds: their verdict is ``Status.Health``; a PowerSupply's
readings live in its linked ``Metrics`` (PowerSupplyMetrics) or in the chassis' Sensors.

    from helpers.ops import redfishsensors as rs
    rs.parse_sensor(doc)          # RedfishSensor(id, name, reading_type, …, reading, unit, upper_critical, …)
    rs.parse_sensors(doc)         # (RedfishSensor, …) from an expanded SensorCollection
    rs.parse_fan(doc)             # RedfishFan(…, speed_percent, speed_RPM)
    rs.parse_power_supply(doc)    # RedfishPowerSupply(…, capacity_W, metrics_uri)
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import inputs
from helpers.ops.redfishread import _object, _status

KINDS = {"Sensor": "sensor", "SensorCollection": "sensors", "Fan": "fan", "PowerSupply": "powersupply"}
LEVELS = ("Caution", "Critical", "Fatal")
COUNTERS = ("EnergyJoules", "EnergykWh", "EnergyWh")      # cumulative: a threshold on them is not a limit


def kind(doc: dict) -> str | None:
    """sensor / sensors / fan / powersupply from ``@odata.type`` (``#Sensor.v1_7_0.Sensor`` …); None otherwise."""
    name = str(doc.get("@odata.type", "")).lstrip("#").split(".")[0]
    return KINDS.get(name)


def _num(v, what: str) -> float | None:
    if v is None:
        return None
    return inputs.number(v, what=what, allow_negative=True, integer=type(v) is int)


def _name(doc: dict) -> tuple[str, str]:
    sid = str(doc.get("Id") or doc.get("Name") or "?")
    return sid, str(doc.get("Name") or sid)


@dataclass(frozen=True)
class RedfishSensor:
    id: str
    name: str
    reading_type: str            # Temperature / Rotational / Power / Voltage / Current / EnergyJoules … ("" if none)
    physical_context: str        # GPU / PowerSupply / Fan / Intake / SystemBoard … ("" if none)
    reading: float | None        # in ``unit``; None when the BMC prints null (absent, disabled, not read)
    unit: str                    # ReadingUnits as served: Cel / C / RPM / W / V / A / % / "" (not given)
    health: str                  # OK / Warning / Critical / "" (not reported)
    state: str                   # Enabled / Absent / Disabled / …
    lower_caution: float | None = None        # thresholds, in ``unit``; None = not set (missing or null)
    upper_caution: float | None = None
    lower_critical: float | None = None
    upper_critical: float | None = None
    lower_fatal: float | None = None
    upper_fatal: float | None = None

    @property
    def counter(self) -> bool:
        """An energy counter only grows; the DGX H100's AMI BMC still gives its GPU energy an UpperCritical."""
        return self.reading_type in COUNTERS

    def crossed(self) -> tuple[str, float] | None:
        """The most severe threshold the reading is at or beyond (``("UpperCritical", 75.0)``), None if none."""
        if self.reading is None:
            return None
        for lvl in reversed(LEVELS):
            lo, hi = getattr(self, f"lower_{lvl.lower()}"), getattr(self, f"upper_{lvl.lower()}")
            if hi is not None and self.reading >= hi:
                return f"Upper{lvl}", hi
            if lo is not None and self.reading <= lo:
                return f"Lower{lvl}", lo
        return None


def _sensor(doc: dict) -> RedfishSensor:
    sid, name = _name(doc)
    what = f"sensor {sid}"
    th = _object(doc, "Thresholds", what)
    lim = {}
    for side in ("Lower", "Upper"):
        for lvl in LEVELS:
            t = th.get(f"{side}{lvl}")
            if t is not None and not isinstance(t, dict):
                raise ValueError(f"{what}: Thresholds.{side}{lvl} is {t!r:.40}, Redfish gives an object "
                                 '{"Reading": <number>}')
            lim[f"{side.lower()}_{lvl.lower()}"] = _num((t or {}).get("Reading"),
                                                        f"{what} Thresholds.{side}{lvl}.Reading")
    return RedfishSensor(sid, name, str(doc.get("ReadingType") or ""), str(doc.get("PhysicalContext") or ""),
                         _num(doc.get("Reading"), f"{what} Reading (a number or null)"),
                         str(doc.get("ReadingUnits") or ""), *_status(doc, what), **lim)


def parse_sensor(doc: dict) -> RedfishSensor:
    """One ``#Sensor.v1_x.Sensor``."""
    if not isinstance(doc, dict) or kind(doc) != "sensor":
        raise ValueError("not a Redfish Sensor resource (@odata.type is not #Sensor.…)")
    return _sensor(doc)


def parse_sensors(doc: dict) -> tuple:
    """The Sensors of a ``SensorCollection`` fetched with ``?$expand=.`` (each member a full Sensor). A collection
    whose members are only ``{"@odata.id": …}`` links is refused: it holds no readings. An empty one (the GB200 BMC
    lists no sensors under ``Chassis/HGX_GPU_0``) is ()."""
    if not isinstance(doc, dict) or kind(doc) != "sensors":
        raise ValueError("not a Redfish SensorCollection (@odata.type is not #SensorCollection.…)")
    members = doc.get("Members")
    if not isinstance(members, list) or not all(isinstance(m, dict) for m in members):
        raise ValueError(f"SensorCollection Members is {type(members).__name__} {members!r:.60}, Redfish gives a "
                         "list of objects")
    links = [m for m in members if set(m) <= {"@odata.id"}]
    if links:
        raise ValueError(f"SensorCollection {doc.get('@odata.id', '')} lists {len(links)} of {len(members)} members "
                         f"as links only ({links[0].get('@odata.id', '?')}): fetch it with ?$expand=. "
                         "(GET …/Sensors?$expand=.) or pass the member Sensor files instead")
    return tuple(_sensor(m) for m in members)


@dataclass(frozen=True)
class RedfishFan:
    id: str
    name: str
    health: str
    state: str
    speed_percent: float | None  # SpeedPercent.Reading, None when missing or not a percentage
    speed_RPM: float | None      # SpeedPercent.SpeedRPM
    note: str = ""               # what the reader set aside (a "percent" above 100)


def parse_fan(doc: dict) -> RedfishFan:
    """One ``#Fan.v1_x.Fan``. iDRAC gives only ``SpeedRPM``; Lenovo XCC copies the RPM into ``SpeedPercent.Reading``
    (6431 beside ``SpeedRPM`` 6431): a "percent" above 100 is set aside with a note, not read as a percentage."""
    if not isinstance(doc, dict) or kind(doc) != "fan":
        raise ValueError("not a Redfish Fan resource (@odata.type is not #Fan.…)")
    sid, name = _name(doc)
    what = f"fan {sid}"
    sp = _object(doc, "SpeedPercent", what)
    pct = _num(sp.get("Reading"), f"{what} SpeedPercent.Reading")
    rpm = _num(sp.get("SpeedRPM"), f"{what} SpeedPercent.SpeedRPM")
    note = ""
    if pct is not None and not 0 <= pct <= 100:
        note = f"SpeedPercent.Reading {pct:g} is not a percentage" + (" (the RPM copied there)" if pct == rpm else "")
        pct = None
    return RedfishFan(sid, name, *_status(doc, what), pct, rpm, note)


@dataclass(frozen=True)
class RedfishPowerSupply:
    id: str
    name: str
    model: str
    health: str                  # "" when the BMC gives no Status (the DGX H100's AMI BMC)
    state: str
    capacity_W: float | None     # PowerCapacityWatts
    metrics_uri: str             # Metrics.@odata.id: the PowerSupplyMetrics with the input/output watts


def parse_power_supply(doc: dict) -> RedfishPowerSupply:
    """One ``#PowerSupply.v1_x.PowerSupply``: identity, health and capacity; its readings are in ``metrics_uri``."""
    if not isinstance(doc, dict) or kind(doc) != "powersupply":
        raise ValueError("not a Redfish PowerSupply resource (@odata.type is not #PowerSupply.…)")
    sid, name = _name(doc)
    what = f"power supply {sid}"
    cap = doc.get("PowerCapacityWatts")
    return RedfishPowerSupply(sid, name, str(doc.get("Model") or "").strip(), *_status(doc, what),
                              None if cap is None else inputs.number(cap, what=f"{what} PowerCapacityWatts",
                                                                     integer=type(cap) is int),
                              str(_object(doc, "Metrics", what).get("@odata.id") or ""))
