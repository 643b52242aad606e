"""The fabric inventory the InfiniBand diagnoser checks the tools against (chapter 03).

An :class:`Inventory` says what the fabric should be: the LID of every switch and HCA and its name, which leaf
port every HCA is cabled to, the parallel leaf-to-spine uplinks, and the width and rate every link should run at.
:func:`load_inventory` reads it from a ``fabric.yaml`` (default: the book's sample fabric, ``data/ib/fabric.yaml``);
:func:`infer_inventory` guesses the width and rate from a fabric's own output when there is no ``fabric.yaml``.
The rules that use it are in :mod:`helpers.network.ibrules`, the diagnosis in :mod:`helpers.network.ibdiag`.
"""
from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass
from pathlib import Path

from helpers.network import ibparse


@dataclass(frozen=True)
class Inventory:
    names: dict          # lid -> "leaf01" / "gpu04/U1"
    peer_leaf: dict      # (host, ca) -> (leaf, leaf_port)
    uplinks: dict        # (leaf_lid, port) -> "leaf01/P19 → spine02/P1"
    switches: int
    cas: int
    rate_Gbps: float
    width: str


def load_inventory(path: str | Path | None = None) -> Inventory:
    """The inventory in ``path`` (a fabric.yaml; default: the book's sample fabric). Every name must be a
    non-empty string, every LID and port a whole number ≥ 1, the rate a finite positive number."""
    from helpers.core import inputs

    where = path or ibparse.DATA / "fabric.yaml"
    doc = inputs.read_yaml(where, what="fabric inventory", max_bytes=16 * 2**20)     # safe_load, capped
    try:
        return _inventory(doc)
    except ValueError as e:                        # a value of the wrong kind (inputs.BadInput included)
        raise inputs.BadInput(f"fabric inventory {str(where)!r}: {e}; fix it (data/ib/fabric.yaml shows "
                              "the layout)") from None
    except (KeyError, TypeError, AttributeError, IndexError) as e:
        raise inputs.BadInput(f"fabric inventory {str(where)!r} is not a fabric.yaml ({type(e).__name__}: {e}); "
                              "it needs switches, cas, uplinks, rate_Gbps and width like data/ib/fabric.yaml") from None


def _name(row: dict, key: str, where: str) -> str:
    """A name (switch, host, HCA, leaf, width): a non-empty string."""
    v = row[key]
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"{where}: {key} {v!r} is not a name (give a non-empty string)")
    return v


def _int(row: dict, key: str, where: str) -> int:
    """A LID or port number: a whole number ≥ 1 (ASCII digits, finite: ``inputs.number``)."""
    from helpers.core import inputs
    return inputs.number(row[key], what=f"{where}: {key}", integer=True, allow_zero=False)


def _rows(doc: dict, key: str) -> list[tuple[str, dict]]:
    rows = doc[key]
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{key} is not a list of mappings (one '- {{...}}' per entry)")
    return [(f"{key}[{i}]", r) for i, r in enumerate(rows)]


def _inventory(doc: dict) -> Inventory:
    from helpers.core import inputs

    switches, cas, uplinks = _rows(doc, "switches"), _rows(doc, "cas"), _rows(doc, "uplinks")
    sw = {_name(s, "name", w): _int(s, "lid", w) for w, s in switches}
    names = {v: k for k, v in sw.items()}
    peer = {}
    for w, c in cas:
        unit = inputs.number(_name(c, "ca", w).split("_")[-1], what=f"{w}: ca (like mlx5_0)", integer=True)
        names[_int(c, "lid", w)] = f"{_name(c, 'host', w)}/U{unit + 1}"
        peer[(c["host"], c["ca"])] = (_name(c, "leaf", w), _int(c, "leaf_port", w))
    up = {(sw[_name(u, "leaf", w)], _int(u, "leaf_port", w)):
          f"{u['leaf']}/P{u['leaf_port']} → {_name(u, 'spine', w)}/P{_int(u, 'spine_port', w)}" for w, u in uplinks}
    rate = inputs.number(doc["rate_Gbps"], what="rate_Gbps", allow_zero=False)
    return Inventory(names, peer, up, len(switches), len(cas), float(rate), _name(doc, "width", "top level"))


def infer_inventory(snap: ibparse.Snapshot) -> Inventory:
    """An inventory from the fabric's own output, for a fabric without fabric.yaml: the expected width and rate
    are the most common ones among its active InfiniBand ports and links (an HDR fabric expects HDR). Switch
    counts, cabling and uplinks stay unknown, so the rules that need them are skipped."""
    ports = [p for p in snap.ib_ports if p.state == "Active"]
    links = [ln for ln in snap.links if ln.state == "Active" and ln.rate_Gbps]
    rate = majority([p.rate_Gbps for p in ports] + [ln.rate_Gbps for ln in links]) or 0.0
    width = majority([p.width for p in ports] + [ln.width for ln in links]) or "4X"
    return Inventory({}, {}, {}, 0, 0, float(rate), width)


def port_name(inv: Inventory, lid: int, port: int) -> str:
    """"leaf01/P19" for a port of a node the inventory names, "lid 7/P1" for any other."""
    return f"{inv.names.get(lid, f'lid {lid}')}/P{port}"


def majority(values):
    """The most common of ``values``, ignoring blanks ("", 0, None); None when nothing is left."""
    vals = [v for v in values if v not in ("", 0, None)]
    return Tally(vals).most_common(1)[0][0] if vals else None
