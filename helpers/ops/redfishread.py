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
    return RedfishPower(ctl.get("PowerConsumedWatts"),
                        tuple(RedfishPSU(p.get("Name") or p.get("MemberId", "?"), *_status(p),
                                         p.get("PowerInputWatts"), p.get("LastPowerOutputWatts"))
                              for p in doc.get("PowerSupplies", [])))


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
