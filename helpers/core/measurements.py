"""Recorded reference results (assets/measurements/), shown next to the reader's live ones.

Every file there was written by a helpers CLI with ``--out`` on the machine it names; nothing in it is typed by
hand. ``load("h200/transfer")`` returns the document; ``label(doc)`` says where and when it ran.
The appendix "Reference measurements" lists them all.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2] / "assets" / "measurements"


def available() -> list[str]:
    """Names (``"h200/transfer"``) of every recorded document."""
    return sorted(p.relative_to(ROOT).with_suffix("").as_posix() for p in ROOT.rglob("*.json"))


def load(name: str) -> dict[str, Any]:
    path = ROOT / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no recorded measurement {name!r} under {ROOT}; recorded: {available()}. "
                                "Record one with the helper's CLI and --out (see `make record-h200`).")
    doc = json.loads(path.read_text())
    for key in ("provenance", "records"):
        if key not in doc:
            raise ValueError(f"{path}: missing {key!r}; was it written by a helpers CLI with --out?")
    return doc


def label(doc: dict[str, Any]) -> str:
    """One line of provenance: device · driver · CUDA · torch · NCCL · date."""
    p = doc["provenance"]
    parts = [p.get("device", "?")]
    if p.get("driver"):
        parts.append(f"driver {p['driver']}")
    if p.get("cuda"):
        parts.append(f"CUDA {p['cuda']}")
    parts.append(f"torch {p.get('torch')}")
    if p.get("nccl"):
        parts.append(f"NCCL {p['nccl']}")
    parts.append(f"recorded {p.get('date_utc', '?')[:10]}")
    return " · ".join(parts)


def records(name: str, **where: Any) -> list[dict[str, Any]]:
    """The records of ``name`` whose fields equal every ``where`` item."""
    return [r for r in load(name)["records"] if all(r.get(k) == v for k, v in where.items())]


def side_by_side(live: list[dict], recorded: dict[str, Any], key: list[str], value: str,
                 live_label: str = "this machine"):
    """A table joining live and recorded records on ``key`` columns, one column of ``value`` each."""
    import pandas as pd

    rec_label = f"recorded: {recorded['provenance'].get('device', '?')}"
    a = pd.DataFrame(live)[key + [value]].rename(columns={value: f"{value} ({live_label})"}) if live else None
    b = pd.DataFrame(recorded["records"])[key + [value]].rename(columns={value: f"{value} ({rec_label})"})
    return b if a is None else a.merge(b, on=key, how="outer")
