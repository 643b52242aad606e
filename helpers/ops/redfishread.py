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
    """thermal / power / system / processor, from ``@odata.type`` or, without it, from the keys present. A resource
    whose ``@odata.type`` names another schema is None: the ``ThermalSubsystem`` that OpenBMC (NVIDIA GH200/GB200) and
    Lenovo XCC serve beside or instead of ``Thermal`` links its ``Fans`` as an object, which the key test alone took
    for a Thermal resource and then failed to read."""
    t = str(doc.get("@odata.type", ""))
    if t:
        name = t.lstrip("#").split(".")[0]
        return {"Thermal": "thermal", "Power": "power", "ComputerSystem": "system", "Processor": "processor"}.get(name)
    if isinstance(doc.get("Temperatures"), list) or isinstance(doc.get("Fans"), list):
        return "thermal"
    if isinstance(doc.get("PowerSupplies"), list) or isinstance(doc.get("PowerControl"), list):
        return "power"
    if isinstance(doc.get("ProcessorSummary"), dict):
        return "system"
    if "ProcessorType" in doc:
        return "processor"
    return None


def _status(d: dict, what: str) -> tuple[str, str]:
    """(Health, State); "" where the BMC reports none (Lenovo XCC's GPU Processors carry no ``Status`` at all, and
    XCC prints ``"Health": null`` for a disabled sensor)."""
    st = d.get("Status")
    if st is None:
        return "", ""
    if not isinstance(st, dict):
        raise ValueError(f"{what}: Status is {type(st).__name__} {st!r:.40}, Redfish gives an object with Health/State")
    out = []
    for k in ("Health", "State"):
        v = st.get(k)
        if v is not None and not isinstance(v, str):
            raise ValueError(f"{what}: Status.{k} is {v!r:.40}, Redfish gives a string (OK / Warning / Critical; "
                             "Enabled / Absent / …)")
        out.append(v or "")
    return out[0], out[1]


def _members(doc: dict, key: str) -> list:
    v = doc.get(key)
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise ValueError(f"Redfish {key} is {type(v).__name__} {v!r:.60}, expected a list of objects")
    return v


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
    if not isinstance(doc, dict) or kind(doc) != "power":
        raise ValueError("not a Redfish Power resource (no PowerSupplies or PowerControl)")
    ctl = (_members(doc, "PowerControl") or [{}])[0]
    psus = _members(doc, "PowerSupplies")
    names = [str(p.get("Name") or p.get("MemberId", "?")) for p in psus]
    return RedfishPower(_first(ctl, "PowerConsumedWatts"),
                        tuple(RedfishPSU(_psu_name(p, n, names.count(n) > 1), *_status(p, f"power supply {n}"),
                                         _first(p, "PowerInputWatts"),
                                         _first(p, "PowerOutputWatts", "LastPowerOutputWatts"))
                              for p, n in zip(psus, names)))


def _first(d: dict, *keys) -> float | None:
    """The first of ``keys`` that is present and not null, as watts. Output is the measured ``PowerOutputWatts``
    (Power.v1_5_0) before ``LastPowerOutputWatts`` (the schema's "average power output"): iDRAC prints
    ``"LastPowerOutputWatts": null`` beside the reading, Supermicro only the former, iLO only the latter, and Lenovo
    XCC 635 W there against a measured 179 W out of 199 W in (tests/data/real/redfish/*-power.json). Supermicro
    leaves every reading of two supplies null: None, not 0."""
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
    if not isinstance(doc, dict) or kind(doc) != "system":
        raise ValueError("not a Redfish ComputerSystem resource (no ProcessorSummary)")
    name = str(doc.get("HostName") or doc.get("Name") or doc.get("Id", "?"))
    health, _ = _status(doc, f"system {name}")
    st = doc.get("Status") or {}
    rollup = st.get("HealthRollup") or ""          # Supermicro leaves it out
    if not isinstance(rollup, str):
        raise ValueError(f"system {name}: Status.HealthRollup is {rollup!r:.40}, Redfish gives a string")
    procs, mem = (_object(doc, k) for k in ("ProcessorSummary", "MemorySummary"))
    count = procs.get("Count")
    gib = mem.get("TotalSystemMemoryGiB")
    return RedfishSystem(name, doc.get("Model") or "", doc.get("PowerState") or "", health, rollup,
                         None if count is None else inputs.number(count, what="Redfish ProcessorSummary.Count",
                                                                  integer=True),
                         None if gib is None else inputs.number(gib, what="Redfish TotalSystemMemoryGiB",
                                                                integer=type(gib) is int))


def _object(doc: dict, key: str, what: str = "Redfish") -> dict:
    """``doc[key]`` as an object ({} when absent or null); anything else is refused, naming ``what`` and the key."""
    v = doc.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ValueError(f"{what}: {key} is {type(v).__name__} {v!r:.40}, Redfish gives an object")
    return v


@dataclass(frozen=True)
class RedfishProcessor:
    id: str
    type: str                    # CPU / GPU / FPGA / Accelerator …
    model: str
    manufacturer: str
    health: str
    state: str


def parse_processor(doc: dict) -> RedfishProcessor:
    """A CPU, or a GPU the BMC serves as a Processor: NVIDIA's HGX/GH200/GB200 BMCs (OpenBMC) under
    ``Systems/HGX_Baseboard_0/Processors/GPU_*`` with Status (and Model, but not on GB200), Lenovo XCC under
    ``Systems/1/Processors/GPU<n>``
    with neither (health and state "" = not reported, model ""; XCC names the card in its PCIeDevice instead)."""
    if not isinstance(doc, dict) or kind(doc) != "processor":
        raise ValueError("not a Redfish Processor resource (no ProcessorType)")
    pid = str(doc.get("Id") or doc.get("Name") or "?")
    return RedfishProcessor(pid, str(doc.get("ProcessorType") or ""), str(doc.get("Model") or ""),
                            str(doc.get("Manufacturer") or ""), *_status(doc, f"processor {pid}"))
