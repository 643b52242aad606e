"""Results with provenance: tables for notebooks, JSON for the record (every chapter that measures).

A measurement is a frozen dataclass with units in its field names (``time_s``, ``bw_GBps``). This module turns
a list of them into a pandas table, or into JSON that carries its provenance — the command, host, date,
device, driver and library versions — so that a number in the book can always be traced to where it ran.

    python -m helpers transfer --json                    # prints {"provenance": …, "records": […]}
    python -m helpers transfer --out assets/measurements/h200/transfer.json

Units legend (as in ml-engineering's benchmarks): 1 GB = 10^9 bytes, 1 GiB = 2^30 bytes, 1 GB/s = 10^9 B/s.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from typing import Any

from helpers.core import device
from helpers.core.records import SCHEMA, add_output_args, save, table, to_dict  # noqa: F401  (the callers' names)
from helpers.core.records import document_of, provenance_of


def provenance(command: Sequence[str] | None = None) -> dict[str, Any]:
    """Where and how a measurement ran. Detection is done once here, never typed by hand."""
    return provenance_of(device.detect(), command)


def document(records: Iterable[Any], kind: str, command: Sequence[str] | None = None,
             **meta: Any) -> dict[str, Any]:
    """The JSON document stored under assets/measurements/: schema, kind, provenance, records."""
    return document_of(records, kind, provenance(command), **meta)


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
