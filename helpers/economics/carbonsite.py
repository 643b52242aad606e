"""Grid intensity as an input: per site, or hour by hour, instead of one national average (chapter 16).

``helpers.economics.facility.carbon`` multiplies energy by a region's yearly average (Ember). A training run draws
from one site's grid, whose intensity can differ from the national figure and from hour to hour:

* :data:`SITES` — intensities published for the sites where known runs trained, with the run's energy and
  emissions as published (the energy figures already include the facility overhead, PUE, as the sources state);
* :func:`hourly` — emissions of an hourly IT-power series under an hourly intensity series, × PUE;
* :func:`check_national_average` — each site's published emissions predicted from its energy × the national
  average of ``facility.yaml`` (not the site's own figure), and the error that choice makes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helpers.economics import facility


@dataclass(frozen=True)
class Site:
    name: str
    region: str                  # a facility.yaml grid region (the national average compared with)
    gCO2_per_kWh: float          # the site's intensity as published
    run: str
    energy_MWh: float            # the run's energy as published (PUE included)
    tCO2e: float                 # the run's operational emissions as published
    source: str


SITES = {
    "jean-zay": Site("Jean Zay (IDRIS, France)", "France", 57.0, "BLOOM-176B training", 433.196, 24.69,
                     "Luccioni, Viguier & Ligozat 2022, 'Estimating the Carbon Footprint of BLOOM', arXiv:2211.02001: "
                     "433,196 kWh, French grid 57 gCO2eq/kWh, 24.69 t CO2eq from dynamic power consumption"),
    "gpt3-msft": Site("Microsoft data centre used for GPT-3 (US)", "United States", 429.0, "GPT-3 175B training",
                      1287.0, 552.0,
                      "Patterson et al. 2021, 'Carbon Emissions and Large Neural Network Training', arXiv:2104.10350, "
                      "Table 4: GPT-3 1,287 MWh (PUE 1.1 included), 429 gCO2e/kWh, 552 t CO2e"),
}


def hourly(it_kW, gCO2_per_kWh, pue: float = 1.0) -> float:
    """t CO2e of hourly IT power (kW, one value per hour) under an hourly grid intensity, × PUE."""
    p, g = np.asarray(it_kW, dtype=float), np.asarray(gCO2_per_kWh, dtype=float)
    if p.shape != g.shape or p.ndim != 1 or (p < 0).any() or (g < 0).any() or pue < 1:
        raise ValueError(f"it_kW and gCO2_per_kWh must be equal-length 1-D series ≥ 0 (got {p.shape}, {g.shape}) "
                         f"and pue={pue} ≥ 1")
    return float((p * pue * g).sum() / 1e6)


def site_carbon(it_energy_MWh: float, pue: float, site: str) -> facility.Carbon:
    """``facility.carbon`` with the site's published intensity instead of the national average."""
    if site not in SITES:
        raise ValueError(f"site={site!r}: use one of {sorted(SITES)} or pass gCO2_per_kWh to facility.carbon")
    s = SITES[site]
    return facility.carbon(it_energy_MWh, pue, s.region, gCO2_per_kWh=s.gCO2_per_kWh)


def check_national_average() -> list[dict]:
    """Each site's published emissions predicted from its published energy × the national yearly average."""
    rows = []
    for key, s in SITES.items():
        nat = facility.carbon(s.energy_MWh, 1.0, s.region)
        site = site_carbon(s.energy_MWh, 1.0, key)
        rows.append({"run": s.run, "site": s.name, "published_tCO2e": s.tCO2e,
                     "national_gCO2_per_kWh": nat.gCO2_per_kWh, "national_tCO2e": nat.tCO2e,
                     "national_error": nat.tCO2e / s.tCO2e - 1, "site_tCO2e": site.tCO2e,
                     "site_error": site.tCO2e / s.tCO2e - 1})
    return rows
