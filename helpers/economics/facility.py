"""From GPUs to the building: facility power with PUE, rack density and cooling, and the carbon of a run (chapter 16).

* PUE (The Green Grid; ISO/IEC 30134-2) = total facility energy ÷ IT energy. Facility power = IT power × PUE.
* IT power of a cluster = servers × server power (GPUs + CPUs, memory, NICs, fans; the DGX system maximum, or the
  GPUs' draw × an overhead factor) + network switches.
* Racks needed = IT power ÷ power per rack (the cooling decides the density: air tens of kW, liquid 100+ kW).
* Carbon = energy × grid intensity (gCO₂/kWh, by region and year, from Ember); energy = IT energy × PUE.

The data (``data/facility.yaml``) names a source on every row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data" / "facility.yaml"


@lru_cache(maxsize=1)
def data() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def table(section: str):
    """A pandas table of one section: servers, racks, pue or grid."""
    import pandas as pd

    if section not in data():
        raise ValueError(f"section={section!r}: use one of {list(data())}")
    return pd.DataFrame(data()[section])


def server(name: str) -> dict:
    for s in data()["servers"]:
        if s["name"].lower() == name.lower():
            return s
    raise ValueError(f"server {name!r} is not in {DATA.name}: use one of {[s['name'] for s in data()['servers']]}")


def grid_intensity(region: str) -> dict:
    for g in data()["grid"]:
        if g["region"].lower() == region.lower():
            return g
    raise ValueError(f"region {region!r} is not in {DATA.name}: use one of {[g['region'] for g in data()['grid']]}")


@dataclass(frozen=True)
class FacilityPlan:
    n_gpus: int
    servers: int
    server: str
    it_power_kW: float
    pue: float
    facility_power_kW: float
    kW_per_rack: float
    racks: int
    annual_energy_MWh: float        # facility energy at the given average load
    annual_cost_usd: float


def plan(n_gpus: int, server_name: str = "DGX H100", pue: float = 1.3, kW_per_rack: float = 40.0,
         load: float = 0.8, switch_kW: float = 0.0, price_usd_per_kWh: float = 0.10) -> FacilityPlan:
    """Power, racks and the yearly energy bill of ``n_gpus`` in servers of ``server_name`` (its system maximum)."""
    if n_gpus < 1 or pue < 1 or not 0 < load <= 1 or kW_per_rack <= 0:
        raise ValueError(f"n_gpus={n_gpus} ≥ 1, pue={pue} ≥ 1 (1.0 is a perfect facility), 0 < load={load} ≤ 1 "
                         f"and kW_per_rack={kW_per_rack} > 0 are required")
    s = server(server_name)
    n_servers = math.ceil(n_gpus / s["gpus"])
    it = n_servers * s["system_max_kW"] + switch_kW
    fac = it * pue
    per_rack = max(1, math.floor(kW_per_rack / s["system_max_kW"]))     # a rack-scale system fills one rack
    racks = math.ceil(n_servers / per_rack)
    mwh = fac * load * 8760 / 1000
    return FacilityPlan(n_gpus, n_servers, s["name"], it, pue, fac, kW_per_rack, racks, mwh, mwh * 1000 * price_usd_per_kWh)


@dataclass(frozen=True)
class Carbon:
    energy_MWh: float
    region: str
    gCO2_per_kWh: float
    tCO2e: float
    source: str


def carbon(it_energy_MWh: float, pue: float, region: str, gCO2_per_kWh: float | None = None) -> Carbon:
    """Operational emissions of ``it_energy_MWh`` of IT energy in ``region``: IT energy × PUE × grid intensity
    (the table's value for the region, or ``gCO2_per_kWh`` when a study states its own)."""
    if it_energy_MWh < 0 or pue < 1 or (gCO2_per_kWh is not None and gCO2_per_kWh < 0):
        raise ValueError(f"it_energy_MWh={it_energy_MWh} must be ≥ 0, pue={pue} ≥ 1, gCO2_per_kWh ≥ 0")
    g = grid_intensity(region) if gCO2_per_kWh is None else dict(region=region, gCO2_per_kWh=gCO2_per_kWh,
                                                                  source="given by the caller")
    e = it_energy_MWh * pue
    return Carbon(e, g["region"], g["gCO2_per_kWh"], e * 1000 * g["gCO2_per_kWh"] / 1e6, g["source"])


def run_energy_MWh(gpu_hours: float, gpu_W: float, server_overhead: float = 1.5) -> float:
    """IT energy of a training run: GPU-hours × GPU power × (server power ÷ GPU power).

    A DGX H100 draws up to 10.2 kW for 8 × 700 W GPUs: an overhead factor of 10.2/5.6 ≈ 1.8 at the maximum."""
    if gpu_hours < 0 or gpu_W <= 0 or server_overhead < 1:
        raise ValueError(f"gpu_hours={gpu_hours} ≥ 0, gpu_W={gpu_W} > 0, server_overhead={server_overhead} ≥ 1")
    return gpu_hours * gpu_W * server_overhead / 1e6
