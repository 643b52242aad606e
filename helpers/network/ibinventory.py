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
    """The inventory in ``path`` (a fabric.yaml; default: the book's sample fabric)."""
    from helpers.core import inputs

    where = path or ibparse.DATA / "fabric.yaml"
    doc = inputs.read_yaml(where, what="fabric inventory", max_bytes=16 * 2**20)     # safe_load, capped
    try:
        return _inventory(doc)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise inputs.BadInput(f"fabric inventory {str(where)!r} is not a fabric.yaml ({type(e).__name__}: {e}); "
                              "it needs switches, cas, uplinks, rate_Gbps and width like data/ib/fabric.yaml") from None


def _inventory(doc: dict) -> Inventory:
    sw = {s["name"]: s["lid"] for s in doc["switches"]}
    names = {s["lid"]: s["name"] for s in doc["switches"]}
    names.update({c["lid"]: f"{c['host']}/U{int(c['ca'].split('_')[-1]) + 1}" for c in doc["cas"]})
    peer = {(c["host"], c["ca"]): (c["leaf"], c["leaf_port"]) for c in doc["cas"]}
    up = {(sw[u["leaf"]], u["leaf_port"]): f"{u['leaf']}/P{u['leaf_port']} → {u['spine']}/P{u['spine_port']}"
          for u in doc["uplinks"]}
    return Inventory(names, peer, up, len(doc["switches"]), len(doc["cas"]), float(doc["rate_Gbps"]), doc["width"])


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
