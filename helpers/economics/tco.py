"""Total cost of ownership of a GPU cluster and the cost of a GPU-hour bought or rented (chapter 21).

Per year, for N GPUs:

* capex         (servers + network + storage + installation) / depreciation years  (straight line);
* power         IT kW × PUE × 8 760 h × average load × price per kWh;
* facility      colocation or building cost per kW of IT per month × 12;
* staff         engineers × loaded cost per engineer;
* software and support as a fraction of capex per year.

The cost of a *useful* GPU-hour divides the yearly cost by N × 8 760 × utilisation: an idle GPU still depreciates.
Renting trades all of that for a price per GPU-hour (``prices()`` — a dated table with sources).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data"
HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True)
class TCOInputs:
    n_gpus: int = 1024
    server_usd: float = 300_000.0          # per 8-GPU server (the book's assumption: change it)
    gpus_per_server: int = 8
    network_frac: float = 0.15             # network as a fraction of server capex
    storage_frac: float = 0.05
    depreciation_years: float = 4.0
    server_kW: float = 10.2                # DGX H100 system maximum (facility.yaml)
    load: float = 0.8                      # average fraction of maximum power drawn
    pue: float = 1.3
    usd_per_kWh: float = 0.10
    facility_usd_per_kW_month: float = 150.0
    engineers: float = 6.0
    usd_per_engineer_year: float = 250_000.0
    software_frac_per_year: float = 0.03
    utilisation: float = 0.7               # fraction of GPU-hours doing useful work

    def __post_init__(self):
        bad = [f.name for f in fields(self) if getattr(self, f.name) < 0]
        if bad or self.n_gpus < 1 or self.depreciation_years <= 0 or self.pue < 1 or not 0 < self.utilisation <= 1:
            raise ValueError(f"bad TCO inputs {bad or ''}: need n_gpus ≥ 1, depreciation_years > 0, pue ≥ 1, "
                             f"0 < utilisation ≤ 1 and nothing negative (got {self})")


@dataclass(frozen=True)
class TCO:
    capex_usd: float
    capex_per_year_usd: float
    power_per_year_usd: float
    facility_per_year_usd: float
    staff_per_year_usd: float
    software_per_year_usd: float
    total_per_year_usd: float
    usd_per_gpu_hour: float                # per hour of the GPU's existence
    usd_per_useful_gpu_hour: float         # divided by utilisation


def tco(x: TCOInputs) -> TCO:
    servers = -(-x.n_gpus // x.gpus_per_server)
    capex = servers * x.server_usd * (1 + x.network_frac + x.storage_frac)
    it_kW = servers * x.server_kW
    power = it_kW * x.pue * HOURS_PER_YEAR * x.load * x.usd_per_kWh
    facility = it_kW * x.facility_usd_per_kW_month * 12
    staff = x.engineers * x.usd_per_engineer_year
    software = capex * x.software_frac_per_year
    per_year = capex / x.depreciation_years + power + facility + staff + software
    per_hour = per_year / (x.n_gpus * HOURS_PER_YEAR)
    return TCO(capex, capex / x.depreciation_years, power, facility, staff, software, per_year, per_hour,
               per_hour / x.utilisation)


def breakdown(x: TCOInputs) -> dict[str, float]:
    t = tco(x)
    return {"capex (depreciation)": t.capex_per_year_usd, "power × PUE": t.power_per_year_usd,
            "facility": t.facility_per_year_usd, "staff": t.staff_per_year_usd, "software": t.software_per_year_usd}


def sweep(x: TCOInputs, name: str, values) -> list[tuple[float, TCO]]:
    """TCO as one input varies (``name`` a field of TCOInputs)."""
    return [(v, tco(replace(x, **{name: v}))) for v in values]


@lru_cache(maxsize=1)
def _prices() -> tuple[dict, ...]:
    rows = tuple(yaml.safe_load((DATA / "prices.yaml").read_text(encoding="utf-8")))
    for r in rows:
        if not isinstance(r.get("provider_page"), bool):
            raise ValueError(f"prices.yaml row {r.get('offer')!r} lacks provider_page: true|false; add it "
                             "(true only when the price was read on the provider's own pricing page)")
    return rows


def prices():
    """The dated price table (pandas), one row per offer, with its source and ``provider_page`` (True when the
    price was read on the provider's own pricing page, False when a third party reported it or it is derived)."""
    import pandas as pd

    return pd.DataFrame(list(_prices()))


def checklist():
    import pandas as pd

    return pd.DataFrame(yaml.safe_load((DATA / "checklist.yaml").read_text(encoding="utf-8")))


def score(answers: dict[str, bool]) -> float:
    """Weighted share (0..1) of checklist items a provider meets; ``answers`` maps item text to True/False."""
    rows = checklist().to_dict("records")
    unknown = set(answers) - {r["item"] for r in rows}
    if unknown:
        raise ValueError(f"not checklist items: {sorted(unknown)}; the items are tco.checklist().item")
    total = sum(r["weight"] for r in rows)
    return sum(r["weight"] for r in rows if answers.get(r["item"], False)) / total


def breakeven_utilisation(x: TCOInputs, rent_usd_per_gpu_hour: float) -> float:
    """Utilisation above which owning is cheaper per useful GPU-hour than renting at the given price."""
    if rent_usd_per_gpu_hour <= 0:
        raise ValueError(f"rent_usd_per_gpu_hour={rent_usd_per_gpu_hour} must be > 0")
    return tco(x).usd_per_gpu_hour / rent_usd_per_gpu_hour
