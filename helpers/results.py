"""Results with provenance: tables for notebooks, JSON for the record (every chapter that measures).

A measurement is a frozen dataclass with units in its field names (``time_s``, ``bw_GBps``). This module turns
a list of them into a pandas table, or into JSON that carries its provenance — the command, host, date,
device, driver and library versions — so that a number in the book can always be traced to where it ran.

    python -m helpers.transfer --json                    # prints {"provenance": …, "records": […]}
    python -m helpers.transfer --out assets/measurements/h200/transfer.json

Units legend (as in ml-engineering's benchmarks): 1 GB = 10^9 bytes, 1 GiB = 2^30 bytes, 1 GB/s = 10^9 B/s.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import json
import os
import platform
import socket
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SCHEMA = 1


def _command_line() -> list[str]:
    """The command as typed: ``python -m helpers.x …`` rather than the module's file path."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("python")
    if argv0.suffix == ".py" and argv0.parent.name == "helpers":
        return ["python", "-m", f"helpers.{argv0.stem}", *sys.argv[1:]]
    return [os.path.basename(sys.executable), *sys.argv]


def provenance(command: Sequence[str] | None = None) -> dict[str, Any]:
    """Where and how a measurement ran. Detection is done once here, never typed by hand."""
    from helpers import device

    rep = device.detect()
    g = rep.gpus[0] if rep.gpus else None
    return {
        "command": " ".join(command if command is not None else _command_line()),
        "host": socket.gethostname(),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "device": g.name if g else f"CPU: {rep.cpu.model}",
        "gpu_count": len(rep.gpus),
        "cpu": rep.cpu.model,
        "cpu_cores_logical": rep.cpu.cores_logical,
        "driver": rep.driver_version,
        "cuda": rep.torch_cuda,
        "torch": rep.torch_version,
        "nccl": rep.nccl_version,
        "cupy": rep.cupy,
        "python": platform.python_version(),
        "os": rep.os,
        "helpers_version": __import__("helpers").__version__,
    }


def to_dict(r: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(r):
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(r).items()}
    if isinstance(r, dict):
        return dict(r)
    raise TypeError(f"expected a dataclass or dict record, got {type(r).__name__}")


def table(records: Iterable[Any], columns: Sequence[str] | None = None):
    """A pandas DataFrame of records (dataclasses or dicts); ``columns`` picks and orders them."""
    import pandas as pd

    df = pd.DataFrame([to_dict(r) for r in records])
    return df[list(columns)] if columns is not None and len(df) else df


def document(records: Iterable[Any], kind: str, command: Sequence[str] | None = None,
             **meta: Any) -> dict[str, Any]:
    """The JSON document stored under assets/measurements/: schema, kind, provenance, records."""
    return {"schema": SCHEMA, "kind": kind, "provenance": provenance(command), **meta,
            "records": [to_dict(r) for r in records]}


def save(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``doc`` atomically (a temp file renamed into place: a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def add_output_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", action="store_true", help="print records with provenance as JSON")
    ap.add_argument("--out", metavar="FILE", help="also save the JSON document to FILE")


def emit(records: list[Any], kind: str, args: argparse.Namespace, columns: Sequence[str] | None = None,
         **meta: Any) -> dict[str, Any]:
    """CLI output: JSON (``--json``) or a table, plus ``--out FILE``. Returns the document."""
    doc = document(records, kind, **meta)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"# {kind} · {doc['provenance']['device']} · {doc['provenance']['date_utc']}")
        print(table(records, columns).to_string(index=False) if records else "(no records)")
    if args.out:
        save(doc, args.out)
    return doc
