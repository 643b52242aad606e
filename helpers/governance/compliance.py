"""GDPR and MLPS 2.0 (等保2.0) requirements mapped to the chapter's controls, from ``data/compliance.yaml`` (chapter 20).

Every row names the article or clause, its source, the control and the helper module that demonstrates it; ``table``
checks that each named module exists, so the map cannot point at a lab that is not there.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data" / "compliance.yaml"


def table():
    import pandas as pd

    rows = yaml.safe_load(DATA.read_text())
    for r in rows:
        if not r["source"].startswith("http"):
            raise ValueError(f"{DATA.name}: {r['framework']} {r['clause']} has no source URL")
        for mod in (m.strip() for m in r["lab"].split(",")):
            if importlib.util.find_spec(mod) is None:
                raise ValueError(f"{DATA.name}: {r['clause']} names lab {mod}, which does not exist")
    return pd.DataFrame(rows)
