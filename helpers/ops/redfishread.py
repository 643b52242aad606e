"""Readers for the Redfish resources a BMC serves about a GPU node besides ``Thermal`` (read by
:func:`helpers.ops.bmc.parse_redfish_thermal`): ``Power`` (power supplies, consumed watts), ``ComputerSystem``
(power state, health rollup, processor and memory summary) and ``Processor`` (CPUs, and GPUs/FPGAs/accelerators,
which vendors expose as Processors with ``ProcessorType`` "GPU"/"Accelerator"/"FPGA") (chapter 27).

Health is the resource's own ``Status.Health`` (OK / Warning / Critical); a resource whose ``Status.State`` is
``Absent`` is an empty bay, not a failure.

    from helpers.ops import redfishread
    redfishread.parse_power(doc)        # RedfishPower(consumed_W, supplies=(RedfishPSU…))
    redfishread.parse_system(doc)       # RedfishSystem(…)
    redfishread.parse_processor(doc)    # RedfishProcessor(…)
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.core import inputs


def kind(doc: dict) -> str | None:
    """thermal / power / system / processor, from ``@odata.type`` or, without it, from the keys present."""
    t = str(doc.get("@odata.type", ""))
    for k, names in (("thermal", ("Thermal.",)), ("power", ("Power.",)), ("system", ("ComputerSystem.",)),
                     ("processor", ("Processor.",))):
        if any(n in t for n in names) and "Collection" not in t:
            return k
    if "Temperatures" in doc or "Fans" in doc:
        return "thermal"
    if "PowerSupplies" in doc or "PowerControl" in doc:
        return "power"
    if "ProcessorSummary" in doc:
        return "system"
    if "ProcessorType" in doc:
        return "processor"
    return None


def _status(d: dict) -> tuple[str, str]:
    st = d.get("Status") or {}
    return st.get("Health") or "", st.get("State") or ""


@dataclass(frozen=True)
class RedfishPSU:
    name: str
    health: str                  # OK / Warning / Critical / "" (not reported)
    state: str                   # Enabled / Absent / …
    input_W: float | None
    output_W: float | None


@dataclass(frozen=True)
class RedfishPower:
    consumed_W: float | None     # PowerControl[0].PowerConsumedWatts
    supplies: tuple


def parse_power(doc: dict) -> RedfishPower:
    if kind(doc) != "power":
        raise ValueError("not a Redfish Power resource (no PowerSupplies or PowerControl)")
    ctl = (doc.get("PowerControl") or [{}])[0]
    psus = doc.get("PowerSupplies", [])
    names = [p.get("Name") or p.get("MemberId", "?") for p in psus]
    return RedfishPower(_first(ctl, "PowerConsumedWatts"),
                        tuple(RedfishPSU(_psu_name(p, n, names.count(n) > 1), *_status(p), _first(p, "PowerInputWatts"),
                                         _first(p, "LastPowerOutputWatts", "PowerOutputWatts"))
                              for p, n in zip(psus, names)))


def _first(d: dict, *keys) -> float | None:
    """The first of ``keys`` that is present and not null, as watts: iDRAC prints ``"LastPowerOutputWatts": null`` and
    the reading in ``PowerOutputWatts`` (Power.v1_5_0), iLO the reverse (tests/data/real/redfish/telegraf-*-power.json)."""
    k = next((k for k in keys if d.get(k) is not None), None)
    return None if k is None else inputs.number(d[k], what=f"Redfish {k}", integer=type(d[k]) is int)


def _psu_name(p: dict, name: str, shared: bool) -> str:
    """iLO names every supply "HpeServerPowerSupply": then the bay (Oem.Hpe.BayNumber) or MemberId tells them apart."""
    if not shared:
        return name
    oem = p.get("Oem") if isinstance(p.get("Oem"), dict) else {}
    bay = next((v["BayNumber"] for v in oem.values() if isinstance(v, dict) and v.get("BayNumber") is not None), None)
    return f"{name} bay {bay}" if bay is not None else f"{name} {p.get('MemberId', '?')}"


@dataclass(frozen=True)
class RedfishSystem:
    name: str
    model: str
    power_state: str             # On / Off / …
    health: str
    health_rollup: str           # the worst health of everything below the system
    processors: int | None
    memory_GiB: float | None


def parse_system(doc: dict) -> RedfishSystem:
    if kind(doc) != "system":
        raise ValueError("not a Redfish ComputerSystem resource (no ProcessorSummary)")
    st = doc.get("Status") or {}
    return RedfishSystem(doc.get("HostName") or doc.get("Name", "?"), doc.get("Model", ""), doc.get("PowerState", ""),
                         st.get("Health", ""), st.get("HealthRollup", ""),
                         (doc.get("ProcessorSummary") or {}).get("Count"),
                         (doc.get("MemorySummary") or {}).get("TotalSystemMemoryGiB"))


@dataclass(frozen=True)
class RedfishProcessor:
    id: str
    type: str                    # CPU / GPU / FPGA / Accelerator …
    model: str
    manufacturer: str
    health: str
    state: str


def parse_processor(doc: dict) -> RedfishProcessor:
    if kind(doc) != "processor":
        raise ValueError("not a Redfish Processor resource (no ProcessorType)")
    return RedfishProcessor(doc.get("Id", "?"), doc.get("ProcessorType", ""), doc.get("Model", ""),
                            doc.get("Manufacturer", ""), *_status(doc))
