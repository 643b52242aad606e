"""Records and their JSON documents, without any hardware query: the lowest layer of ``results``.

``results`` adds what needs the machine (provenance from ``device.detect``); this module only shapes records into
tables and documents and writes them safely, so ``device`` itself can save its report without an import cycle.

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
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SCHEMA = 1
_PKG = Path(__file__).resolve().parents[1]          # the helpers package folder


def command_line() -> list[str]:
    """The command as typed: ``python -m helpers.wing.module …`` rather than the module's file path."""
    argv0 = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else Path("python")
    if argv0.suffix == ".py" and _PKG in argv0.parents:
        rel = argv0.relative_to(_PKG.parent).with_suffix("")
        mod = ".".join(rel.parts)
        if mod == "helpers.__main__":
            return ["python", "-m", "helpers", *sys.argv[1:]]
        return ["python", "-m", mod, *sys.argv[1:]]
    return [os.path.basename(sys.executable), *sys.argv]


def provenance_of(report: Any, command: Sequence[str] | None = None) -> dict[str, Any]:
    """Provenance from a ``device.DeviceReport`` already in hand (``results.provenance`` detects one)."""
    g = report.gpus[0] if report.gpus else None
    return {
        "command": " ".join(command if command is not None else command_line()),
        "host": socket.gethostname(),
        "date_utc": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "device": g.name if g else f"CPU: {report.cpu.model}",
        "gpu_count": len(report.gpus),
        "cpu": report.cpu.model,
        "cpu_cores_logical": report.cpu.cores_logical,
        "driver": report.driver_version,
        "cuda": report.torch_cuda,
        "torch": report.torch_version,
        "nccl": report.nccl_version,
        "cupy": report.cupy,
        "python": platform.python_version(),
        "os": report.os,
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


def document_of(records: Iterable[Any], kind: str, provenance: dict[str, Any], **meta: Any) -> dict[str, Any]:
    """The JSON document stored under assets/measurements/: schema, kind, provenance, records."""
    return {"schema": SCHEMA, "kind": kind, "provenance": provenance, **meta,
            "records": [to_dict(r) for r in records]}


def save(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``doc`` atomically: a fresh temporary file in the same folder (created exclusively, so no file or
    symlink of the user's is touched), renamed into place — a crash never leaves half a file. Refuses a path that
    is a device, FIFO, socket or one of the run's inputs, and creates no folder (``helpers.core.inputs``)."""
    from helpers.core import inputs

    path = Path(path)
    if not str(path) or path.is_dir():
        raise ValueError(f"--out {str(path)!r}: give a file name, not a folder or an empty string")
    inputs.check_output(path)                    # not a device/FIFO/socket, not one of the run's inputs
    if not path.parent.is_dir():
        raise inputs.BadInput(f"--out {str(path)!r}: its folder {str(path.parent)!r} does not exist; create it "
                              "first (no folder is created for an output)")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)            # mkstemp makes 0600; a result file is as readable as any other
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps(doc, indent=1, sort_keys=False) + "\n")
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return path


def add_output_args(ap: argparse.ArgumentParser) -> None:
    from helpers.core import cli

    ap.add_argument("--json", action="store_true", help="print records with provenance as JSON")
    ap.add_argument("--out", metavar="FILE", type=cli.out_file, help="also save the JSON document to FILE")
