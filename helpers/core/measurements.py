"""Recorded reference results (assets/measurements/), shown next to the reader's live ones.

Every file there was written by a helpers CLI with ``--out`` on the machine it names; nothing in it is typed by
hand. ``load("h200/transfer")`` returns the document; ``label(doc)`` says where and when it ran.
The appendix "Reference measurements" lists them all.

Honest labels: the H200 machine also records work that never touches its GPU (gloo collectives, DDP buckets and
tensor/pipeline mini-runs on CPU ranks, compression, file IO, data loading). ``ran_on(doc)`` reads the records
(backend, device) and the tool and says "H200 machine, host CPU" for those, "NVIDIA H200" only for GPU work.
A one-rank NCCL collective moves no data over any bus: ``load`` sets its ``busbw_GBps`` to None and says why in
``busbw_note`` (the file on disk is left as recorded).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2] / "assets" / "measurements"


def available() -> list[str]:
    """Names (``"h200/transfer"``) of every recorded document."""
    return sorted(p.relative_to(ROOT).with_suffix("").as_posix() for p in ROOT.rglob("*.json"))


# tools whose work runs on the host CPU whatever the machine has (data loading copies batches to the GPU at the
# end, but what it measures is the CPU-side pipeline)
HOST_CPU_KINDS = ("compress", "iobench", "dataload")
ONE_RANK_NOTE = "one rank: a collective over one GPU moves no data over any bus (busbw undefined)"


def _where(rec: dict[str, Any]) -> str | None:
    """'cpu', 'gpu' or None (the record does not say) from a record's backend / device fields."""
    be, dev = str(rec.get("backend") or "").lower(), str(rec.get("device") or "").lower()
    eng = str(rec.get("engine") or "").lower()
    if be == "gloo" or dev == "cpu" or eng in ("numpy", "torch-cpu") or eng.endswith("-cpu"):
        return "cpu"
    if be == "nccl" or dev.startswith(("cuda", "nvidia")) or eng == "cupy" or "cuda" in eng:
        return "gpu"
    return None


def ran_on(doc: dict[str, Any], records: list[dict[str, Any]] | None = None) -> str:
    """Where the work in ``doc`` (or only ``records`` of it) ran: "NVIDIA H200", "H200 machine, host CPU", or
    "NVIDIA H200 and its host CPU" when the records mix both. Never names a GPU for CPU work."""
    p = doc["provenance"]
    device = p.get("device") or "?"
    machine = f"{device.removeprefix('NVIDIA ').strip()} machine" if p.get("gpu_count") else (p.get("host") or device)
    recs = doc.get("records", []) if records is None else records
    kinds = {_where(r) for r in recs} - {None}
    if not kinds:
        kinds = {"cpu"} if doc.get("kind") in HOST_CPU_KINDS or not p.get("gpu_count") else {"gpu"}
    if kinds == {"cpu"}:
        return f"{machine}, host CPU" if p.get("gpu_count") else str(device)
    return device if kinds == {"gpu"} else f"{device} and its host CPU"


def load(name: str) -> dict[str, Any]:
    path = ROOT / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no recorded measurement {name!r} under {ROOT}; recorded: {available()}. "
                                "Record one with the helper's CLI and --out (see `make record-h200`).")
    doc = json.loads(path.read_text())
    for key in ("provenance", "records"):
        if key not in doc:
            raise ValueError(f"{path}: missing {key!r}; was it written by a helpers CLI with --out?")
    if doc.get("kind") == "collectives":
        for r in doc["records"]:
            if r.get("world_size") == 1 and r.get("busbw_GBps") is not None:
                r["busbw_GBps"], r["busbw_note"] = None, ONE_RANK_NOTE
    return doc


def label(doc: dict[str, Any], records: list[dict[str, Any]] | None = None) -> str:
    """One line of provenance: where it ran (``ran_on``) · driver · CUDA · torch · NCCL · date. For host-CPU
    work the CPU is named and the GPU driver, CUDA and NCCL are left out (they played no part)."""
    p = doc["provenance"]
    where = ran_on(doc, records)
    parts = [where]
    if where.endswith(", host CPU"):
        if p.get("cpu"):
            parts.append(f"{p['cpu']}, {p.get('cpu_cores_logical', '?')} logical cores")
    else:
        if p.get("driver"):
            parts.append(f"driver {p['driver']}")
        if p.get("cuda"):
            parts.append(f"CUDA {p['cuda']}")
    parts.append(f"torch {p.get('torch')}")
    if p.get("nccl") and not where.endswith(", host CPU"):
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

    rec_label = f"recorded: {ran_on(recorded)}"
    a = pd.DataFrame(live)[key + [value]].rename(columns={value: f"{value} ({live_label})"}) if live else None
    b = pd.DataFrame(recorded["records"])[key + [value]].rename(columns={value: f"{value} ({rec_label})"})
    return b if a is None else a.merge(b, on=key, how="outer")
